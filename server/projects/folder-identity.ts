/**
 * What tells one project folder from another made later under the same path
 * (docs/design.md#approvals-grants-and-time, "A grant belongs to its folder"): its real path, device, inode and birth time. ext4 gives a new
 * folder the inode number of one just deleted, so the inode alone does not tell them apart.
 */
import { promises as fs } from 'node:fs';

/** The identity of the folder at `root` now, or undefined when there is no folder there. */
export async function folderIdentity(root: string): Promise<string | undefined> {
  try {
    const [real, stats] = await Promise.all([fs.realpath(root), fs.stat(root, { bigint: true })]);
    if (!stats.isDirectory()) return undefined;
    return `${real}\u0000${stats.dev}:${stats.ino}:${stats.birthtimeNs}`;
  } catch {
    return undefined;
  }
}
