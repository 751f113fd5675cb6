/**
 * `npm run bench:instructions`: instructions per `POST /decide`, counted by valgrind's callgrind
 * on the server's main thread, for the service and the bare Fastify route. A diagnostic, not a
 * target (bench/README.md#targets): instruction counts do not move with the other tenants of a shared machine (wall and
 * CPU time move ±10% between rounds here), so a change of 1-2% in the work done per request can
 * be seen. They do not see cache misses or the kernel's share, which `npm run bench` does.
 *
 * Each run starts a fresh server under callgrind with instrumentation off, sends `--warmup`
 * requests (the JIT settles), counts `--requests` requests, then stops it. The runs alternate
 * between the servers; each process is reported separately, because V8 can settle in different
 * states in two processes of the same server (see `nextTick literal` in bench/README.md).
 *
 * Flags: --requests=N (default 20000), --warmup=N (default 40000), --runs=N per server (default 2),
 * --servers=ours,bare (default), --no-build (reuse dist/), --app=PATH (the service's app module to
 * count instead of dist/server/http/app.js, e.g. another build). Needs valgrind (installed with apt-get
 * when missing and run as root). About 2 minutes per run.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'undici';
import { ensureDebianCommand, hasCommand, parseFlags } from './lib/cli.js';
import { demoQueryMix, makeDemoRoot, REPO_ROOT } from './lib/fixtures.js';
import { SERVER_MODES, startServer, type ServerMode } from './lib/processes.js';

const flags = parseFlags(process.argv.slice(2));
const count = (name: string, fallback: number): number => {
  const value = Number(flags.get(name) ?? fallback);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} needs a positive integer`);
  return value;
};
const requests = count('requests', 20_000);
const warmup = count('warmup', 40_000);
const runs = count('runs', 2);
const servers = (flags.get('servers') ?? 'ours,bare').split(',') as ServerMode[];
for (const server of servers)
  if (!(SERVER_MODES as readonly string[]).includes(server))
    throw new Error(`--servers: ${server} is not one of ${SERVER_MODES.join(', ')}`);
/** The V8 runtime function behind a megamorphic computed-key object literal (see bench/README.md). */
const SLOW_LITERAL = 'Runtime_DefineKeyedOwnPropertyInLiteral';

const log = (line: string): void => void process.stdout.write(`${line}\n`);

/** Sends `total` POST /decide over 32 connections, cycling through the demo query mix. */
async function send(origin: string, total: number): Promise<void> {
  const bodies = demoQueryMix().map((query) => JSON.stringify(query));
  const pool = new Pool(origin, { connections: 32 });
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      const body = bodies[next++ % bodies.length]!;
      const response = await pool.request({ method: 'POST', path: '/decide', headers: { 'content-type': 'application/json' }, body });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`POST /decide answered ${response.statusCode}`);
    }
  };
  try {
    await Promise.all(Array.from({ length: 32 }, worker));
  } finally {
    await pool.close();
  }
}

const control = (pid: number, ...args: string[]): void =>
  void execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });

interface Counted {
  /** Instructions per request on the main thread. */
  main: number;
  /** Instructions per request on every thread (GC helpers, compiler threads, libuv pool). */
  all: number;
  /** Calls into the slow object-literal runtime function seen (the megamorphic state). */
  slowLiteral: boolean;
}

async function countOne(mode: ServerMode, projectsRoot: string, appModule: string): Promise<Counted> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'pdp-callgrind-'));
  try {
    const wrapper = ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${dir}/cg.%p`];
    const server = await startServer(mode, { projectsRoot, appModule, wrapper });
    try {
      await send(server.origin, warmup);
      control(server.pid, '-i', 'on');
      await send(server.origin, requests);
      control(server.pid, '-i', 'off');
      control(server.pid, '-d');
    } finally {
      await server.stop();
    }
    // Dump 1 of every thread: `cg.<pid>.1-01` is the main thread.
    const files = (await readdir(dir)).filter((name) => /\.1-\d+$/.test(name));
    let main = 0;
    let all = 0;
    let slowLiteral = false;
    for (const name of files) {
      const text = await readFile(path.join(dir, name), 'utf8');
      const totals = Number(/^totals: (\d+)/m.exec(text)?.[1] ?? 0);
      all += totals;
      if (name.endsWith('.1-01')) {
        main = totals;
        slowLiteral = text.includes(SLOW_LITERAL);
      }
    }
    if (main === 0) throw new Error(`no callgrind dump of the main thread in ${dir}`);
    return { main: main / requests, all: all / requests, slowLiteral };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  if (!ensureDebianCommand('valgrind', 'valgrind', log) || !hasCommand('callgrind_control'))
    throw new Error('valgrind is missing (Debian package "valgrind")');
  const appFlag = flags.get('app');
  if (!flags.has('no-build') && appFlag === undefined)
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: REPO_ROOT, stdio: 'inherit' });
  const appModule = path.resolve(REPO_ROOT, appFlag ?? path.join('dist', 'server', 'http', 'app.js'));
  if (!existsSync(appModule)) throw new Error(`${appModule} is missing: run npm run build`);
  const root = await makeDemoRoot();
  try {
    log(`callgrind: ${warmup} warm-up requests, then ${requests} counted, ${runs} fresh process(es) per server`);
    log('| run | server | instructions / request (main thread) | all threads | nextTick literal |');
    log('| ---: | --- | ---: | ---: | --- |');
    for (let run = 1; run <= runs; run += 1) {
      for (const mode of run % 2 === 1 ? servers : [...servers].reverse()) {
        const counted = await countOne(mode, root, appModule);
        log(
          `| ${run} | ${mode} | ${Math.round(counted.main)} | ${Math.round(counted.all)} | ${counted.slowLiteral ? 'megamorphic' : 'fast'} |`,
        );
      }
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

await main();
