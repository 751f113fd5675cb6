/**
 * Helpers of the security and reliability suite: temp trees with a sentinel outside the projects
 * root, tree snapshots (to prove nothing outside `.ideai/` is touched), the real service started as
 * a child process (`node --import tsx server/main.ts`), and deadline-based polling.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ERROR_CODES, TOOL_CATALOG } from '../../schemas/index.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const POLICY_FILE = 'mcp-tool-permissions.json';
export const ALL_TOOLS: readonly string[] = TOOL_CATALOG.map((tool) => tool.name);
export const READ_TOOLS: readonly string[] = TOOL_CATALOG.filter((tool) => tool.access === 'read').map((tool) => tool.name);
export const WRITE_TOOLS: readonly string[] = TOOL_CATALOG.filter((tool) => tool.access === 'write').map((tool) => tool.name);
export const KNOWN_ERROR_CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** Starting a child on this shared 2-core machine can take seconds when other suites run. */
export const START_DEADLINE_MS = 45_000;

/** A policy document in the file format of SPEC §3. */
export function policyDoc(projectDefault: readonly string[] | undefined, agents: Record<string, readonly string[]> = {}): string {
  const doc = {
    version: 1,
    ...(projectDefault === undefined ? {} : { projectDefault: { allowedTools: [...projectDefault] } }),
    agents: Object.entries(agents).map(([agentId, allowedTools]) => ({ agentId, policy: { allowedTools: [...allowedTools] } })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

export interface TempTree {
  /** Holds `projects/`, `state/`, a sentinel file and an `etc/` decoy beside the projects root. */
  outer: string;
  root: string;
  policyPath(project: string): string;
  remove(): Promise<void>;
}

/** `<tmp>/projects/<id>/.ideai/mcp-tool-permissions.json` for each entry (`null`: no file). */
export async function makeTree(projects: Record<string, string | null>): Promise<TempTree> {
  const outer = await mkdtemp(path.join(os.tmpdir(), 'pdp-sec-'));
  const root = path.join(outer, 'projects');
  await mkdir(root);
  await writeFile(path.join(outer, 'sentinel.txt'), 'do not touch\n');
  await mkdir(path.join(outer, 'etc'));
  await writeFile(path.join(outer, 'etc', 'passwd'), 'root:x:0:0\n');
  for (const [id, policy] of Object.entries(projects)) {
    await mkdir(path.join(root, id, '.ideai'), { recursive: true });
    if (policy !== null) await writeFile(path.join(root, id, '.ideai', POLICY_FILE), policy);
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

/** Polls `probe` until it returns true; throws after `timeoutMs`. Never a bare sleep as an assertion. */
export async function waitFor(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000, intervalMs = 20): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** True when `body` is `{ error: { code, message } }` with a code from the published list. */
export function isStableError(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' && KNOWN_ERROR_CODES.has(code) && typeof message === 'string';
}

// ------------------------------------------------------------------ the service as a child process

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  /** Everything the child wrote so far (stdout then stderr interleaved as received). */
  output(): string;
  /** Resolves when the child exits. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Spawned {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The environment of a child: this process's, without any PDP_* variable, plus `env`. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PDP_')) clean[key] = value;
  return { ...clean, ...env };
}

function spawnMain(env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return { child, output: () => text, exited };
}

/** Runs `server/main.ts` with `env` until it exits by itself (e.g. a refused configuration). */
export async function runUntilExit(
  env: Record<string, string>,
  timeoutMs = START_DEADLINE_MS,
): Promise<{ code: number | null; output: string }> {
  const spawned = spawnMain(env);
  const timer = setTimeout(() => spawned.child.kill('SIGKILL'), timeoutMs);
  const { code } = await spawned.exited;
  clearTimeout(timer);
  return { code, output: spawned.output() };
}

/** A port free right now on 127.0.0.1 (the OS picks it; the child binds it a moment later). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * Starts `server/main.ts` on a free loopback port (whatever PDP_LOG_LEVEL says) and resolves once
 * `/readyz` answers 200. Throws with the child's output if it exits or is not ready in time; retries
 * once on another port if the one picked was taken in between.
 */
export async function startService(env: Record<string, string>, deadlineMs = START_DEADLINE_MS): Promise<ServiceProcess> {
  try {
    return await startOnce(env, deadlineMs);
  } catch (error) {
    if (error instanceof Error && error.message.includes('EADDRINUSE')) return startOnce(env, deadlineMs);
    throw error;
  }
}

async function startOnce(env: Record<string, string>, deadlineMs: number): Promise<ServiceProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const spawned = spawnMain({ PDP_HOST: '127.0.0.1', ...env, PDP_PORT: String(port) });
  const { child } = spawned;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  void spawned.exited.then((value) => (exit = value));
  try {
    await waitFor(
      async () => {
        if (exit) throw new Error(`service exited early (${JSON.stringify(exit)})`);
        const response = await fetch(`${baseUrl}/readyz`).catch(() => undefined);
        return response?.status === 200;
      },
      '/readyz = 200',
      deadlineMs,
      25,
    );
  } catch (error) {
    child.kill('SIGKILL');
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`${why}\n--- child output ---\n${spawned.output()}`);
  }
  const pid = child.pid;
  if (pid === undefined) throw new Error('no pid');
  return {
    child,
    pid,
    baseUrl,
    output: spawned.output,
    exited: spawned.exited,
    stop: async (graceMs = 10_000) => {
      if (exit) return exit;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const result = await spawned.exited;
      clearTimeout(timer);
      return result;
    },
  };
}
