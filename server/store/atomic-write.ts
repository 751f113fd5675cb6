/**
 * Durable atomic replacement of a file: temp file in the same folder, write, fsync, rename over
 * the target, fsync the folder. Readers see the old bytes or the new bytes, never a mix, and a
 * crash at any point leaves one of the two on disk.
 */
import { randomBytes } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';

export interface AtomicWriteOptions {
  /** Mode of a newly created file (an existing file's mode is kept). */
  readonly defaultMode?: number;
}

/**
 * Replaces `target` with `contents`. When `target` is a symlink to a regular file, that file is
 * replaced and the link is kept; a symlink to anything else is itself replaced. Creates the
 * parent folder (one level, e.g. `.ideai/`) when absent.
 */
export async function writeFileAtomic(target: string, contents: string, options: AtomicWriteOptions = {}): Promise<void> {
  const realTarget = await resolveTarget(target);
  const folder = path.dirname(realTarget);
  await fs.mkdir(folder, { recursive: false }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const mode = await fs
    .stat(realTarget)
    // Only a regular file's mode is kept (not that of a FIFO or a device the file was replaced by).
    .then((stats) => (stats.isFile() ? stats.mode & 0o7777 : (options.defaultMode ?? 0o644)))
    .catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return options.defaultMode ?? 0o644;
      throw error;
    });
  const temp = path.join(folder, `.${path.basename(realTarget)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, mode);
  try {
    try {
      await handle.writeFile(contents, 'utf8');
      await handle.chmod(mode); // the umask may have narrowed the mode given to open()
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, realTarget);
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncFolder(folder);
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
