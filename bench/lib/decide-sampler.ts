/** Sequential `PdpClient.decide` round trips, the latency and socket sections' one way to sample them. */
import type { PdpClient } from '../../client/index.js';
import type { DecideQuery } from '../../schemas/index.js';

export interface Sampler {
  name: string;
  client: PdpClient;
  samples: number[];
  failures: number;
}

/** `count` sequential decisions; when `record`, pushes each round trip in ms and counts those the client could not get. */
async function sample(sampler: Sampler, queries: readonly DecideQuery[], count: number, record: boolean): Promise<void> {
  for (let i = 0; i < count; i += 1) {
    const query = queries[i % queries.length]!;
    const start = performance.now();
    const decision = await sampler.client.decide(query);
    const elapsed = performance.now() - start;
    if (!record) continue;
    sampler.samples.push(elapsed);
    if (decision.reason === 'pdp_unavailable' || decision.reason === 'pdp_rejected') sampler.failures += 1;
  }
}

/**
 * 2,000 unrecorded calls each, then `calls` in all spread over at least 2 rounds, the samplers'
 * order reversed every other round so that each sees the same machine state.
 */
export async function sampleInRounds(
  samplers: readonly Sampler[],
  queries: readonly DecideQuery[],
  rounds: number,
  calls: number,
): Promise<void> {
  const roundCount = Math.max(2, rounds);
  const perRound = Math.ceil(calls / roundCount);
  for (const sampler of samplers) await sample(sampler, queries, 2_000, false);
  for (let round = 0; round < roundCount; round += 1) {
    const order = round % 2 === 0 ? samplers : [...samplers].reverse();
    for (const sampler of order) await sample(sampler, queries, perRound, true);
  }
}
