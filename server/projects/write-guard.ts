/**
 * What an API write read, and the comparison of the file its compare-and-swap moved aside with
 * that: an editor's save or a `git checkout` that lands while the write prepares its file is never
 * replaced by it (docs/api.md#resolving-a-decision, docs/design.md#writes-a-compare-and-swap-on-the-file).
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, promises as fs, readSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { codeOf, identityOf, isAbsence, isInside, problemOf, type FileRead } from './file-read.js';

/** The policy file as the write read it: absent, or one file (with its bytes when it could be read). */
export type ReadSnapshot = { readonly kind: 'absent' } | { readonly kind: 'file'; readonly identity: string; readonly bytes?: Buffer };

/** The snapshot of what `read` saw; for a file that could not be read (no permission: a repair), its identity from a stat. */
export async function snapshotOf(file: string, read: FileRead): Promise<ReadSnapshot> {
  if (read.ok) return { kind: 'file', identity: read.identity, bytes: read.bytes };
  if (isAbsence(read.code)) return { kind: 'absent' };
  try {
    return { kind: 'file', identity: identityOf(await fs.stat(file, { bigint: true })) };
  } catch (error) {
    // Gone since: the check before the rename compares with that.
    if (isAbsence(codeOf(error))) return { kind: 'absent' };
    throw error;
  }
}

/** Whether the file a compare-and-swap moved aside (undefined: there was none) is what `snapshot` describes (synchronous). */
export function matchesSnapshot(movedAside: string | undefined, snapshot: ReadSnapshot): boolean {
  if (movedAside === undefined) return snapshot.kind === 'absent';
  return snapshot.kind === 'file' && stillAsRead(movedAside, snapshot);
}

/** Whether `file` is still what `snapshot` describes (synchronous: see the module's comment). */
export function stillAsRead(file: string, snapshot: ReadSnapshot): boolean {
  if (snapshot.kind === 'absent') {
    try {
      statSync(file);
      return false;
    } catch (error) {
      return isAbsence(codeOf(error));
    }
  }
  if (snapshot.bytes === undefined) {
    try {
      return identityOf(statSync(file, { bigint: true })) === snapshot.identity;
    } catch {
      return false;
    }
  }
  // Same inode, size and mtime are not enough: timestamps are coarse, so an in-place rewrite of the same size can keep them.
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    const stats = fstatSync(fd, { bigint: true });
    if (problemOf(stats) !== undefined || identityOf(stats) !== snapshot.identity) return false;
    const bytes = Buffer.alloc(snapshot.bytes.length + 1);
    let filled = 0;
    for (let read = -1; read !== 0 && filled < bytes.length; filled += read)
      read = readSync(fd, bytes, filled, bytes.length - filled, filled);
    return filled === snapshot.bytes.length && snapshot.bytes.equals(bytes.subarray(0, filled));
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Whether the folder a write renames into (`realTarget`'s) is inside the project (`.ideai` may be a link, within it only). */
export function insideProject(root: string, realTarget: string): boolean {
  try {
    const ideai = path.join(root, '.ideai');
    if (!lstatSync(ideai).isSymbolicLink() && path.dirname(realTarget) === ideai) return true;
    return isInside(realpathSync.native(root), realpathSync.native(path.dirname(realTarget)));
  } catch {
    return false;
  }
}
