/**
 * Interleaved throughput runs: every target gets a warm-up, then the rounds go A B C, C B A, ...
 * so that drift of the machine and position in the round affect every target alike.
 */
import type { DecideQuery } from '../../schemas/index.js';
import type { BenchContext } from './context.js';
import { runLoad, type LoadResult } from './load.js';
import { fmt } from './stats.js';

export interface LoadTarget {
  name: string;
  origin: string;
  bodies: readonly DecideQuery[];
}

/** Runs the interleaved rounds; returns every target's per-round results in round order. */
export async function interleavedLoad(ctx: BenchContext, targets: readonly LoadTarget[]): Promise<Map<string, LoadResult[]>> {
  const { settings } = ctx;
  const results = new Map<string, LoadResult[]>(targets.map((target) => [target.name, []]));
  for (const target of targets) {
    await runLoad(ctx.generator, { origin: target.origin, bodies: target.bodies, connections: settings.connections, durationSec: settings.warmupSec });
  }
  for (let round = 0; round < settings.rounds; round += 1) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const target of order) {
      const result = await runLoad(ctx.generator, {
        origin: target.origin,
        bodies: target.bodies,
        connections: settings.connections,
        durationSec: settings.durationSec,
      });
      results.get(target.name)!.push(result);
      ctx.log(`  round ${round + 1}/${settings.rounds} ${target.name.padEnd(14)} ${fmt(result.requestsPerSec, 'req/s')}  avg ${fmt(result.latencyAvgMs, 'ms')}  errors ${result.errors}`);
      if (result.errors > 0) ctx.note(`${target.name}: ${result.errors} non-2xx/socket errors in round ${round + 1} (figure not trustworthy).`);
    }
  }
  return results;
}

export const rpsOf = (results: readonly LoadResult[]): number[] => results.map((result) => result.requestsPerSec);
