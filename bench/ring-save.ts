/**
 * `npx tsx bench/ring-save.ts`: what saving the recent-decisions rings costs, in process (a
 * diagnostic, not one of bench/README.md#targets). At 1,000 busy projects a timer saves 32 full rings a second on
 * the service's main thread and thread pool, while one project saves one: this cost is the part
 * of the 1,000 / 1 project gap that the ring's persistence adds (bench/README.md#the-ring-on-disk).
 *
 * Prints, for 32 full rings (1,000 decisions each): the main-thread time to copy and encode them
 * (best of `--rounds`, so that another tenant's time slice is not counted), and the process CPU time
 * (user + system, every thread) of one whole save through `RecentDecisionsFile` (temp file, fsync,
 * rename), median of `--rounds`. Flags: `--rounds=N` (default 30), `--dist=PATH` (a build's `dist/`
 * folder to measure instead of this checkout's sources, e.g. an older commit's).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';
import { parseFlags } from './lib/cli.js';
import { REPO_ROOT } from './lib/fixtures.js';
import type { RecordedDecision, RingSnapshot } from '../server/decisions/recent-decisions.js';

const RINGS = 32;
const RING_SIZE = 1000;

const flags = parseFlags(process.argv.slice(2));
const rounds = Number(flags.get('rounds') ?? 30);
const dist = flags.get('dist');

type RingModule = typeof import('../server/decisions/recent-decisions.js');
type FileModule = typeof import('../server/decisions/recent-decisions-file.js');
const load = async <T>(source: string): Promise<T> =>
  (await import(
    dist === undefined ? pathToFileURL(path.join(REPO_ROOT, `${source}.ts`)).href : pathToFileURL(path.resolve(dist, `${source}.js`)).href
  )) as T;
const { RecentDecisions } = await load<RingModule>('server/decisions/recent-decisions');
const { RecentDecisionsFile } = await load<FileModule>('server/decisions/recent-decisions-file');

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

const recent = new RecentDecisions('0123456789ab');
let sequence = 0;
const decide = (project: string, agent: number): void => {
  const decision: RecordedDecision = {
    sequence: ++sequence,
    requester: `agent-${String(agent % 50).padStart(2, '0')}`,
    tool: agent % 3 === 0 ? 'idea_memory_write' : 'idea_ticket_read',
    allow: agent % 3 !== 0,
    reason: agent % 3 === 0 ? 'not_in_allowlist' : 'allowed',
    source: 'project-default',
  };
  recent.record(project, decision, 1_764_600_000_000 + sequence);
};
/** One more decision in each ring: every ring is dirty, full and wrapped at a new place. */
const touchAll = (): void => {
  for (let ring = 0; ring < RINGS; ring++) decide(`p${String(ring).padStart(4, '0')}`, sequence);
};
for (let index = 0; index < RING_SIZE + 300; index++) touchAll();

const stateDir = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-ring-save-'));
try {
  const file = new RecentDecisionsFile({ stateDir, recent, logger: pino({ level: 'silent' }), flushMs: 3_600_000 });
  await file.start();
  // The synchronous part of a save, as writeDirty does it, without the file; a build from before
  // `savedRingText` encoded with one JSON.stringify of the whole ring.
  const encode =
    (await load<Partial<FileModule>>('server/decisions/recent-decisions-file')).savedRingText ??
    ((project: string, snapshot: RingSnapshot): string =>
      JSON.stringify({
        format: 1,
        project,
        littleEndian: true,
        names: [...snapshot.names],
        records: Buffer.from(snapshot.records.buffer, snapshot.records.byteOffset, snapshot.records.byteLength).toString('base64'),
      }));
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    touchAll();
    const started = performance.now();
    for (const { project, snapshot } of recent.takeDirty(RINGS)) encode(project, snapshot);
    best = Math.min(best, performance.now() - started);
  }
  const cpu: number[] = [];
  for (let round = 0; round < rounds; round++) {
    touchAll();
    const before = process.cpuUsage();
    await file.flush(RINGS);
    const used = process.cpuUsage(before);
    cpu.push((used.user + used.system) / 1000);
  }
  await file.close();
  process.stdout.write(
    `${dist ?? 'sources'}: ${RINGS} full rings: copy and encode ${best.toFixed(2)} ms on the main thread (best of ${rounds}); ` +
      `whole save ${median(cpu).toFixed(1)} ms CPU, every thread (median of ${rounds})\n`,
  );
} finally {
  await rm(stateDir, { recursive: true, force: true });
}
