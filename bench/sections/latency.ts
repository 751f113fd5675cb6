/**
 * Guarded-call latency at concurrency 1 through the client SDK (`PdpClient.decide`), against the
 * same client's round trip to the bare Fastify route. Calls are strictly sequential; the rounds
 * alternate between the two servers so both see the same machine state.
 */
import { rm } from 'node:fs/promises';
import { PdpClient } from '../../client/index.js';
import { demoQueryMix, makeDemoRoot } from '../lib/fixtures.js';
import type { BenchContext, SectionResult } from '../lib/context.js';
import { startServer, type RunningServer } from '../lib/processes.js';
import { sampleInRounds, type Sampler } from '../lib/decide-sampler.js';
import { fmt, quantile } from '../lib/stats.js';

export async function latencySection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  const servers: RunningServer[] = [];
  const samplers: Sampler[] = [];
  try {
    servers.push(await startServer('ours', { projectsRoot: root, appModule: ctx.appModule }));
    servers.push(await startServer('bare', { projectsRoot: root, appModule: ctx.appModule }));
    for (const server of servers) {
      // One connection: a guard at concurrency 1 reuses one keep-alive socket.
      samplers.push({ name: server.mode, client: new PdpClient({ baseUrl: server.origin, connections: 1 }), samples: [], failures: 0 });
    }
    await sampleInRounds(samplers, demoQueryMix(), ctx.settings.rounds + 1, ctx.settings.latencyCalls);
    const [ours, bare] = samplers as [Sampler, Sampler];
    for (const sampler of samplers) {
      ctx.log(
        `  ${sampler.name.padEnd(5)} p50 ${fmt(quantile(sampler.samples, 0.5), 'ms')} p99 ${fmt(quantile(sampler.samples, 0.99), 'ms')} p99.9 ${fmt(quantile(sampler.samples, 0.999), 'ms')} (${sampler.samples.length} calls, ${sampler.failures} failed)`,
      );
      if (sampler.failures > 0)
        ctx.note(
          `latency: ${sampler.failures} of ${sampler.samples.length} calls to ${sampler.name} failed (pdp_unavailable or pdp_rejected).`,
        );
    }
    const p50 = quantile(ours.samples, 0.5);
    const p99 = quantile(ours.samples, 0.99);
    const bareP50 = quantile(bare.samples, 0.5);
    const ratio = p50 / bareP50;
    const section = 'guarded call (PdpClient, c=1)';
    return {
      rows: [
        { section, figure: `service p50 (${ours.samples.length} calls)`, value: fmt(p50, 'ms'), target: '', pass: null },
        { section, figure: 'bare route p50', value: fmt(bareP50, 'ms'), target: '', pass: null },
        { section, figure: 'bare route p99', value: fmt(quantile(bare.samples, 0.99), 'ms'), target: '', pass: null },
        {
          section,
          figure: 'service p50 / bare p50',
          value: `${fmt(ratio)}×`,
          baseline: 'bare route',
          target: '≤ 1.5×',
          pass: ratio <= 1.5,
        },
        { section, figure: 'service p99', value: fmt(p99, 'ms'), target: '≤ 1 ms', pass: p99 <= 1 },
        { section, figure: 'service p99.9', value: fmt(quantile(ours.samples, 0.999), 'ms'), target: '', pass: null },
        {
          section,
          figure: 'failed calls',
          value: String(ours.failures + bare.failures),
          target: '0',
          pass: ours.failures + bare.failures === 0,
        },
      ],
      raw: Object.fromEntries(
        samplers.map((sampler) => [
          sampler.name,
          {
            calls: sampler.samples.length,
            failures: sampler.failures,
            p50: quantile(sampler.samples, 0.5),
            p90: quantile(sampler.samples, 0.9),
            p99: quantile(sampler.samples, 0.99),
            p999: quantile(sampler.samples, 0.999),
            max: quantile(sampler.samples, 1),
          },
        ]),
      ),
    };
  } finally {
    await Promise.all(samplers.map((sampler) => sampler.client.close()));
    await Promise.all(servers.map((server) => server.stop()));
    await rm(root, { recursive: true, force: true });
  }
}
