/** What every benchmark section receives from the harness, and what it gives back. */
import { Pool } from 'undici';
import type { DecideQuery, Decision } from '../../schemas/index.js';
import type { Generator } from './load.js';
import type { Row } from './report.js';

export interface Settings {
  /** Seconds per measured load run. */
  durationSec: number;
  /** Interleaved rounds per compared server. */
  rounds: number;
  /** Seconds of unmeasured warm-up load per server. */
  warmupSec: number;
  /** Seconds of unmeasured load right before each measured throughput run. */
  rewarmSec: number;
  connections: number;
  /** Sequential calls per client in the latency figure (split across the rounds). */
  latencyCalls: number;
  /** File-edit and API-write trials in the revocation figure. */
  revocationTrials: number;
  /** Projects in the scale figure. */
  scaleProjects: number;
}

export interface BenchContext {
  settings: Settings;
  generator: Generator;
  /** Absolute path of the service's app module (dist/server/http/app.js or server/http/app.ts). */
  appModule: string;
  /** Whether the real entry point runs from dist/. */
  useDist: boolean;
  log(line: string): void;
  note(line: string): void;
}

export interface SectionResult {
  rows: Row[];
  raw: unknown;
}

/** A keep-alive pool of one connection: what the figures at concurrency 1 use. */
export function singleConnectionPool(origin: string): Pool {
  return new Pool(origin, { connections: 1, pipelining: 1 });
}

/** POST /decide through an undici pool; throws on a non-200 (the harness must not measure errors). */
export async function postDecide(pool: Pool, query: DecideQuery): Promise<Decision> {
  const response = await pool.request({
    method: 'POST',
    path: '/decide',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(query),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`POST /decide answered ${response.statusCode}: ${text}`);
  return JSON.parse(text) as Decision;
}

/** Resolves when `check` returns true, polling every `intervalMs`, or rejects after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number, intervalMs = 10): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (performance.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
