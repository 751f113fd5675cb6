/**
 * What tells one project folder from another made later under the same path
 * (docs/design.md#approvals-grants-and-time, "A grant belongs to its folder"): its real path,
 * device, inode and birth time. ext4 gives a new folder the inode number of one just deleted, so
 * the inode alone does not tell them apart.
 */
import { promises as fs } from 'node:fs';

/** What {@link folderIdentity} answers when the path cannot be checked (no permission, EMFILE, EIO, a link loop). */
export const FOLDER_UNREADABLE = Symbol('folder unreadable');

/**
 * The identity of the folder at `root` now, undefined when there is no folder there, or
 * {@link FOLDER_UNREADABLE} when that cannot be told: a failed check is not a folder gone.
 */
export async function folderIdentity(root: string): Promise<string | undefined | typeof FOLDER_UNREADABLE> {
  try {
    const [real, stats] = await Promise.all([fs.realpath(root), fs.stat(root, { bigint: true })]);
    if (!stats.isDirectory()) return undefined;
    return `${real}\u0000${stats.dev}:${stats.ino}:${stats.birthtimeNs}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? undefined : FOLDER_UNREADABLE;
  }
}
