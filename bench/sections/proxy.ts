/**
 * `idea-mcp-proxy` (docs/api.md#guarding-any-mcp-server-idea-mcp-proxy, targets of bench/README.md#targets): an allowed `tools/call` through the proxy
 * against the same call to a server guarded in process, and a request the proxy only forwards
 * (`ping`, `resources/list`) against the same server reached directly. Three stdio sessions of the
 * MCP SDK's `Client`, alive side by side and measured in interleaved rounds at concurrency 1, the
 * decisions from the service's real entry point. A last row says what waking a process that slept
 * costs on this machine, which the proxied call pays twice (bench/lib/wake-cost.ts).
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { EmptyResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { waitFor, type BenchContext, type SectionResult } from '../lib/context.js';
import { makeDemoRoot, REPO_ROOT } from '../lib/fixtures.js';
import { startMain } from '../lib/processes.js';
import { fmt, quantile } from '../lib/stats.js';
import { measureWakeCost } from '../lib/wake-cost.js';

const SERVER = path.join(REPO_ROOT, 'bench', 'servers', 'mcp-stdio.ts');
const PROXY = path.join(REPO_ROOT, 'client', 'proxy', 'cli.ts');
const FORWARD_TARGET_MS = 0.1;

async function connect(args: string[], env: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'bench-host', version: '1.0.0' });
  const clean = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('PDP_'))) as Record<string, string>;
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args, cwd: REPO_ROOT, env: { ...clean, ...env }, stderr: 'ignore' }),
  );
  return client;
}

/** Milliseconds of each of `count` sequential runs of `work`. */
async function timed(count: number, work: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const started = performance.now();
    await work();
    times.push(performance.now() - started);
  }
  return times;
}

export async function proxySection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  const service = await startMain(root, ctx.useDist);
  const env = { PDP_URL: service.origin, IDEA_AGENT_ID: 'QA' };
  const clients: Client[] = [];
  try {
    await waitFor(async () => (await fetch(`${service.origin}/readyz`).catch(() => undefined))?.status === 200, 120_000, 50);
    const guarded = await connect(['--import', 'tsx', SERVER], { ...env, BENCH_GUARD: '1' });
    clients.push(guarded);
    const direct = await connect(['--import', 'tsx', SERVER], env);
    clients.push(direct);
    const proxied = await connect(
      [
        '--import',
        'tsx',
        PROXY,
        '--pdp',
        service.origin,
        '--project',
        'demo',
        '--agent',
        'QA',
        '--timeout-ms',
        '5000',
        '--',
        process.execPath,
        '--import',
        'tsx',
        SERVER,
      ],
      {},
    );
    clients.push(proxied);
    const call = (client: Client) => () => client.callTool({ name: 'idea_ticket_read', arguments: { issueRef: '#82' } });
    const ping = (client: Client) => () => client.request({ method: 'ping' }, EmptyResultSchema);
    const list = (client: Client) => () => client.listResources();
    const check = await proxied.callTool({ name: 'idea_ticket_read', arguments: {} });
    if (check.isError === true)
      throw new Error(`the proxied call was refused (${JSON.stringify(check.content)}): the bench measures allowed calls`);

    const rounds = ctx.settings.rounds;
    const perRound = Math.max(200, Math.round(ctx.settings.latencyCalls / rounds / 4));
    const figures = { guardedCall: [] as number[], proxiedCall: [] as number[], directPing: [] as number[], proxiedPing: [] as number[] };
    const lists = { direct: [] as number[], proxied: [] as number[] };
    await timed(perRound, call(guarded));
    await timed(perRound, call(proxied));
    for (let round = 0; round < rounds; round += 1) {
      figures.guardedCall.push(...(await timed(perRound, call(guarded))));
      figures.proxiedCall.push(...(await timed(perRound, call(proxied))));
      figures.directPing.push(...(await timed(perRound, ping(direct))));
      figures.proxiedPing.push(...(await timed(perRound, ping(proxied))));
      lists.direct.push(...(await timed(perRound, list(direct))));
      lists.proxied.push(...(await timed(perRound, list(proxied))));
    }
    const [awake, asleep] = await measureWakeCost([0, 500], 2000);
    const p50 = (values: number[]) => quantile(values, 0.5);
    const callGap = p50(figures.proxiedCall) - p50(figures.guardedCall);
    const pingGap = p50(figures.proxiedPing) - p50(figures.directPing);
    const listGap = p50(lists.proxied) - p50(lists.direct);
    // The proxy is one more process, asleep while the service decides, woken twice per call (bench/README.md#targets).
    const callAllowance = pingGap + (2 * (asleep?.roundTripP50Us ?? 0)) / 1000;
    const section = 'idea-mcp-proxy (stdio, c=1)';
    const n = figures.guardedCall.length;
    return {
      rows: [
        {
          section,
          figure: `allowed tools/call, in-process guard p50 (${String(n)} calls)`,
          value: fmt(p50(figures.guardedCall), 'ms'),
          target: '',
          pass: null,
        },
        { section, figure: 'allowed tools/call through the proxy p50', value: fmt(p50(figures.proxiedCall), 'ms'), target: '', pass: null },
        {
          section,
          figure: 'tools/call: proxy p50 − in-process guard p50',
          value: fmt(callGap, 'ms'),
          baseline: 'in-process guard',
          target: `≤ ping gap + 2 × wake = +${fmt(callAllowance, 'ms')}`,
          pass: callGap <= callAllowance,
        },
        {
          section,
          figure: 'ping p50: direct / through the proxy',
          value: `${fmt(p50(figures.directPing), 'ms')} / ${fmt(p50(figures.proxiedPing), 'ms')}`,
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'ping: proxy p50 − direct p50',
          value: fmt(pingGap, 'ms'),
          baseline: 'same server, direct',
          target: `≤ +${String(FORWARD_TARGET_MS)} ms`,
          pass: pingGap <= FORWARD_TARGET_MS,
        },
        {
          section,
          figure: 'resources/list p50: direct / through the proxy',
          value: `${fmt(p50(lists.direct), 'ms')} / ${fmt(p50(lists.proxied), 'ms')}`,
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'resources/list: proxy p50 − direct p50',
          value: fmt(listGap, 'ms'),
          baseline: 'same server, direct',
          target: `≤ +${String(FORWARD_TARGET_MS)} ms`,
          pass: listGap <= FORWARD_TARGET_MS,
        },
        {
          section,
          figure: 'this machine: a pipe round trip after 0 / 500 µs idle (bench/wake-cost.ts)',
          value: `${fmt(awake?.roundTripP50Us ?? NaN, 'µs')} / ${fmt(asleep?.roundTripP50Us ?? NaN, 'µs')}`,
          target: '',
          pass: null,
        },
      ],
      raw: {
        p50: {
          guardedCall: p50(figures.guardedCall),
          proxiedCall: p50(figures.proxiedCall),
          directPing: p50(figures.directPing),
          proxiedPing: p50(figures.proxiedPing),
          directList: p50(lists.direct),
          proxiedList: p50(lists.proxied),
        },
        wakeCost: { awake, asleep },
      },
    };
  } finally {
    for (const client of clients) await client.close().catch(() => undefined);
    await service.stop();
    await rm(root, { recursive: true, force: true });
  }
}
