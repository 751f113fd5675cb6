/**
 * Durable atomic replacement of a file: temp file in the same folder, write, fsync, rename over
 * the target, fsync the folder. Readers see the old bytes or the new bytes, never a mix, and a
 * crash at any point leaves one of the two on disk. A write that fails leaves the old file: when
 * the folder's fsync fails after the rename, the old file (kept under a second name, or copied) is
 * put back, unless another writer's file has replaced ours meanwhile (then the caller re-reads).
 * The caller may refuse the rename at the last moment (`replaceOnlyIf`): the check and the rename
 * then run synchronously, back to back.
 */
import { randomBytes } from 'node:crypto';
import { constants, promises as fs, renameSync } from 'node:fs';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** Mode of a newly created file (an existing file's mode is kept, made readable and writable by its owner). */
  readonly defaultMode?: number;
  /**
   * Called right before the rename with the file about to be replaced; `false` refuses the write
   * ({@link TargetChangedError}, nothing changed). Synchronous, so that nothing runs in between.
   */
  readonly replaceOnlyIf?: (realTarget: string) => boolean;
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
  const realTarget = await resolveTarget(target);
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
  const temp = tempPathFor(realTarget);
  let previous: Previous = NO_FILE;
  let written: WrittenFile;
  try {
    written = await createDurably(temp, contents, mode);
    // Before the rename, so that it can be undone (when the old file can be kept, see keepPrevious).
    previous = await keepPrevious(realTarget);
    if (options.replaceOnlyIf !== undefined && !options.replaceOnlyIf(realTarget)) throw new TargetChangedError(realTarget);
    renameSync(temp, realTarget);
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    await dropPrevious(previous);
    throw error;
  }
  try {
    await syncFolder(folder);
    return written;
  } catch (error) {
    // Renamed but not durable: a failed write must change nothing (docs/api.md §5), so the old file (or
    // no file) is put back before failing. Should that fail too, nobody can say what is on disk.
    throw (await undoRename(realTarget, previous, written)) ? error : new WriteOutcomeUnknownError(error);
  } finally {
    await dropPrevious(previous);
  }
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

/** `.<name>.<pid>.<random>.tmp` next to the target (the same folder, so rename is atomic). */
function tempPathFor(realTarget: string): string {
  return path.join(path.dirname(realTarget), `.${path.basename(realTarget)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
}

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
  if (previous.kind === 'kept') await fs.rm(previous.path, { force: true }).catch(() => undefined);
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
