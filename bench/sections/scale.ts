/**
 * Scale: N projects × 50 agents (10 overrides each) under one PDP_PROJECTS_ROOT, served by the
 * service's real entry point. Figures: process start → `/readyz` 200, RSS, and `/decide`
 * throughput against the same entry point serving one project of the same shape (interleaved).
 */
import { rm } from 'node:fs/promises';
import { Pool, request } from 'undici';
import { makeScaleRoot, scaleQueryMix } from '../lib/fixtures.js';
import type { BenchContext, SectionResult } from '../lib/context.js';
import { cpuRpsOf, forkedInterleavedLoad, rpsOf } from '../lib/interleave.js';
import { memoryOf, startMain, type MainProcess } from '../lib/processes.js';
import { fmt, median, pairedRatio } from '../lib/stats.js';

const READY_TIMEOUT_MS = 60_000;
/** docs/api.md#http-api keeps at least the last 1,000 decisions per project: the steady state of memory. */
const RING_SIZE = 1_000;
const BATCH = 100;

/**
 * Sends RING_SIZE decisions to every project through `/decide/batch` (4 connections), so that
 * every recent-decisions ring is full: the memory the service holds after enough traffic.
 */
async function fillRecentDecisions(origin: string, ids: readonly string[]): Promise<number> {
  const pool = new Pool(origin, { connections: 4 });
  const started = performance.now();
  const jobs: string[] = [];
  for (const id of ids) for (let sent = 0; sent < RING_SIZE; sent += BATCH) jobs.push(id);
  try {
    const worker = async (): Promise<void> => {
      for (let project = jobs.pop(); project !== undefined; project = jobs.pop()) {
        const queries = scaleQueryMix([project], BATCH);
        const response = await pool.request({
          method: 'POST',
          path: '/decide/batch',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ queries }),
        });
        await response.body.text();
        if (response.statusCode !== 200) throw new Error(`POST /decide/batch answered ${response.statusCode}`);
      }
    };
    await Promise.all([worker(), worker(), worker(), worker()]);
  } finally {
    await pool.close();
  }
  return performance.now() - started;
}

