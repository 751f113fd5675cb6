/**
 * Revocation latency (docs/api.md#resolving-a-decision "Freshness"):
 *  - external edit: atomic rewrite of the policy file (temp file in `.ideai/` + rename over), then
 *    a tight `/decide` loop over HTTP until the decision flips; grants and revocations alternate;
 *  - API write: `PUT`/`DELETE` of an agent override, then the very next decision must reflect it.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Pool } from 'undici';
import { READ_ONLY_DEFAULT, type DecideQuery, type PolicyDocument } from '../../schemas/index.js';
import { POLICY_FILE, makeDemoRoot } from '../lib/fixtures.js';
import { postDecide, singleConnectionPool, waitFor, type BenchContext, type SectionResult } from '../lib/context.js';
import { BENCH_ADMIN_TOKEN, startServer } from '../lib/processes.js';
import { fmt, quantile } from '../lib/stats.js';

const TRIAL_TIMEOUT_MS = 2_000;
const QUERY: DecideQuery = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };
const GRANTED_TOOLS = [...READ_ONLY_DEFAULT, 'idea_memory_write'];

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** 20 to 60 ms between API trials. */
const jitter = (): Promise<void> => pause(20 + Math.random() * 40);

function withQaOverride(base: PolicyDocument, granted: boolean): PolicyDocument {
  const others = (base.agents ?? []).filter((agent) => agent.agentId !== 'QA');
  const agents = granted ? [...others, { agentId: 'QA', policy: { allowedTools: GRANTED_TOOLS } }] : others;
  return { ...base, agents };
}

interface EditSeries {
  latencies: number[];
  /** Trials slower than 100 ms. */
  slow: number;
  /** Trials not reflected within TRIAL_TIMEOUT_MS. */
  misses: number;
}

/**
 * `count` atomic rewrites of the policy file (temp file in `.ideai/`, then rename over), each
 * `gap` ms (random in the range) after the previous one was reflected; the clock runs from just
 * before the rename to the first `/decide` answer that reflects it. Grants and revocations alternate.
 */
async function fileEditTrials(
  pool: Pool,
  policyPath: string,
  base: PolicyDocument,
  count: number,
  gap: readonly [number, number],
): Promise<EditSeries> {
  const series: EditSeries = { latencies: [], slow: 0, misses: 0 };
  let granted = (await postDecide(pool, QUERY)).allow;
  for (let trial = 0; trial < count; trial += 1) {
    granted = !granted;
    await pause(gap[0] + Math.random() * (gap[1] - gap[0]));
    const temp = path.join(path.dirname(policyPath), `.mcp-tool-permissions.json.bench-${trial}.tmp`);
    await writeFile(temp, `${JSON.stringify(withQaOverride(base, granted), null, 2)}\n`);
    const start = performance.now();
    await rename(temp, policyPath);
    let seen = false;
    while (performance.now() - start < TRIAL_TIMEOUT_MS) {
      if ((await postDecide(pool, QUERY)).allow === granted) {
        seen = true;
        break;
      }
    }
    const elapsed = performance.now() - start;
    series.latencies.push(elapsed);
    if (elapsed > 100) series.slow += 1;
    if (!seen) {
      series.misses += 1;
      // Back to a known state before the next trial (a lost event may never be reloaded).
      await waitFor(async () => (await postDecide(pool, QUERY)).allow === granted, 10_000).catch(() => undefined);
    }
  }
  return series;
}

