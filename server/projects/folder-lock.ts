/**
 * Writes to one policy file are serialized on the real folder that holds it, whatever project id,
 * path or link they come through: a folder reachable under two project ids (a symlink in the
 * projects root, two ids for one folder in PDP_PROJECTS) is one file, and no acknowledged write
 * may be lost to another one's read-modify-write (docs/api.md#resolving-a-decision).
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';

const tails = new Map<string, Promise<unknown>>();

/** The real path of `root`'s `.ideai` folder, or where it would be created (its parent's real path). */
export async function writeFolderKey(root: string): Promise<string> {
  const ideai = path.join(root, '.ideai');
  try {
    return await fs.realpath(ideai);
  } catch {
    const realRoot = await fs.realpath(root).catch(() => path.resolve(root));
    return path.join(realRoot, '.ideai');
  }
}

/** Runs `task` once every task queued before it on the same key has settled. */
export function serializedOn<T>(key: string, task: () => Promise<T>): Promise<T> {
  const run = (tails.get(key) ?? Promise.resolve()).then(task, task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, tail);
  // The map keeps only keys with a task queued or running.
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}
