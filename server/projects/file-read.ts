/**
 * Reading a project's two files, each as one consistent snapshot: its bytes and the fingerprint of
 * the very file read (its fstat), or why it could not be read. Only a regular file of a sane size
 * is read, opened non-blocking, so a FIFO, a device (`/dev/zero`) or a huge file put in place of a
 * policy file cannot hang the project's queue or exhaust memory: it reads as unreadable.
 */
import { constants, promises as fs, type BigIntStats } from 'node:fs';
import path from 'node:path';

/** 1,000 agents that each list every tool take ~0.9 MB; a bigger file is invalid. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;

/**
 * One file as read: its bytes, or why it could not be read (an errno code, or a problem of ours).
 * `key` is its stat fingerprint (see {@link keyOf}), taken from the opened file before reading it,
 * so a change made after it shows as a different key at the next check. `identity` is the part of
 * the fingerprint a write compares before replacing the file (see write-guard.ts).
 */
export type FileRead =
  | { readonly ok: true; readonly bytes: Buffer; readonly key: string; readonly identity: string }
  | { readonly ok: false; readonly code: string; readonly key: string };

/** Missing file or folder: the project simply has no such file. */
export const isAbsence = (code: string): boolean => code === 'ENOENT' || code === 'ENOTDIR';

/** `.ideai` is a link that leads out of the project folder: nothing in it is read or written. */
export const OUTSIDE_LINK = 'a link that leads outside the project';

export const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? 'error';

/** The same fingerprint as a `stat` of the path gives (it follows links, as `open` does). */
export function keyOf(stats: BigIntStats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.mode}`;
}

/** What a write compares: the file (device, inode) and its content's size and time, not its ctime (a hard link changes it). */
export function identityOf(stats: BigIntStats): string {
  return `${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeNs}`;
}

/**
 * The key of a file that could not be read for a reason that may pass (no permission yet, too many
 * open files, an I/O error): no stat gives it, so the next check (an event, the rescan) reads again.
 */
export const READ_AGAIN = '';

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** Why an opened file is not read, from its fstat. */
export function problemOf(stats: BigIntStats): string | undefined {
  if (stats.isDirectory()) return 'EISDIR';
  if (!stats.isFile()) return 'not a regular file';
  return stats.size > BigInt(MAX_FILE_BYTES) ? `larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB` : undefined;
}

/** A file that could not be opened: absent, or to be read again at the next check. */
function openFailure(error: unknown): FileRead {
  const code = codeOf(error);
  return { ok: false, code, key: isAbsence(code) ? `-${code}` : READ_AGAIN };
}

/** Reads one file (see the module's comment); never throws. */
async function readFile(file: string): Promise<FileRead> {
  let handle;
  try {
    handle = await fs.open(file, OPEN_FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  try {
    const stats = await handle.stat({ bigint: true });
    const key = keyOf(stats);
    const problem = problemOf(stats);
    if (problem !== undefined) return { ok: false, code: problem, key };
    // The size just checked, even if the file grows meanwhile (a later event then reads it again).
    const bytes = Buffer.alloc(Number(stats.size));
    let filled = 0;
    for (let read = -1; read !== 0 && filled < bytes.length; filled += read) {
      read = (await handle.read(bytes, filled, bytes.length - filled, filled)).bytesRead;
    }
    return { ok: true, bytes: bytes.subarray(0, filled), key, identity: identityOf(stats) };
  } catch (error) {
    return { ok: false, code: codeOf(error), key: READ_AGAIN };
  } finally {
    // What was read stands whether or not the descriptor closes cleanly.
    await handle.close().catch(() => undefined);
  }
}

/** The fingerprint of a path as {@link readFile} would give it, from a stat only. */
export async function statKey(file: string): Promise<string> {
  try {
    return keyOf(await fs.stat(file, { bigint: true }));
  } catch (error) {
    return `-${codeOf(error)}`;
  }
}

/** Whether `inner` is `outer` or inside it (both real paths). */
export const isInside = (outer: string, inner: string): boolean => inner === outer || inner.startsWith(outer + path.sep);

/**
 * Why the `.ideai` folder of `root` must not be used: it is a link leading outside the project
 * (an agent that may write the project folder must not redirect the policy), or undefined.
 */
async function ideaiProblem(root: string): Promise<string | undefined> {
  const ideai = path.join(root, '.ideai');
  try {
    if (!(await fs.lstat(ideai)).isSymbolicLink()) return undefined;
    const [realRoot, realIdeai] = await Promise.all([fs.realpath(root), fs.realpath(ideai)]);
    return isInside(realRoot, realIdeai) ? undefined : OUTSIDE_LINK;
  } catch {
    // Absent, or a dangling link: opening the files says the same, which they then read as.
    return undefined;
  }
}

export interface ProjectFiles {
  readonly policy: FileRead;
  readonly agents: FileRead;
}

/** Both files of a project; when `.ideai` leads outside it, neither is read. */
export async function readProjectFiles(root: string): Promise<ProjectFiles> {
  const policyPath = path.join(root, '.ideai', 'mcp-tool-permissions.json');
  const agentsPath = path.join(root, '.ideai', 'agents.json');
  const problem = await ideaiProblem(root);
  if (problem !== undefined) {
    const refused: FileRead = { ok: false, code: problem, key: READ_AGAIN };
    return { policy: refused, agents: refused };
  }
  const [policy, agents] = await Promise.all([readFile(policyPath), readFile(agentsPath)]);
  return { policy, agents };
}
