/**
 * Child processes of the benchmark: server children (forked, report their port over IPC), the
 * service's real entry point (for the start-to-ready figure), and the bits read from /proc.
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './fixtures.js';

/** The servers a child process can run (bench/servers/child.ts). */
export const SERVER_MODES = ['ours', 'bare', 'node-http', 'cedar', 'cedar-text'] as const;
export type ServerMode = (typeof SERVER_MODES)[number];

/** Admin token given to every service child (loopback only, throwaway). */
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789abcdef';

export interface RunningServer {
  readonly mode: ServerMode;
  readonly pid: number;
  readonly port: number;
  readonly origin: string;
  /** Starts the child's in-process CPU profiler. */
  startProfile(): Promise<void>;
  /** Stops it and writes the `.cpuprofile` to `file`. */
  stopProfile(file: string): Promise<void>;
  stop(): Promise<void>;
}

/** Sends one IPC command to a child and waits for the answer carrying `key`. */
function ask(child: ChildProcess, message: object, key: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (answer: unknown): void => {
      if (typeof answer !== 'object' || answer === null || !(key in answer)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve();
    };
    const onExit = (): void => reject(new Error(`server child exited while waiting for ${key}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
    child.send(message);
  });
}

export interface ServerOptions {
  projectsRoot: string;
  /** Absolute path of the service's app module (dist/server/http/app.js or server/http/app.ts). */
  appModule: string;
  logger?: boolean;
  /** A command that runs node (e.g. `['valgrind', '--tool=callgrind']`): the child is started as `<wrapper...> node ...`. */
  wrapper?: readonly string[];
}

const CHILD_ENTRY = path.join(REPO_ROOT, 'bench', 'servers', 'child.ts');

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Forks a server child and resolves once it listens. */
export function startServer(mode: ServerMode, options: ServerOptions): Promise<RunningServer> {
  const execArgv = ['--import', 'tsx'];
  const [wrapperCommand, ...wrapperArgs] = options.wrapper ?? [];
  const child = fork(CHILD_ENTRY, [mode], {
    cwd: REPO_ROOT,
    ...(wrapperCommand === undefined
      ? { execArgv }
      : { execPath: wrapperCommand, execArgv: [...wrapperArgs, process.execPath, ...execArgv] }),
    env: {
      ...process.env,
      NODE_ENV: 'production',
      BENCH_PROJECTS_ROOT: options.projectsRoot,
      BENCH_APP_MODULE: options.appModule,
      BENCH_ADMIN_TOKEN,
      BENCH_LOGGER: options.logger ? '1' : '0',
    },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`${mode} server exited (${String(code)}) before listening:\n${stderr}`));
    child.once('exit', onExit);
    child.once('message', (message: unknown) => {
      child.off('exit', onExit);
      const port = (message as { port?: number }).port ?? 0;
      resolve({
        mode,
        pid: child.pid ?? 0,
        port,
        origin: `http://127.0.0.1:${port}`,
        startProfile: () => ask(child, { cmd: 'profile-start' }, 'profiling'),
        stopProfile: (file) => ask(child, { cmd: 'profile-stop', file }, 'profiled'),
        stop: async () => {
          child.kill('SIGTERM');
          await waitForExit(child, 10_000);
        },
      });
    });
  });
}

/** A port that was free a moment ago (for the real entry point, which takes PDP_PORT). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface MainProcess {
  readonly pid: number;
  readonly origin: string;
  /** Its unix socket (`PDP_STATE_DIR/pdp.sock`, the default). */
  readonly socketPath: string;
  /** `performance.now()` just before the spawn. */
  readonly spawnedAt: number;
  readonly entry: string;
  stop(): Promise<void>;
}

/** The service's own entry point: dist/server/main.js when built, else server/main.ts through tsx. */
export function mainEntry(useDist: boolean): { args: string[]; label: string } {
  const dist = path.join(REPO_ROOT, 'dist', 'server', 'main.js');
  if (useDist && existsSync(dist)) return { args: [dist], label: 'node dist/server/main.js' };
  return { args: ['--import', 'tsx', path.join(REPO_ROOT, 'server', 'main.ts')], label: 'node --import tsx server/main.ts' };
}

/** Spawns the real service (`npm start` equivalent) on a free loopback port with `projectsRoot`; optionally under `node --cpu-prof`. */
export async function startMain(projectsRoot: string, useDist: boolean, cpuProfDir?: string): Promise<MainProcess> {
  const port = await freePort();
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-state-'));
  const entry = mainEntry(useDist);
  // `--cpu-prof` writes the profile when the process exits (main.ts exits 0 on SIGTERM).
  const profiling = cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`, '--cpu-prof-interval=200'] : [];
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, [...profiling, ...entry.args], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      NODE_ENV: 'production',
      PDP_HOST: '127.0.0.1',
      PDP_PORT: String(port),
      PDP_PROJECTS_ROOT: projectsRoot,
      PDP_PROJECTS: '',
      PDP_ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
      PDP_DECIDE_TOKEN: '',
      PDP_STATE_DIR: stateDir,
    },
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  return {
    pid: child.pid ?? 0,
    origin: `http://127.0.0.1:${port}`,
    socketPath: path.join(stateDir, 'pdp.sock'),
    spawnedAt,
    entry: entry.label,
    stop: async () => {
      child.kill('SIGTERM');
      await waitForExit(child, 10_000);
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}

/** Resident set size and its peak (VmHWM) of a process, in MB, from /proc. */
export async function memoryOf(pid: number): Promise<{ rssMb: number; peakRssMb: number }> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
  return { rssMb: kb('VmRSS') / 1024, peakRssMb: kb('VmHWM') / 1024 };
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const USER_HZ = 100;

function parseCpuMs(stat: string): number {
  // Fields after the command name (which may contain spaces) start after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / USER_HZ;
}

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc: all threads, and its
 * main thread alone (the JS event loop; the rest is GC helper threads and the libuv pool).
 */
export async function cpuTimeMs(pid: number): Promise<{ total: number; main: number }> {
  const [total, main] = await Promise.all([readFile(`/proc/${pid}/stat`, 'utf8'), readFile(`/proc/${pid}/task/${pid}/stat`, 'utf8')]);
  return { total: parseCpuMs(total), main: parseCpuMs(main) };
}
