/**
 * Reading a project's two files, each as one consistent snapshot: its bytes and the fingerprint of
 * the very file read (its fstat), or why it could not be read. Only a regular file of a sane size
 * is read, opened non-blocking, so a FIFO, a device (`/dev/zero`) or a huge file put in place of a
 * policy file cannot hang the project's queue or exhaust memory: it reads as unreadable.
 */
import { constants, promises as fs, type BigIntStats } from 'node:fs';
import path from 'node:path';
import { SERVICE_TEMP_FILE } from './atomic-write.js';

/** 1,000 agents that each list every tool take ~0.9 MB; a bigger file is invalid. */
export const MAX_FILE_BYTES = 4 * 1024 * 1024;

/**
 * One file as read: its bytes, or why it could not be read (an errno code, or a problem of ours).
 * `key` is its stat fingerprint (see {@link keyOf}), taken from the opened file before reading it,
 * so a change made after it shows as a different key at the next check. `identity` is the part of
 * the fingerprint a write compares before replacing the file (see write-guard.ts).
 */
export type FileRead =
  | {
      readonly ok: true;
      readonly bytes: Buffer;
      readonly key: string;
      readonly identity: string;
      /** Its names (`st_nlink`), the service's own leftover names in `.ideai` not counted (see hard-links.ts). */
      readonly links: number;
    }
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

/** The file (device, inode) of an {@link identityOf}, without its content's size and time. */
export const inodeOf = (identity: string): string => identity.split(':', 2).join(':');

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
    return { ok: true, bytes: bytes.subarray(0, filled), key, identity: identityOf(stats), links: Number(stats.nlink) };
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

/** Prefix of the problems of a link the watcher could not follow in full (docs/design.md#links). */
export const UNHEARD_LINK = 'a symbolic link:';
/** The problem of a `.ideai` link (which a write cannot repair, unlike a symlinked policy file) starts so. */
export const UNHEARD_IDEAI_LINK = `${UNHEARD_LINK} .ideai →`;

/**
 * Why the `.ideai` folder of `root` must not be used, or undefined: it is a link leading outside
 * the project (an agent that may write the project folder must not redirect the policy), or to a
 * folder that is not directly in the project folder (a change of a folder on the way would not be
 * heard: only the project folder and `.ideai` are watched).
 */
async function ideaiProblem(root: string): Promise<string | undefined> {
  const ideai = path.join(root, '.ideai');
  try {
    if (!(await fs.lstat(ideai)).isSymbolicLink()) return undefined;
    const [realRoot, realIdeai, text] = await Promise.all([fs.realpath(root), fs.realpath(ideai), fs.readlink(ideai)]);
    if (!isInside(realRoot, realIdeai)) return OUTSIDE_LINK;
    if (text.includes('/') || path.dirname(realIdeai) !== realRoot || (await fs.lstat(path.join(root, text))).isSymbolicLink()) {
      return `${UNHEARD_IDEAI_LINK} ${JSON.stringify(text)} is not a folder directly in the project folder (changes on the way could not all be heard at once): link to a sibling folder, or make .ideai a folder`;
    }
    return undefined;
  } catch {
    // Absent, or a dangling link: opening the files says the same, which they then read as.
    return undefined;
  }
}

/**
 * Why a symlinked policy file must not be read, or undefined (not a link, or a link to a regular
 * file in `.ideai` itself, by name: every change of it is heard by the watches of `.ideai` and of
 * the file). A link to a file elsewhere could be changed through a folder or a link on the way
 * that no watch sees, so a revocation made there would wait for the 2 s rescan.
 */
async function policyLinkProblem(policyPath: string): Promise<string | undefined> {
  let text: string;
  try {
    if (!(await fs.lstat(policyPath)).isSymbolicLink()) return undefined;
    text = await fs.readlink(policyPath);
  } catch {
    return undefined;
  }
  const target = path.join(path.dirname(policyPath), text);
  const plainFile = await fs.lstat(target).then(
    (stats) => stats.isFile(),
    () => false,
  );
  if (!text.includes('/') && plainFile) return undefined;
  return `${UNHEARD_LINK} .ideai/${path.basename(policyPath)} → ${JSON.stringify(text)}; only a link to a regular file in .ideai itself is followed (changes elsewhere could not all be heard at once): put the file itself in .ideai, or replace the whole document to repair it`;
}

/**
 * The names of the read file, without the service's own temp and aside names of it in `.ideai`
 * (a write killed between its link and its unlink leaves one, removed by recovery.ts): those are
 * never saved through.
 */
async function namesElsewhere(policyPath: string, read: FileRead & { ok: true }): Promise<number> {
  const folder = path.dirname(policyPath);
  const name = path.basename(policyPath);
  const inode = inodeOf(read.identity);
  let own = 0;
  for (const entry of await fs.readdir(folder).catch(() => [])) {
    if (SERVICE_TEMP_FILE.exec(entry)?.[1] !== name) continue;
    const stats = await fs.lstat(path.join(folder, entry), { bigint: true }).catch(() => undefined);
    if (stats !== undefined && `${stats.dev}:${stats.ino}` === inode) own++;
  }
  return Math.max(1, read.links - own);
}

export interface ProjectFiles {
  readonly policy: FileRead;
  readonly agents: FileRead;
  /** `.ideai/mcp-servers.json`, read under the policy file's rules (docs/api.md#other-mcp-servers-tools). */
  readonly servers: FileRead;
}

/** The names of the files in `.ideai` that the service reads (the watcher listens for exactly these). */
export const POLICY_FILE_NAME = 'mcp-tool-permissions.json';
export const AGENTS_FILE_NAME = 'agents.json';
export const SERVERS_FILE_NAME = 'mcp-servers.json';

/** A file read under the policy file's rules: a link only to a regular file of `.ideai` itself, and its other names counted. */
async function readRuledFile(file: string): Promise<FileRead> {
  const linkProblem = await policyLinkProblem(file);
  if (linkProblem !== undefined) return { ok: false, code: linkProblem, key: READ_AGAIN };
  const read = await readFile(file);
  return read.ok && read.links > 1 ? { ...read, links: await namesElsewhere(file, read) } : read;
}

/** The files of a project; when `.ideai` leads outside it, none is read. */
export async function readProjectFiles(root: string): Promise<ProjectFiles> {
  const ideai = path.join(root, '.ideai');
  const problem = await ideaiProblem(root);
  if (problem !== undefined) {
    const refused: FileRead = { ok: false, code: problem, key: READ_AGAIN };
    return { policy: refused, agents: refused, servers: refused };
  }
  const [policy, agents, servers] = await Promise.all([
    readRuledFile(path.join(ideai, POLICY_FILE_NAME)),
    readFile(path.join(ideai, AGENTS_FILE_NAME)),
    readRuledFile(path.join(ideai, SERVERS_FILE_NAME)),
  ]);
  return { policy, agents, servers };
}
