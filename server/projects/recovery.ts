/**
 * What a write killed half-way leaves in `.ideai`, and putting it right (docs/design.md#writes-a-compare-and-swap-on-the-file).
 * A compare-and-swap (atomic-write.ts) leaves the name empty for microseconds, with the old file
 * under an aside name: a crash then leaves no policy file, and the built-in defaults must not apply
 * to a project that has one, so the next read links the aside file back first. Other leftovers
 * (a temp file of a write killed before its swap, an aside file of one killed after it) are removed
 * once they are old enough to belong to no write still running. Only this service's own names
 * (atomic-write.ts, SERVICE_TEMP_FILE) are ever touched.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { SERVICE_TEMP_FILE, isAsideInFlight } from './atomic-write.js';

/** A write takes milliseconds; a temp file written a minute ago belongs to a write that died (kill -9, power loss). */
export const STALE_TEMP_MS = 60_000;
/** An aside file lives for one folder fsync (~12 ms here); one 5 s old, its file back in place, is a leftover. */
export const STALE_ASIDE_MS = 5_000;

interface ServiceFile {
  readonly file: string;
  readonly kind: 'tmp' | 'aside';
  /** Since when it is what it is: a temp file's write (mtime), an aside file's rename (ctime). */
  readonly sinceMs: number;
}

/** This service's temp and aside files of `name` in `folder`, never one of a write under way. */
async function serviceFiles(folder: string, name: string): Promise<ServiceFile[]> {
  let entries: string[];
  try {
    entries = await fs.readdir(folder);
  } catch {
    return [];
  }
  const found: ServiceFile[] = [];
  for (const entry of entries) {
    const match = SERVICE_TEMP_FILE.exec(entry);
    if (match?.[1] !== name) continue;
    const file = path.join(folder, entry);
    if (isAsideInFlight(file)) continue;
    const stats = await fs.lstat(file).catch(() => undefined);
    if (stats?.isFile() !== true) continue;
    const kind = match[2] === 'aside' ? 'aside' : 'tmp';
    found.push({ file, kind, sinceMs: kind === 'aside' ? stats.ctimeMs : stats.mtimeMs });
  }
  return found;
}

/**
 * When `target` is missing and a write moved it aside and died before putting its new file in
 * place, links the latest aside file back (a file that took the name since is kept) and removes
 * the aside files. True when something was put back. Never throws.
 */
export async function restoreMovedAside(target: string): Promise<boolean> {
  const asides = (await serviceFiles(path.dirname(target), path.basename(target))).filter(({ kind }) => kind === 'aside');
  const latest = asides.sort((a, b) => b.sinceMs - a.sinceMs)[0];
  if (latest === undefined) return false;
  try {
    await fs.link(latest.file, target);
  } catch {
    // EEXIST: a file took the name since, and it is newer; anything else: the next read tries again.
    return false;
  }
  for (const { file } of asides) await fs.rm(file, { force: true }).catch(() => undefined);
  return true;
}

/**
 * Puts back a policy file a dead write left aside, then removes this service's leftover temp and
 * aside files of `name` in `folder` once they are old enough ({@link STALE_TEMP_MS},
 * {@link STALE_ASIDE_MS}). Returns what was removed, and in how many ms the youngest leftover will
 * be old enough (undefined: none left). Never throws.
 */
export async function removeStaleTemps(
  folder: string,
  name: string,
  now = Date.now(),
): Promise<{ removed: string[]; nextCheckMs: number | undefined }> {
  const target = path.join(folder, name);
  const targetMissing = await fs.lstat(target).then(
    () => false,
    () => true,
  );
  if (targetMissing) await restoreMovedAside(target);
  const removed: string[] = [];
  let nextCheckMs: number | undefined;
  for (const { file, kind, sinceMs } of await serviceFiles(folder, name)) {
    const left = (kind === 'aside' ? STALE_ASIDE_MS : STALE_TEMP_MS) - (now - sinceMs);
    if (left > 0) {
      nextCheckMs = Math.min(nextCheckMs ?? Infinity, left + 10);
      continue;
    }
    await fs.rm(file, { force: true }).then(
      () => removed.push(file),
      () => undefined,
    );
  }
  return { removed, nextCheckMs };
}
