/**
 * Interleaved throughput runs: every target gets a warm-up, then the rounds go A B C, C B A, ...
 * so that drift of the machine and position in the round affect every target alike.
 */
import type { DecideQuery } from '../../schemas/index.js';
import type { BenchContext } from './context.js';
import { runLoad, type LoadResult } from './load.js';
import { cpuTimeMs } from './processes.js';
import { fmt } from './stats.js';

export interface LoadTarget {
  name: string;
  origin: string;
  bodies: readonly DecideQuery[];
  /** Server process id: its CPU time is read around each run. */
  pid: number;
}

/** One measured run: the load generator's view plus the server's CPU cost per request. */
export interface RoundResult extends LoadResult {
  /** Server CPU time (user + system, all threads) per answered request, in µs. */
  cpuUsPerRequest: number;
  /** The part of it spent outside the main thread (GC helpers, libuv pool), in µs. */
  offMainUsPerRequest: number;
}

/** Runs the interleaved rounds; returns every target's per-round results in round order. */
export async function interleavedLoad(ctx: BenchContext, targets: readonly LoadTarget[]): Promise<Map<string, RoundResult[]>> {
  const { settings } = ctx;
  const results = new Map<string, RoundResult[]>(targets.map((target) => [target.name, []]));
  for (const target of targets) {
    await runLoad(ctx.generator, { origin: target.origin, bodies: target.bodies, connections: settings.connections, durationSec: settings.warmupSec });
  }
  for (let round = 0; round < settings.rounds; round += 1) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      // A server that sat idle while the others ran lets V8 shrink its young generation and cool
      // its caches: one short unmeasured run right before each measured one puts every server in
      // the same (hot) state, whatever its place in the order.
      if (settings.rewarmSec > 0) {
        await runLoad(ctx.generator, { origin: target.origin, bodies: target.bodies, connections: settings.connections, durationSec: settings.rewarmSec });
      }
      const cpuBefore = await cpuTimeMs(target.pid);
      const load = await runLoad(ctx.generator, {
        origin: target.origin,
        bodies: target.bodies,
        connections: settings.connections,
        durationSec: settings.durationSec,
      });
      const cpuAfter = await cpuTimeMs(target.pid);
      const requests = Math.max(1, load.requests);
      const cpuUsPerRequest = ((cpuAfter.total - cpuBefore.total) * 1000) / requests;
      const mainUsPerRequest = ((cpuAfter.main - cpuBefore.main) * 1000) / requests;
      const result: RoundResult = { ...load, cpuUsPerRequest, offMainUsPerRequest: cpuUsPerRequest - mainUsPerRequest };
      results.get(target.name)!.push(result);
      ctx.log(`  round ${round + 1}/${settings.rounds} ${target.name.padEnd(14)} ${fmt(result.requestsPerSec, 'req/s')}  ${fmt(cpuUsPerRequest, 'µs CPU/req')} (${fmt(result.offMainUsPerRequest, 'µs')} off main thread)  avg ${fmt(result.latencyAvgMs, 'ms')}  errors ${result.errors}`);
      if (result.errors > 0) ctx.note(`${target.name}: ${result.errors} non-2xx/socket errors in round ${round + 1} (figure not trustworthy).`);
    }
  }
  return results;
}

export const rpsOf = (results: readonly RoundResult[]): number[] => results.map((result) => result.requestsPerSec);

/**
 * Requests per CPU-second of the server (1e6 / µs per request): throughput as it would be if the
 * server had a core to itself. Much less sensitive than req/s to other work on a shared machine.
 */
export const cpuRpsOf = (results: readonly RoundResult[]): number[] => results.map((result) => 1e6 / result.cpuUsPerRequest);