export async function revocationSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  const server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule });
  const pool = singleConnectionPool(server.origin);
  const policyPath = path.join(root, 'demo', POLICY_FILE);
  const trials = ctx.settings.revocationTrials;
  try {
    const base = JSON.parse(await readFile(policyPath, 'utf8')) as PolicyDocument;
    await waitFor(async () => (await postDecide(pool, QUERY)).allow === false, 5_000);

    // External edits, first seconds-scale apart (an editor save, a checkout), then in quick
    // succession (20-60 ms after the previous one was seen), which stresses the watcher.
    const spaced = await fileEditTrials(pool, policyPath, base, trials, [150, 300]);
    const rapid = await fileEditTrials(pool, policyPath, base, Math.max(10, Math.round(trials / 2)), [20, 60]);
    for (const [label, series] of [
      ['150-300 ms apart', spaced],
      ['20-60 ms apart', rapid],
    ] as const) {
      ctx.log(
        `  file edit → decision (${label}): p50 ${fmt(quantile(series.latencies, 0.5), 'ms')} p99 ${fmt(quantile(series.latencies, 0.99), 'ms')} max ${fmt(quantile(series.latencies, 1), 'ms')}; ${series.slow} of ${series.latencies.length} over 100 ms, ${series.misses} over ${TRIAL_TIMEOUT_MS} ms`,
      );
    }

    // API writes: the acknowledged write must be visible to the very next decision.
    const agentPath = '/projects/demo/mcp-tool-permissions/agents/QA';
    const ackLatencies: number[] = [];
    const visibleLatencies: number[] = [];
    let stale = 0;
    let apiFailures = 0;
    for (let trial = 0; trial < trials; trial += 1) {
      const granted = trial % 2 === 0;
      await jitter();
      const start = performance.now();
      const response = await pool.request({
        method: granted ? 'PUT' : 'DELETE',
        path: agentPath,
        headers: granted
          ? { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' }
          : { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` },
        ...(granted ? { body: JSON.stringify({ allowedTools: GRANTED_TOOLS }) } : {}),
      });
      await response.body.text();
      const acked = performance.now();
      if (response.statusCode !== 200) {
        apiFailures += 1;
        continue;
      }
      ackLatencies.push(acked - start);
      const first = await postDecide(pool, QUERY);
      if (first.allow !== granted) {
        stale += 1;
        await waitFor(async () => (await postDecide(pool, QUERY)).allow === granted, TRIAL_TIMEOUT_MS).catch(() => undefined);
      }
      visibleLatencies.push(performance.now() - acked);
    }
    ctx.log(
      `  API write ack: p50 ${fmt(quantile(ackLatencies, 0.5), 'ms')} p99 ${fmt(quantile(ackLatencies, 0.99), 'ms')}; ack → decision p99 ${fmt(quantile(visibleLatencies, 0.99), 'ms')}; stale ${stale}; failed writes ${apiFailures}`,
    );
    if (apiFailures > 0) ctx.note(`revocation: ${apiFailures} API writes did not answer 200.`);

    const section = 'revocation';
    const spacedP99 = quantile(spaced.latencies, 0.99);
    const rapidP99 = quantile(rapid.latencies, 0.99);
    const visibleP99 = quantile(visibleLatencies, 0.99);
    return {
      rows: [
        {
          section,
          figure: `file rename-over → decision p50 (${spaced.latencies.length} edits 150-300 ms apart)`,
          value: fmt(quantile(spaced.latencies, 0.5), 'ms'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'file rename-over → decision p99 (150-300 ms apart)',
          value: fmt(spacedP99, 'ms'),
          target: '≤ 100 ms',
          pass: spacedP99 <= 100 && spaced.misses === 0,
        },
        {
          section,
          figure: `file rename-over → decision p50 (${rapid.latencies.length} edits 20-60 ms apart)`,
          value: fmt(quantile(rapid.latencies, 0.5), 'ms'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'file rename-over → decision p99 (20-60 ms apart)',
          value: fmt(rapidP99, 'ms'),
          baseline: `${rapid.slow}/${rapid.latencies.length} over 100 ms`,
          target: '≤ 100 ms',
          pass: rapidP99 <= 100 && rapid.misses === 0,
        },
        {
          section,
          figure: 'API write acknowledged (PUT/DELETE agent) p50',
          value: fmt(quantile(ackLatencies, 0.5), 'ms'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'API ack → reflecting decision p99',
          value: fmt(visibleP99, 'ms'),
          target: '≤ 100 ms',
          pass: visibleP99 <= 100 && apiFailures === 0,
        },
        {
          section,
          figure: 'decisions stale after an acknowledged write',
          value: `${stale}/${ackLatencies.length}`,
          target: '0',
          pass: stale === 0 && apiFailures === 0,
        },
      ],
      raw: { spaced, rapid, ackLatencies, visibleLatencies, stale, apiFailures },
    };
  } finally {
    await pool.close();
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
}
