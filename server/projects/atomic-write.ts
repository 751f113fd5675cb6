/**
 * Durable atomic replacement of a file: temp file in the same folder, write, fsync, then into place,
 * fsync the folder. Readers see the old bytes or the new bytes, never a mix, and a crash at any
 * point leaves one of the two on disk (or, in the microseconds of a compare-and-swap, the old one
 * under a second name that the next read puts back: see recovery.ts). A write that fails leaves
 * the old file: when the folder's fsync fails, the old file (kept under a second name, or copied)
 * is put back, unless another writer's file has replaced ours meanwhile (then the caller re-reads).
 *
 * With `expect`, the write is a compare-and-swap (docs/design.md#writes-a-compare-and-swap-on-the-file): the file at the
 * target is renamed aside, compared with what the caller read, and the new file is `link()`ed into
 * the then empty name. A save that lands before the rename aside is what is compared (and put
 * back); one that lands after it takes the empty name first, so the `link()` fails with `EEXIST`.
 * Either way the other writer's file stays and the write is refused ({@link TargetChangedError}).
 */
import { randomBytes } from 'node:crypto';
import fsSync, { constants, promises as fs } from 'node:fs';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** Mode of a newly created file (an existing file's mode is kept, made readable and writable by its owner). */
  readonly defaultMode?: number;
  /**
   * Called right before the rename with the file about to be replaced; `false` refuses the write
   * ({@link TargetChangedError}, nothing changed). Synchronous, so that nothing runs in between.
   */
  readonly replaceOnlyIf?: (realTarget: string) => boolean;
  /**
   * Makes the write a compare-and-swap: told the file moved aside from the target (undefined when
   * there was none), it answers whether that is the file the caller read; `false` puts it back and
   * refuses the write. Synchronous. A symlink at the target is then replaced itself, never followed.
   */
  readonly expect?: (movedAside: string | undefined) => boolean;
}

/** The write was refused by `replaceOnlyIf`: nothing was changed. */
export class TargetChangedError extends Error {
  constructor(readonly target: string) {
    super(`${target} is not what it was when the write started`);
    this.name = 'TargetChangedError';
  }
}

/**
 * Replaces `target` with `contents`. When `target` is a symlink to a regular file, that file is
 * replaced and the link is kept; a symlink to anything else is itself replaced. Creates the
 * parent folder (one level, e.g. `.ideai/`) when absent.
 */
export async function writeFileAtomic(target: string, contents: string, options: AtomicWriteOptions = {}): Promise<WrittenFile> {
  const realTarget = options.expect === undefined ? await resolveTarget(target) : target;
  const folder = path.dirname(realTarget);
  const createdFolder = await fs.mkdir(folder, { recursive: false }).then(
    () => true,
    (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      return false;
    },
  );
  try {
    const written = await replaceFile(realTarget, contents, options);
    if (createdFolder) {
      // A folder made for this write is durable once its own parent is synced; if that fails,
      // the write is undone like any other (the file removed, then the folder below).
      await syncFolder(path.dirname(folder)).catch(async (error: unknown) => {
        throw (await undoRename(realTarget, NO_FILE, written)) ? error : new WriteOutcomeUnknownError(error);
      });
    }
    return written;
  } catch (error) {
    // A failed write leaves no folder it made (rmdir removes it only if empty).
    if (createdFolder) await fs.rmdir(folder).catch(() => undefined);
    throw error;
  }
}

/** The file a write renamed into place, told apart from any later one by its inode (bigint: no precision lost). */
export interface WrittenFile {
  readonly dev: bigint;
  readonly ino: bigint;
}

async function replaceFile(realTarget: string, contents: string, options: AtomicWriteOptions): Promise<WrittenFile> {
  const folder = path.dirname(realTarget);
  const mode = await fs
    .stat(realTarget)
    // Only a regular file's mode is kept (not that of a FIFO or a device the file was replaced by).
    // Owner read and write are added: a repair of a file of mode 000 must leave one the service can read.
    .then((stats) => (stats.isFile() ? (stats.mode & 0o7777) | 0o600 : (options.defaultMode ?? 0o644)))
    .catch((error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return options.defaultMode ?? 0o644;
      throw error;
    });
  if (options.expect !== undefined) return swapFile(realTarget, contents, mode, options.expect, options.replaceOnlyIf);
  const temp = tempPathFor(realTarget);
  let previous: Previous = NO_FILE;
  let written: WrittenFile;
  try {
    written = await createDurably(temp, contents, mode);
    // Before the rename, so that it can be undone (when the old file can be kept, see keepPrevious).
    previous = await keepPrevious(realTarget);
    if (options.replaceOnlyIf !== undefined && !options.replaceOnlyIf(realTarget)) throw new TargetChangedError(realTarget);
    fsSync.renameSync(temp, realTarget);
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    await dropPrevious(previous);
    throw error;
  }
  try {
    await syncFolder(folder);
    return written;
  } catch (error) {
    // Renamed but not durable: a failed write must change nothing (docs/api.md#http-api), so the old file (or
    // no file) is put back before failing. Should that fail too, nobody can say what is on disk.
    throw (await undoRename(realTarget, previous, written)) ? error : new WriteOutcomeUnknownError(error);
  } finally {
    await dropPrevious(previous);
  }
}

