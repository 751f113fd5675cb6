/**
 * Load generation for the throughput figures. `wrk` (C, epoll) is preferred: it needs far less CPU
 * than the server it loads, which matters on a 2-core machine. It is installed from Debian's
 * packages when missing (root only); otherwise autocannon runs in its own process, never in the
 * harness's event loop.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DecideQuery } from '../../schemas/index.js';
import { ensureDebianCommand } from './cli.js';
import { REPO_ROOT } from './fixtures.js';

export type Generator = 'wrk' | 'autocannon';

export interface LoadOptions {
  origin: string;
  bodies: readonly DecideQuery[];
  connections: number;
  durationSec: number;
}

export interface LoadResult {
  requestsPerSec: number;
  /** Responses received during the run. */
  requests: number;
  /** Responses other than 2xx plus socket errors: must be 0 for a valid run. */
  errors: number;
  latencyAvgMs: number;
}

/** Picks the generator: wrk if present or installable with apt-get, else autocannon. */
export function chooseGenerator(requested: Generator | undefined, log: (line: string) => void): Generator {
  if (requested === 'autocannon') return 'autocannon';
  if (ensureDebianCommand('wrk', 'wrk', log)) return 'wrk';
  if (requested === 'wrk') throw new Error('wrk was requested but cannot be installed');
  log('wrk unavailable: falling back to autocannon (in a separate process).');
  return 'autocannon';
}

/** Human description of the generator, for the report. */
export function describeGenerator(generator: Generator): string {
  if (generator === 'autocannon') return 'autocannon 8 (separate Node process)';
  try {
    const banner = execFileSync('sh', ['-c', 'wrk -v 2>&1 || true'], { encoding: 'utf8' }).split('\n')[0] ?? 'wrk';
    return `${banner.trim()} (1 thread, Lua body rotation)`;
  } catch {
    return 'wrk';
  }
}

let scriptDir: string | undefined;

/** A wrk Lua script that cycles through the bodies, one per request. */
async function wrkScript(bodies: readonly DecideQuery[]): Promise<string> {
  scriptDir ??= await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-wrk-'));
  const file = path.join(scriptDir, `bodies-${bodies.length}-${Date.now()}.lua`);
  // Long brackets need no escaping; the level is chosen so that no body can close it.
  const quoted = bodies.map((body) => `[==[${JSON.stringify(body)}]==]`).join(',\n  ');
  const lua = `local bodies = {\n  ${quoted}\n}
local requests = {}
-- Formatted in init(): only then does wrk.headers carry the Host header (Node answers 400 without it).
init = function(args)
  for i, body in ipairs(bodies) do
    requests[i] = wrk.format("POST", "/decide", { ["Host"] = wrk.headers["Host"], ["Content-Type"] = "application/json" }, body)
  end
end
local n = 0
request = function()
  n = n % #requests + 1
  return requests[n]
end
`;
  await writeFile(file, lua);
  return file;
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} exited ${String(code)}: ${err}${out}`))));
  });
}

function parseLatencyMs(text: string): number {
  const match = /^\s*Latency\s+([\d.]+)(us|ms|s)\b/m.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function runWrk(options: LoadOptions): Promise<LoadResult> {
  const script = await wrkScript(options.bodies);
  const out = await run('wrk', [
    '-t1',
    `-c${options.connections}`,
    `-d${options.durationSec}s`,
    '--timeout',
    '5s',
    '-s',
    script,
    `${options.origin}/decide`,
  ]);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(out)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const socketErrors = socket ? socket.slice(1).reduce((sum, value) => sum + Number(value), 0) : 0;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? Math.round(rps * options.durationSec));
  return { requestsPerSec: rps, requests, errors: non2xx + socketErrors, latencyAvgMs: parseLatencyMs(out) };
}

async function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  const out = await run(process.execPath, [
    '--import',
    'tsx',
    path.join(REPO_ROOT, 'bench', 'lib', 'autocannon-child.ts'),
    JSON.stringify(options),
  ]);
  return JSON.parse(out.trim().split('\n').pop() ?? '{}') as LoadResult;
}

/** One timed load run against `POST /decide`. */
export function runLoad(generator: Generator, options: LoadOptions): Promise<LoadResult> {
  return generator === 'wrk' ? runWrk(options) : runAutocannon(options);
}
