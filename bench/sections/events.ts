/**
 * Change → `policy` event on `GET /events` (docs/api.md#targets, docs/api.md#live-changes-get-events), against the service's real entry
 * point. One stream follows the `demo` project; two series of changes alternate QA's access to a
 * write tool:
 *  - API write: `PUT`/`DELETE` of QA's override; the clock runs from just before the request is
 *    sent (the change cannot be visible to `/decide` earlier) to the event with the revision the
 *    write answered;
 *  - external edit: a temp file in `.ideai/` renamed over the policy file; the clock runs from just
 *    before the rename to the event with the revision of the new bytes (SHA-256, docs/api.md#projects-and-files).
 * As each event arrives, `/decide` is asked at once: it must already answer with the event's
 * revision ("never before it").
 */
import { createHash } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Pool } from 'undici';
import { PdpClient } from '../../client/index.js';
import { READ_ONLY_DEFAULT, type DecideQuery, type PolicyDocument } from '../../schemas/index.js';
import type { PolicyEvent } from '../../schemas/events.js';
import { POLICY_FILE, makeDemoRoot } from '../lib/fixtures.js';
import { postDecide, singleConnectionPool, waitFor, type BenchContext, type SectionResult } from '../lib/context.js';
import { BENCH_ADMIN_TOKEN, startMain, type MainProcess } from '../lib/processes.js';
import { fmt, quantile } from '../lib/stats.js';

const PROJECT = 'demo';
const QUERY: DecideQuery = { project: PROJECT, requester: 'QA', tool: 'idea_memory_write' };
const GRANTED_TOOLS = [...READ_ONLY_DEFAULT, QUERY.tool];
const AGENT_PATH = `/projects/${PROJECT}/mcp-tool-permissions/agents/QA`;
const TARGET_MS = 100;
const TRIAL_TIMEOUT_MS = 2_000;
const WARMUP_TRIALS = 5;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const between = (low: number, high: number): Promise<void> => pause(low + Math.random() * (high - low));

interface Check {
  /** The revision `/decide` answered with, asked as soon as the event arrived. */
  revision: string;
  allow: boolean;
}

interface Arrival {
  /** `performance.now()` when the chunk that completed the event was read. */
  at: number;
  event: PolicyEvent;
  check: Promise<Check>;
}

/**
 * `GET /events?project=demo` followed with the client package's `watchEvents` (its own connection,
 * as an integrator reads it); every policy event is checked against `/decide` at once.
 */
function openPolicyStream(origin: string, decidePool: Pool) {
  const arrivals: Arrival[] = [];
  const waiters = new Set<() => void>();
  const pdp = new PdpClient({ baseUrl: origin });
  const subscription = pdp.watchEvents({
    project: PROJECT,
    onPolicy: (event) => {
      if (event.project !== PROJECT) return;
      const at = performance.now();
      const check = postDecide(decidePool, QUERY).then((decision) => ({ revision: decision.revision, allow: decision.allow }));
      // A rejection is read when the trial awaits it; this keeps Node from calling it unhandled before then.
      check.catch(() => undefined);
      arrivals.push({ at, event, check });
      for (const wake of waiters) wake();
    },
  });
  return {
    arrivals,
    /** The first event after `from` (an index into `arrivals`) with `revision`, or undefined after `timeoutMs`. */
    next(from: number, revision: string, timeoutMs: number): Promise<Arrival | undefined> {
      return new Promise((resolve) => {
        const wake = (): void => {
          const found = arrivals.slice(from).find((arrival) => arrival.event.revision === revision);
          if (found === undefined) return;
          waiters.delete(wake);
          clearTimeout(timer);
          resolve(found);
        };
        const timer = setTimeout(() => {
          waiters.delete(wake);
          resolve(undefined);
        }, timeoutMs);
        waiters.add(wake);
        wake();
      });
    },
    close: async (): Promise<void> => {
      subscription.close();
      await pdp.close();
    },
  };
}
type PolicyStream = ReturnType<typeof openPolicyStream>;

interface Series {
  latencies: number[];
  /** Events after which `/decide` still answered with another revision. */
  early: number;
  /** Events whose checking decision had the right revision but the wrong answer. */
  wrongAnswers: number;
  /** Changes with no matching event within TRIAL_TIMEOUT_MS (counted as that long). */
  misses: number;
  /** API writes: the write's `200` → its event (0 when the event came first); context. */
  afterAck: number[];
  /** Write failures (non-200 answers). */
  failures: number;
}