/**
 * The compare-and-swap (see the module's comment). The rename aside, the comparison and the
 * `link()` are synchronous and back to back, so the name is empty for microseconds, and no read of
 * this service's own runs in between (its reloads also wait for the folder's write lock).
 */
async function swapFile(
  realTarget: string,
  contents: string,
  mode: number,
  expect: (movedAside: string | undefined) => boolean,
  replaceOnlyIf: ((realTarget: string) => boolean) | undefined,
): Promise<WrittenFile> {
  const temp = tempPathFor(realTarget);
  let previous: Previous = NO_FILE;
  let written: WrittenFile;
  try {
    written = await createDurably(temp, contents, mode);
    if (replaceOnlyIf !== undefined && !replaceOnlyIf(realTarget)) throw new TargetChangedError(realTarget);
    previous = moveAside(realTarget);
    if (!expect(previous.kind === 'kept' ? previous.path : undefined)) {
      putBack(realTarget, previous);
      previous = NO_FILE;
      throw new TargetChangedError(realTarget);
    }
    try {
      linkIntoPlace(temp, realTarget);
    } catch (error) {
      // EEXIST: a file came to the empty name; it is newer than what was read, so it stays and the old one goes.
      if (codeOf(error) === 'EEXIST') throw new TargetChangedError(realTarget);
      putBack(realTarget, previous);
      previous = NO_FILE;
      throw error;
    }
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    await dropPrevious(previous);
    throw error;
  }
  // The temp name is a second link to the new file; a crash before this unlink leaves it for the stale-file cleanup.
  await fs.rm(temp, { force: true }).catch(() => undefined);
  try {
    await syncFolder(path.dirname(realTarget));
    return written;
  } catch (error) {
    throw (await undoRename(realTarget, previous, written)) ? error : new WriteOutcomeUnknownError(error);
  } finally {
    await dropPrevious(previous);
  }
}

const codeOf = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code;

/** Aside files of this process's writes under way: recovery.ts never takes one of them for a leftover. */
const asidesInFlight = new Set<string>();

/** Whether `file` is the aside file of a write of this process that is still under way. */
export const isAsideInFlight = (file: string): boolean => asidesInFlight.has(file);

/** Renames what is at `realTarget` to an aside name (nothing there: NO_FILE). */
function moveAside(realTarget: string): Previous {
  const aside = asidePathFor(realTarget);
  asidesInFlight.add(aside);
  try {
    fsSync.renameSync(realTarget, aside);
    return { kind: 'kept', path: aside };
  } catch (error) {
    asidesInFlight.delete(aside);
    if (codeOf(error) === 'ENOENT') return NO_FILE;
    throw error;
  }
}

/** Links the new file into the empty name; on a file system without hard links, a rename into it if it is still empty. */
function linkIntoPlace(temp: string, realTarget: string): void {
  try {
    fsSync.linkSync(temp, realTarget);
  } catch (error) {
    const code = codeOf(error);
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    // No atomic "create only if absent" there: the window is the few microseconds between the two calls.
    if (fsSync.existsSync(realTarget)) throw Object.assign(new Error(`${realTarget} exists`), { code: 'EEXIST' });
    fsSync.renameSync(temp, realTarget);
  }
}

/** Puts the file moved aside back, unless a newer one took the name meanwhile (then the moved one is dropped). */
function putBack(realTarget: string, previous: Previous): void {
  if (previous.kind !== 'kept') return;
  try {
    fsSync.linkSync(previous.path, realTarget);
  } catch (error) {
    if (codeOf(error) !== 'EEXIST') {
      // No hard links on this file system: rename back, only into an empty name.
      if (!fsSync.existsSync(realTarget)) fsSync.renameSync(previous.path, realTarget);
    }
  }
  fsSync.rmSync(previous.path, { force: true });
  asidesInFlight.delete(previous.path);
}

/** Creates `file` (which must not exist) with `data` and `mode`, fsynced; returns its identity. */
async function createDurably(file: string, data: string | Buffer, mode: number): Promise<WrittenFile> {
  const handle = await fs.open(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, mode);
  try {
    await handle.writeFile(data);
    await handle.chmod(mode); // the umask may have narrowed the mode given to open()
    await handle.sync();
    const { dev, ino } = await handle.stat({ bigint: true });
    return { dev, ino };
  } finally {
    await handle.close();
  }
}

