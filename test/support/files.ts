/**
 * Project folders in temp trees, policy documents, saves as an editor makes them, and snapshots of
 * a tree (to prove that nothing outside `.ideai/` was touched).
 */
import { execFile } from 'node:child_process';
import { renameSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { waitFor } from './wait.js';

export const POLICY_FILE = 'mcp-tool-permissions.json';

/** A policy document in the file format of docs/api.md#projects-and-files. */
export function policyDoc(
  projectDefault: readonly string[] | undefined,
  agents: Record<string, readonly string[]> = {},
): Record<string, unknown> {
  return {
    version: 1,
    ...(projectDefault === undefined ? {} : { projectDefault: { allowedTools: [...projectDefault] } }),
    agents: Object.entries(agents).map(([agentId, allowedTools]) => ({ agentId, policy: { allowedTools: [...allowedTools] } })),
  };
}

/** {@link policyDoc} as the text of a policy file (pretty-printed, final newline). */
export function policyText(projectDefault: readonly string[] | undefined, agents: Record<string, readonly string[]> = {}): string {
  return `${JSON.stringify(policyDoc(projectDefault, agents), null, 2)}\n`;
}

let saves = 0;
const editorTemp = (file: string): string => path.join(path.dirname(file), `.editor-${process.pid}-${saves++}.tmp`);

/** Saves `content` the way editors do: a temp file in the same folder, renamed over the target. */
export async function saveAtomically(file: string, content: string | Buffer): Promise<void> {
  const temp = editorTemp(file);
  await writeFile(temp, content);
  await rename(temp, file);
}

/**
 * {@link saveAtomically} whose rename runs on the main thread: it can land anywhere in a write
 * except inside the write's synchronous compare-and-swap
 * (docs/design.md#writes-a-compare-and-swap-on-the-file); test/security/write-race-stress.test.ts saves from another thread.
 */
export async function saveAtomicallyOnThisThread(file: string, content: string): Promise<void> {
  const temp = editorTemp(file);
  await writeFile(temp, content);
  renameSync(temp, file);
}

/** A FIFO at `file` (mode 0600): a reader of it blocks until a writer comes. */
export async function makeFifo(file: string): Promise<void> {
  await promisify(execFile)('mkfifo', ['-m', '600', file]);
}

export async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** What to put in one project folder. A string is written verbatim; anything else as JSON. */
export interface ProjectFixture {
  /** `.ideai/mcp-tool-permissions.json`; absent = no file. */
  policy?: unknown;
  /** `.ideai/agents.json`; absent = no file. */
  agents?: unknown;
  /** `.ideai/mcp-servers.json`; absent = no file. */
  servers?: unknown;
  /** Create `.ideai/` even without any file in it. */
  ideai?: boolean;
}

function serialize(content: unknown): string {
  return typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`;
}

/** Writes one project folder (creating it) under `root`. */
export async function writeProject(root: string, id: string, fixture: ProjectFixture = {}): Promise<string> {
  const dir = path.join(root, id);
  await mkdir(dir, { recursive: true });
  if (fixture.policy !== undefined || fixture.agents !== undefined || fixture.servers !== undefined || fixture.ideai === true) {
    await mkdir(path.join(dir, '.ideai'), { recursive: true });
  }
  if (fixture.policy !== undefined) await writeFile(path.join(dir, '.ideai', POLICY_FILE), serialize(fixture.policy));
  if (fixture.agents !== undefined) await writeFile(path.join(dir, '.ideai', 'agents.json'), serialize(fixture.agents));
  if (fixture.servers !== undefined) await writeFile(path.join(dir, '.ideai', 'mcp-servers.json'), serialize(fixture.servers));
  return dir;
}

/**
 * Deletes the folder of project `id` and makes a new one with `fixture`, again until the new one
 * differs in inode or birth time (what tells two folders apart; the birth time has a grain of a
 * few milliseconds and a freed inode may be used again at once).
 */
export async function replaceProjectFolder(root: string, id: string, fixture: ProjectFixture = {}): Promise<void> {
  const folder = path.join(root, id);
  const identity = async (): Promise<string> => {
    const stats = await stat(folder, { bigint: true });
    return `${stats.ino}:${stats.birthtimeNs}`;
  };
  const old = await identity();
  await waitFor(
    async () => {
      await rm(folder, { recursive: true, force: true });
      await writeProject(root, id, fixture);
      return (await identity()) !== old;
    },
    `a ${id} folder that differs from the old one`,
    5_000,
    1,
  );
}

export interface TempTree {
  /** Holds `projects/`, a sentinel file and an `etc/` decoy beside the projects root. */
  outer: string;
  /** The projects root (`PDP_PROJECTS_ROOT`). */
  root: string;
  policyPath: (project: string) => string;
  remove: () => Promise<void>;
}

/**
 * `<tmp>/projects/<id>/...` for every fixture (a string or `null` is the policy file's text, or no
 * file), with a sentinel file and an `etc/passwd` decoy beside the projects root.
 */
export async function makeTree(projects: Record<string, string | null | ProjectFixture>): Promise<TempTree> {
  const outer = await mkdtemp(path.join(os.tmpdir(), 'pdp-test-'));
  const root = path.join(outer, 'projects');
  await mkdir(root);
  await writeFile(path.join(outer, 'sentinel.txt'), 'do not touch\n');
  await mkdir(path.join(outer, 'etc'));
  await writeFile(path.join(outer, 'etc', 'passwd'), 'root:x:0:0\n');
  for (const [id, fixture] of Object.entries(projects)) {
    const asFixture: ProjectFixture = typeof fixture === 'string' ? { policy: fixture } : (fixture ?? { ideai: true });
    await writeProject(root, id, asFixture);
  }
  return {
    outer,
    root,
    policyPath: (project) => path.join(root, project, '.ideai', POLICY_FILE),
    remove: () => rm(outer, { recursive: true, force: true }),
  };
}

/** Every entry under `dir` with its size and mtime (folders as `dir`). */
export async function snapshotTree(dir: string): Promise<Map<string, string>> {
  const result = new Map<string, string>();
  async function walk(current: string): Promise<void> {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      const info = await stat(full);
      result.set(path.relative(dir, full), entry.isDirectory() ? 'dir' : `${info.size}:${info.mtimeMs}`);
      if (entry.isDirectory()) await walk(full);
    }
  }
  await walk(dir);
  return result;
}

/** Paths that differ between two snapshots (added, removed or changed). */
export function changedPaths(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((key) => before.get(key) !== after.get(key)).sort();
}