const overTarget = (series: Series): number => series.latencies.filter((ms) => ms > TARGET_MS).length;

const emptySeries = (): Series => ({ latencies: [], early: 0, wrongAnswers: 0, misses: 0, afterAck: [], failures: 0 });

/** Adds one change to the series; answers whether its event was heard. */
async function record(series: Series, arrival: Arrival | undefined, start: number, granted: boolean): Promise<boolean> {
  if (arrival === undefined) {
    series.misses += 1;
    series.latencies.push(TRIAL_TIMEOUT_MS);
    return false;
  }
  series.latencies.push(arrival.at - start);
  const check = await arrival.check;
  if (check.revision !== arrival.event.revision) series.early += 1;
  else if (check.allow !== granted || arrival.event.status !== 'ok') series.wrongAnswers += 1;
  return true;
}

async function apiTrial(stream: PolicyStream, adminPool: Pool, series: Series, granted: boolean): Promise<boolean> {
  const from = stream.arrivals.length;
  const start = performance.now();
  const response = await adminPool.request({
    method: granted ? 'PUT' : 'DELETE',
    path: AGENT_PATH,
    headers: granted
      ? { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' }
      : { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` },
    ...(granted ? { body: JSON.stringify({ allowedTools: GRANTED_TOOLS }) } : {}),
  });
  const text = await response.body.text();
  const acked = performance.now();
  if (response.statusCode !== 200) {
    series.failures += 1;
    return false;
  }
  const { revision } = JSON.parse(text) as { revision: string };
  const arrival = await stream.next(from, revision, TRIAL_TIMEOUT_MS);
  if (arrival !== undefined) series.afterAck.push(Math.max(0, arrival.at - acked));
  return record(series, arrival, start, granted);
}

function withQaOverride(base: PolicyDocument, granted: boolean): PolicyDocument {
  const others = (base.agents ?? []).filter((agent) => agent.agentId !== 'QA');
  return { ...base, agents: granted ? [...others, { agentId: 'QA', policy: { allowedTools: GRANTED_TOOLS } }] : others };
}

async function fileTrial(
  stream: PolicyStream,
  policyPath: string,
  base: PolicyDocument,
  series: Series,
  granted: boolean,
): Promise<boolean> {
  const bytes = `${JSON.stringify(withQaOverride(base, granted), null, 2)}\n`;
  const revision = createHash('sha256').update(bytes).digest('hex').slice(0, 16);
  const temp = path.join(path.dirname(policyPath), `.mcp-tool-permissions.json.bench-events-${series.latencies.length}.tmp`);
  await writeFile(temp, bytes);
  const from = stream.arrivals.length;
  const start = performance.now();
  await rename(temp, policyPath);
  return record(series, await stream.next(from, revision, TRIAL_TIMEOUT_MS), start, granted);
}

/** Runs `count` trials, each flipping QA's access, `gap` ms apart (random in the range). */
async function runSeries(
  count: number,
  gap: readonly [number, number],
  decidePool: Pool,
  trial: (series: Series, granted: boolean) => Promise<boolean>,
) {
  const series = emptySeries();
  let granted = (await postDecide(decidePool, QUERY)).allow;
  for (let index = 0; index < count; index += 1) {
    await between(gap[0], gap[1]);
    granted = !granted;
    // After a change that was not heard, the next trial flips from what decides now.
    if (!(await trial(series, granted))) granted = (await postDecide(decidePool, QUERY)).allow;
  }
  return series;
}

export async function eventsSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  let server: MainProcess | undefined;
  let stream: PolicyStream | undefined;
  const pools: Pool[] = [];
  try {
    server = await startMain(root, ctx.useDist);
    const origin = server.origin;
    const [decidePool, adminPool] = [0, 1].map(() => singleConnectionPool(origin)) as [Pool, Pool];
    pools.push(decidePool, adminPool);
    await waitFor(
      async () =>
        (await decidePool.request({ method: 'GET', path: '/readyz' }).then((r) => r.body.text().then(() => r.statusCode))) === 200,
      20_000,
    );
    const opened = openPolicyStream(origin, decidePool);
    stream = opened;
    // The event sent when the stream opens (docs/api.md#live-changes-get-events) says it is live.
    await waitFor(async () => Promise.resolve(opened.arrivals.length > 0), 5_000);

    const policyPath = path.join(root, PROJECT, POLICY_FILE);
    const base = JSON.parse(await readFile(policyPath, 'utf8')) as PolicyDocument;
    const api = (series: Series, granted: boolean): Promise<boolean> => apiTrial(opened, adminPool, series, granted);
    const file = (series: Series, granted: boolean): Promise<boolean> => fileTrial(opened, policyPath, base, series, granted);
    const trials = ctx.settings.revocationTrials;
    await runSeries(WARMUP_TRIALS, [20, 60], decidePool, api);
    const apiSeries = await runSeries(trials, [20, 60], decidePool, api);
    await runSeries(WARMUP_TRIALS, [150, 300], decidePool, file);
    const fileSeries = await runSeries(trials, [150, 300], decidePool, file);

    for (const [label, series] of [
      ['API write sent', apiSeries],
      ['file rename-over', fileSeries],
    ] as const) {
      const slowest = [...series.latencies].sort((a, b) => b - a).slice(0, 3);
      ctx.log(
        `  ${label} → policy event: p50 ${fmt(quantile(series.latencies, 0.5), 'ms')} p99 ${fmt(quantile(series.latencies, 0.99), 'ms')}, slowest ${slowest.map((ms) => fmt(ms, 'ms')).join(', ')}; ${overTarget(series)} over ${TARGET_MS} ms, ${series.early} before /decide saw the change, ${series.wrongAnswers} wrong answers, ${series.misses} over ${TRIAL_TIMEOUT_MS} ms, ${series.failures} failed writes`,
      );
    }
    ctx.log(
      `  API write 200 → policy event: p50 ${fmt(quantile(apiSeries.afterAck, 0.5), 'ms')} p99 ${fmt(quantile(apiSeries.afterAck, 0.99), 'ms')}; ${apiSeries.afterAck.filter((ms) => ms === 0).length} of ${apiSeries.afterAck.length} events came before the 200`,
    );
    for (const [label, series] of [
      ['API write', apiSeries],
      ['file edit', fileSeries],
    ] as const) {
      if (series.wrongAnswers > 0)
        ctx.note(
          `events: ${series.wrongAnswers} ${label} events whose checking decision had the event's revision but not the expected answer or status.`,
        );
      if (series.failures > 0) ctx.note(`events: ${series.failures} ${label}s did not answer 200.`);
    }

    const section = 'events (real service)';
    const healthy = (series: Series): boolean => series.misses === 0 && series.failures === 0 && series.wrongAnswers === 0;
    const apiP99 = quantile(apiSeries.latencies, 0.99);
    const fileP99 = quantile(fileSeries.latencies, 0.99);
    const early = apiSeries.early + fileSeries.early;
    const checked = apiSeries.latencies.length + fileSeries.latencies.length - apiSeries.misses - fileSeries.misses;
    return {
      rows: [
        {
          section,
          figure: `API write (PUT/DELETE agent) sent → policy event p50 (${apiSeries.latencies.length} writes)`,
          value: fmt(quantile(apiSeries.latencies, 0.5), 'ms'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'API write sent → policy event p99',
          value: fmt(apiP99, 'ms'),
          baseline: `${overTarget(apiSeries)}/${apiSeries.latencies.length} over ${TARGET_MS} ms`,
          target: `≤ ${TARGET_MS} ms`,
          pass: apiP99 <= TARGET_MS && healthy(apiSeries),
        },
        // Context: at the 200 the write is visible to /decide (docs/api.md#resolving-a-decision), so this is the event's own delay.
        {
          section,
          figure: 'API write 200 → policy event p99',
          value: fmt(quantile(apiSeries.afterAck, 0.99), 'ms'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: `file rename-over → policy event p50 (${fileSeries.latencies.length} edits 150-300 ms apart)`,
          value: fmt(quantile(fileSeries.latencies, 0.5), 'ms'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'file rename-over → policy event p99',
          value: fmt(fileP99, 'ms'),
          baseline: `${overTarget(fileSeries)}/${fileSeries.latencies.length} over ${TARGET_MS} ms`,
          target: `≤ ${TARGET_MS} ms`,
          pass: fileP99 <= TARGET_MS && healthy(fileSeries),
        },
        {
          section,
          figure: 'policy events before /decide saw the change',
          value: `${early}/${checked}`,
          target: '0',
          pass: early === 0 && checked > 0,
        },
      ],
      raw: { api: apiSeries, file: fileSeries },
    };
  } finally {
    await stream?.close();
    await Promise.all(pools.map((pool) => pool.close()));
    await server?.stop();
    await rm(root, { recursive: true, force: true });
  }
}