/**
 * A write that may have taken effect: its new file was renamed into place, could not be made
 * durable, and could not be taken back (or another file has replaced it since). The caller must
 * re-read the file.
 */
export class WriteOutcomeUnknownError extends Error {
  constructor(readonly failure: unknown) {
    super(`the new file was renamed into place but not made durable, and could not be taken back (${(failure as Error).message})`);
    this.name = 'WriteOutcomeUnknownError';
  }
}

/** `.<name>.<pid>.<random>.tmp` next to the target (the same folder, so rename is atomic); see {@link SERVICE_TEMP_FILE}. */
function tempPathFor(realTarget: string): string {
  return path.join(path.dirname(realTarget), `.${path.basename(realTarget)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

/** `.<name>.<pid>.<random>.aside`: the file a compare-and-swap moved aside, for microseconds. */
function asidePathFor(realTarget: string): string {
  return path.join(path.dirname(realTarget), `.${path.basename(realTarget)}.${process.pid}.${randomBytes(6).toString('hex')}.aside`);
}

/** The names of this service's temp and aside files: `.<name>.<pid>.<12 hex>.(tmp|aside)`; group 1 is `<name>`, 2 the kind. */
export const SERVICE_TEMP_FILE = /^\.(.+)\.[0-9]+\.[0-9a-f]{12}\.(tmp|aside)$/;

/** What was at the target before the rename: nothing, a second copy or name of it, or something not kept. */
type Previous = { readonly kind: 'none' } | { readonly kind: 'kept'; readonly path: string } | { readonly kind: 'not-kept' };
const NO_FILE: Previous = { kind: 'none' };

/**
 * Keeps what is at the target under another name, for an undo: a hard link, or else a durable copy
 * (another owner's file under `fs.protected_hardlinks`, a file system without links). What can be
 * neither (a file the service may not read: the repair of an unreadable file must still be
 * possible; a FIFO or a device, never read) is not kept: that write goes ahead without an undo.
 */
async function keepPrevious(realTarget: string): Promise<Previous> {
  const kept = tempPathFor(realTarget);
  try {
    await fs.link(realTarget, kept);
    return { kind: 'kept', path: kept };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return NO_FILE;
  }
  try {
    await copyDurably(realTarget, kept);
    return { kind: 'kept', path: kept };
  } catch (error) {
    await fs.rm(kept, { force: true }).catch(() => undefined);
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return NO_FILE;
    return { kind: 'not-kept' };
  }
}

/** Copies a regular file (never opened blocking, never through a link) and fsyncs the copy. */
async function copyDurably(source: string, copy: string): Promise<void> {
  const input = await fs.open(source, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const stats = await input.stat();
    if (!stats.isFile()) throw Object.assign(new Error(`${source} is not a regular file`), { code: 'EINVAL' });
    await createDurably(copy, await input.readFile(), stats.mode & 0o7777);
  } finally {
    await input.close();
  }
}

async function dropPrevious(previous: Previous): Promise<void> {
  if (previous.kind !== 'kept') return;
  await fs.rm(previous.path, { force: true }).catch(() => undefined);
  asidesInFlight.delete(previous.path);
}

/**
 * Puts back what was at the target before `written` was renamed over it, durably; false when
 * that cannot be done, or when `written` is no longer there (a newer file from another writer is
 * never replaced by an older one).
 */
async function undoRename(realTarget: string, previous: Previous, written: WrittenFile): Promise<boolean> {
  try {
    // Another writer can still rename its file in between this check and the undo: Node has no
    // renameat2(RENAME_EXCHANGE) to close that window; it is a few microseconds, after a failed fsync.
    const current = await fs.lstat(realTarget, { bigint: true });
    if (current.dev !== written.dev || current.ino !== written.ino || previous.kind === 'not-kept') return false;
    if (previous.kind === 'none') await fs.rm(realTarget, { force: true });
    else await fs.rename(previous.path, realTarget);
    await syncFolder(path.dirname(realTarget));
    return true;
  } catch {
    return false;
  }
}

async function resolveTarget(target: string): Promise<string> {
  try {
    const stats = await fs.lstat(target);
    if (!stats.isSymbolicLink()) return target;
    // Only a link to a regular file is written through; a link to a device (`/dev/zero`), a FIFO,
    // a folder or nothing is replaced itself, never what it points at.
    const real = await fs.realpath(target).catch(() => undefined);
    if (real === undefined) return target;
    return (await fs.stat(real)).isFile() ? real : target;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return target;
    throw error;
  }
}

async function syncFolder(folder: string): Promise<void> {
  const handle = await fs.open(folder, constants.O_RDONLY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
