/**
 * bench/README.md#targets: a guarded call through `PdpClient.decide` over the service's unix socket against the
 * same over loopback TCP, on one real service (the entry point, which serves both), at concurrency 1,
 * in interleaved rounds: socket p50 ≤ TCP p50.
 */
import { rm } from 'node:fs/promises';
import { PdpClient } from '../../client/index.js';
import { demoQueryMix, makeDemoRoot } from '../lib/fixtures.js';
import { waitFor, type BenchContext, type SectionResult } from '../lib/context.js';
import { startMain, type MainProcess } from '../lib/processes.js';
import { sampleInRounds, type Sampler } from '../lib/decide-sampler.js';
import { fmt, quantile } from '../lib/stats.js';

export async function socketSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  let server: MainProcess | undefined;
  const samplers: Sampler[] = [];
  try {
    server = await startMain(root, ctx.useDist);
    // One connection each: a guard at concurrency 1 reuses one keep-alive socket.
    samplers.push(
      { name: 'tcp', client: new PdpClient({ baseUrl: server.origin, connections: 1 }), samples: [], failures: 0 },
      { name: 'unix', client: new PdpClient({ socketPath: server.socketPath, connections: 1 }), samples: [], failures: 0 },
    );
    const ready = samplers.map((sampler) => async () => (await sampler.client.check()).ok);
    await waitFor(async () => (await Promise.all(ready.map((check) => check()))).every(Boolean), 30_000, 50);
    await sampleInRounds(samplers, demoQueryMix(), ctx.settings.rounds + 1, ctx.settings.latencyCalls);
    const [tcp, unix] = samplers as [Sampler, Sampler];
    for (const sampler of samplers) {
      ctx.log(
        `  ${sampler.name.padEnd(5)} p50 ${fmt(quantile(sampler.samples, 0.5), 'ms')} p99 ${fmt(quantile(sampler.samples, 0.99), 'ms')} (${sampler.samples.length} calls, ${sampler.failures} failed)`,
      );
    }
    const tcpP50 = quantile(tcp.samples, 0.5);
    const unixP50 = quantile(unix.samples, 0.5);
    const section = 'unix socket (PdpClient, c=1)';
    return {
      rows: [
        { section, figure: `loopback TCP p50 (${tcp.samples.length} calls)`, value: fmt(tcpP50, 'ms'), target: '', pass: null },
        { section, figure: `unix socket p50 (${unix.samples.length} calls)`, value: fmt(unixP50, 'ms'), target: '', pass: null },
        { section, figure: 'unix socket p99', value: fmt(quantile(unix.samples, 0.99), 'ms'), target: '', pass: null },
        {
          section,
          figure: 'unix socket p50 / TCP p50',
          value: `${fmt(unixP50 / tcpP50)}×`,
          baseline: 'loopback TCP',
          target: '≤ 1×',
          pass: unixP50 <= tcpP50,
        },
        {
          section,
          figure: 'failed calls',
          value: String(tcp.failures + unix.failures),
          target: '0',
          pass: tcp.failures + unix.failures === 0,
        },
      ],
      raw: Object.fromEntries(
        samplers.map((sampler) => [
          sampler.name,
          {
            calls: sampler.samples.length,
            failures: sampler.failures,
            p50: quantile(sampler.samples, 0.5),
            p99: quantile(sampler.samples, 0.99),
          },
        ]),
      ),
    };
  } finally {
    await Promise.all(samplers.map((sampler) => sampler.client.close()));
    await server?.stop();
    await rm(root, { recursive: true, force: true });
  }
}