/** Polls `/readyz` every 5 ms; resolves with ms since the spawn. */
async function timeToReady(service: MainProcess): Promise<number> {
  const deadline = service.spawnedAt + READY_TIMEOUT_MS;
  while (performance.now() < deadline) {
    try {
      const response = await request(`${service.origin}/readyz`, { headersTimeout: 1_000, bodyTimeout: 1_000 });
      await response.body.text();
      if (response.statusCode === 200) return performance.now() - service.spawnedAt;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`service on ${service.origin} not ready within ${READY_TIMEOUT_MS} ms`);
}

interface MemoryFigures {
  entry: string;
  loaded: Awaited<ReturnType<typeof memoryOf>>;
  full: Awaited<ReturnType<typeof memoryOf>>;
  fillMs: number;
}

/** Memory of the last round's 1,000-project service after its throughput runs, then once every recent-decisions ring is full. */
async function memoryFigures(ctx: BenchContext, bigService: MainProcess, ids: readonly string[]): Promise<MemoryFigures> {
  const loaded = await memoryOf(bigService.pid);
  ctx.log(
    `  RSS after the throughput runs: ${fmt(loaded.rssMb, 'MB')} (peak ${fmt(loaded.peakRssMb, 'MB')}); filling every recent-decisions ring...`,
  );
  const fillMs = await fillRecentDecisions(bigService.origin, ids);
  const full = await memoryOf(bigService.pid);
  ctx.log(
    `  ${ids.length * RING_SIZE} decisions in ${fmt(fillMs / 1000, 's')}: RSS ${fmt(full.rssMb, 'MB')} (peak ${fmt(full.peakRssMb, 'MB')})`,
  );
  return { entry: bigService.entry, loaded, full, fillMs };
}

export async function scaleSection(ctx: BenchContext): Promise<SectionResult> {
  const projects = ctx.settings.scaleProjects;
  ctx.log(`  generating ${projects} projects × 50 agents...`);
  const big = await makeScaleRoot(projects);
  const small = await makeScaleRoot(1);
  try {
    // Every round starts both services cold (the start-to-ready samples), then measures them
    // interleaved; the last round's pair stays up for the memory figures.
    const readyBig: number[] = [];
    const readySmall: number[] = [];
    const bigName = `${projects} projects`;
    // RSS right after ready, of the latest start of each (the last round's pair is the one kept).
    const afterReady = new Map<string, Awaited<ReturnType<typeof memoryOf>>>();
    const startTimed = (root: string, samples: number[]) => async (): Promise<MainProcess> => {
      const service = await startMain(root, ctx.useDist);
      try {
        samples.push(await timeToReady(service));
        afterReady.set(root, await memoryOf(service.pid));
      } catch (error) {
        await service.stop();
        throw error;
      }
      return service;
    };
    let memory: MemoryFigures | undefined;
    const results = await forkedInterleavedLoad(
      ctx,
      [
        { name: bigName, bodies: scaleQueryMix(big.ids), start: startTimed(big.root, readyBig) },
        { name: '1 project', bodies: scaleQueryMix(small.ids), start: startTimed(small.root, readySmall) },
      ],
      undefined,
      async (servers) => {
        memory = await memoryFigures(ctx, servers.get(bigName)!, big.ids);
      },
    );
    const { entry, loaded, full, fillMs } = memory!;
    const idle = afterReady.get(big.root)!;
    const idleSmall = afterReady.get(small.root)!;
    ctx.log(
      `  ready (${entry}): ${projects} projects ${readyBig.map((ms) => fmt(ms, 'ms')).join(', ')}; 1 project ${readySmall.map((ms) => fmt(ms, 'ms')).join(', ')}`,
    );
    ctx.log(`  RSS after ready (last start): ${fmt(idle.rssMb, 'MB')} (${projects} projects), ${fmt(idleSmall.rssMb, 'MB')} (1 project)`);
    const bigRps = rpsOf(results.get(`${projects} projects`) ?? []);
    const smallRps = rpsOf(results.get('1 project') ?? []);
    const ratio = pairedRatio(bigRps, smallRps);
    const cpuRatio = pairedRatio(cpuRpsOf(results.get(`${projects} projects`) ?? []), cpuRpsOf(results.get('1 project') ?? []));
    const worstReady = Math.max(...readyBig);
    const section = `scale (${projects}×50)`;
    return {
      rows: [
        {
          section,
          figure: `start → /readyz 200, median of ${readyBig.length} (${entry})`,
          value: fmt(median(readyBig), 'ms'),
          target: '',
          pass: null,
        },
        { section, figure: 'start → /readyz 200, worst', value: fmt(worstReady, 'ms'), target: '≤ 3000 ms', pass: worstReady <= 3_000 },
        {
          section,
          figure: 'start → /readyz 200, 1 project (node boot floor)',
          value: fmt(median(readySmall), 'ms'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'RSS after ready',
          value: fmt(idle.rssMb, 'MB'),
          baseline: `1 project: ${fmt(idleSmall.rssMb, 'MB')}`,
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'peak RSS (VmHWM) after the throughput runs',
          value: fmt(loaded.peakRssMb, 'MB'),
          target: '≤ 300 MB',
          pass: loaded.peakRssMb <= 300,
        },
        {
          section,
          figure: `peak RSS with every recent-decisions ring full (${projects} × ${RING_SIZE} decisions)`,
          value: fmt(full.peakRssMb, 'MB'),
          baseline: `RSS now ${fmt(full.rssMb, 'MB')}`,
          target: '≤ 300 MB',
          pass: full.peakRssMb <= 300,
        },
        { section, figure: `decide throughput, ${projects} projects`, value: fmt(median(bigRps), 'req/s'), target: '', pass: null },
        { section, figure: 'decide throughput, 1 project', value: fmt(median(smallRps), 'req/s'), target: '', pass: null },
        {
          section,
          figure: `throughput ${projects} projects / 1 project`,
          value: `${fmt(ratio)}×`,
          baseline: '1 project',
          target: '≥ 0.9×',
          pass: ratio >= 0.9,
        },
        {
          section,
          figure: `${projects} projects / 1 project, by CPU cost per request`,
          value: `${fmt(cpuRatio)}×`,
          baseline: '1 project',
          target: '≥ 0.9×',
          pass: cpuRatio >= 0.9,
        },
      ],
      raw: {
        readyBigMs: readyBig,
        readySmallMs: readySmall,
        idle,
        idleSmall,
        loaded,
        full,
        fillMs,
        throughput: Object.fromEntries(results),
      },
    };
  } finally {
    await rm(big.root, { recursive: true, force: true });
    await rm(small.root, { recursive: true, force: true });
  }
}
