/**
 * Burst recovery of one `PdpClient`: 5,000 concurrent `decide()` calls (far beyond its 16
 * connections, so many are denied on their deadline: fail closed), then one call, timed, which must
 * get its real decision from the service, not a local denial. Repeated `rounds` times on the same
 * client, with a short pause so each burst starts from an idle service. A call made right after a
 * burst is launched is timed too (no target): it waits behind the burst or is denied on its deadline.
 */
import { rm } from 'node:fs/promises';
import { CLIENT_DENIAL_REASONS, PdpClient } from '../../client/index.js';
import type { DecideQuery } from '../../schemas/index.js';
import { demoQueryMix, makeDemoRoot } from '../lib/fixtures.js';
import type { BenchContext, SectionResult } from '../lib/context.js';
import { startServer, type RunningServer } from '../lib/processes.js';
import { fmt, quantile } from '../lib/stats.js';

const BURST = 5_000;
const TARGET_MS = 50;
const LOCAL_REASONS: readonly string[] = CLIENT_DENIAL_REASONS;

interface Trial {
  burstMs: number;
  denied: number;
  /** One more call made right after the burst was launched, queued behind its 5,000 (no target). */
  duringMs: number;
  duringReal: boolean;
  nextMs: number;
  nextReal: boolean;
}

async function timed(call: Promise<{ reason: string }>): Promise<{ ms: number; real: boolean }> {
  const started = performance.now();
  const decision = await call;
  return { ms: performance.now() - started, real: !LOCAL_REASONS.includes(decision.reason) };
}

async function trial(client: PdpClient, queries: readonly DecideQuery[], next: DecideQuery): Promise<Trial> {
  const started = performance.now();
  const launched = Array.from({ length: BURST }, (_unused, index) => client.decide(queries[index % queries.length]!));
  const during = timed(client.decide(next));
  const decisions = await Promise.all(launched);
  const burstMs = performance.now() - started;
  const denied = decisions.filter((decision) => LOCAL_REASONS.includes(decision.reason)).length;
  const { ms: duringMs, real: duringReal } = await during;
  const { ms: nextMs, real: nextReal } = await timed(client.decide(next));
  return { burstMs, denied, duringMs, duringReal, nextMs, nextReal };
}

export async function burstSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  let server: RunningServer | undefined;
  let client: PdpClient | undefined;
  try {
    server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule });
    client = new PdpClient({ baseUrl: server.origin });
    const queries = demoQueryMix();
    const next: DecideQuery = { project: 'demo', requester: 'QA', tool: 'idea_ticket_read' };
    for (let i = 0; i < 500; i += 1) await client.decide(queries[i % queries.length]!);
    const trials: Trial[] = [];
    const rounds = Math.max(3, ctx.settings.rounds);
    for (let round = 0; round < rounds; round += 1) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const result = await trial(client, queries, next);
      trials.push(result);
      ctx.log(
        `  burst ${round + 1}: ${fmt(result.burstMs, 'ms')}, ${result.denied} of ${BURST} denied locally; a call made during it ${fmt(result.duringMs, 'ms')} (${result.duringReal ? 'real decision' : 'local denial'}); next call ${fmt(result.nextMs, 'ms')} (${result.nextReal ? 'real decision' : 'LOCAL DENIAL'})`,
      );
    }
    const nextTimes = trials.map((one) => one.nextMs);
    const worst = Math.max(...nextTimes);
    const real = trials.filter((one) => one.nextReal).length;
    const section = 'burst recovery (PdpClient)';
    return {
      rows: [
        {
          section,
          figure: `next call after ${BURST.toLocaleString('en-US')} concurrent decide(), worst of ${trials.length}`,
          value: fmt(worst, 'ms'),
          target: `≤ ${TARGET_MS} ms`,
          pass: worst <= TARGET_MS && real === trials.length,
        },
        { section, figure: 'next call, median', value: fmt(quantile(nextTimes, 0.5), 'ms'), target: '', pass: null },
        {
          section,
          figure: 'next call got its real decision',
          value: `${real} of ${trials.length}`,
          target: 'all',
          pass: real === trials.length,
        },
        {
          section,
          figure: 'burst calls denied locally (median)',
          value: `${fmt(
            quantile(
              trials.map((one) => one.denied),
              0.5,
            ),
          )} of ${BURST.toLocaleString('en-US')}`,
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'a call made right after the burst was launched, median',
          value: `${fmt(
            quantile(
              trials.map((one) => one.duringMs),
              0.5,
            ),
            'ms',
          )}, ${String(trials.filter((one) => one.duringReal).length)} of ${String(trials.length)} real`,
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'burst duration (median)',
          value: fmt(
            quantile(
              trials.map((one) => one.burstMs),
              0.5,
            ),
            'ms',
          ),
          target: '',
          pass: null,
        },
      ],
      raw: { burst: BURST, trials },
    };
  } finally {
    await client?.close();
    await server?.stop();
    await rm(root, { recursive: true, force: true });
  }
}
