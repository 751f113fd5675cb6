/**
 * The real service as a child process (`node --import tsx server/main.ts`): started on a free
 * loopback port and awaited until ready, or run until it exits by itself.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from './wait.js';

export const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Starting a child on this shared 2-core machine can take seconds when other suites run. */
export const START_DEADLINE_MS = 45_000;

export interface ServiceProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** `http://127.0.0.1:<port>`. */
  readonly baseUrl: string;
  /** Everything the child wrote so far (stdout then stderr interleaved as received). */
  readonly output: () => string;
  /** Resolves when the child exits. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

interface Spawned {
  child: ChildProcess;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

let stateHome: string | undefined;

/**
 * The XDG_STATE_HOME of the children of this test file: a temp folder removed at exit, so that a
 * child given no PDP_STATE_DIR never writes into the user's real ~/.local/state.
 */
function testStateHome(): string {
  if (stateHome === undefined) {
    const made = mkdtempSync(path.join(os.tmpdir(), 'pdp-state-home-'));
    process.once('exit', () => {
      rmSync(made, { recursive: true, force: true });
    });
    stateHome = made;
  }
  return stateHome;
}

/**
 * The environment of a child: this process's, without any PDP_* variable, plus `env`. No unix
 * socket unless `env` names PDP_SOCKET: children sharing the default state folder would otherwise
 * refuse to start over each other's socket. The default state folder is under a temp XDG_STATE_HOME.
 */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const clean: NodeJS.ProcessEnv = { PDP_SOCKET: 'off' };
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PDP_')) clean[key] = value;
  return { ...clean, XDG_STATE_HOME: testStateHome(), ...env };
}

function spawnMain(env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/main.ts'], {
    cwd: REPO_ROOT,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
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
    server.listen(0, '127.0.0.1', () => {
      resolve();
    });
  });
  const address = server.address();
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
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
