/**
 * Approval answered → the waiting guarded call runs (docs/api.md#targets, docs/api.md#approvals-and-temporary-grants), against the service's
 * real entry point with a state folder (so the `once` answer is saved, and its use removed from the
 * file, as in production). Each trial: a call on ask opens a request; a waiter long-polls it
 * (`GET .../approvals/:id?waitSeconds=30`) and re-decides as soon as the poll returns, as a guard
 * with `approval: { waitMs }` does; the user's `once` answer is posted on another connection. The
 * figure runs from the answer's 200 (and, stricter, from the moment it was sent) to the re-decision
 * that allows the call.
 */
import { rm } from 'node:fs/promises';
import { Pool } from 'undici';
import { READ_ONLY_DEFAULT, type Approval, type DecideQuery } from '../../schemas/index.js';
import { makeDemoRoot } from '../lib/fixtures.js';
import { postDecide, singleConnectionPool, waitFor, type BenchContext, type SectionResult } from '../lib/context.js';
import { BENCH_ADMIN_TOKEN, startMain, type MainProcess } from '../lib/processes.js';
import { fmt, quantile } from '../lib/stats.js';

const QUERY: DecideQuery = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };
const TARGET_MS = 100;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

interface Trial {
  /** POST answer sent → the re-decision allowed the call. */
  fromSent: number;
  /** POST answer's 200 received → the re-decision allowed the call (0 when the call ran first). */
  fromAck: number;
  /** Whether the re-decision allowed the call (it must). */
  ran: boolean;
}

async function adminRequest(pool: Pool, method: 'PUT' | 'POST', path: string, body: unknown): Promise<void> {
  const response = await pool.request({
    method,
    path,
    headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.body.text();
  if (response.statusCode !== 200) throw new Error(`${method} ${path} answered ${response.statusCode}: ${text}`);
}

async function trial(decidePool: Pool, pollPool: Pool, adminPool: Pool): Promise<Trial> {
  const asked = await postDecide(decidePool, QUERY);
  if (asked.reason !== 'approval_required' || asked.approval === undefined) {
    throw new Error(`expected a request to open, got ${asked.reason}`);
  }
  const id = asked.approval.id;
  // The waiting guard: long-poll, then re-decide at once.
  const ran = pollPool.request({ method: 'GET', path: `/projects/demo/approvals/${id}?waitSeconds=30` }).then(async (response) => {
    const approval = JSON.parse(await response.body.text()) as Approval;
    if (approval.status !== 'approved') throw new Error(`the long-poll answered ${approval.status}`);
    const decision = await postDecide(decidePool, QUERY);
    return { at: performance.now(), allow: decision.allow && decision.source === 'approval' };
  });
  // Leaves the long-poll time to reach the service and park, as a real waiter would have.
  await pause(20 + Math.random() * 20);
  const sent = performance.now();
  await adminRequest(adminPool, 'POST', `/projects/demo/approvals/${id}`, { answer: 'once' });
  const acked = performance.now();
  const run = await ran;
  return { fromSent: run.at - sent, fromAck: Math.max(0, run.at - acked), ran: run.allow };
}

export async function approvalSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  let server: MainProcess | undefined;
  const pools: Pool[] = [];
  try {
    server = await startMain(root, ctx.useDist);
    const origin = server.origin;
    const [decidePool, pollPool, adminPool] = [0, 1, 2].map(() => singleConnectionPool(origin)) as [Pool, Pool, Pool];
    pools.push(decidePool, pollPool, adminPool);
    await waitFor(
      async () =>
        (await decidePool.request({ method: 'GET', path: '/readyz' }).then((r) => r.body.text().then(() => r.statusCode))) === 200,
      20_000,
    );
    await adminRequest(adminPool, 'PUT', '/projects/demo/mcp-tool-permissions/agents/QA', {
      allowedTools: [...READ_ONLY_DEFAULT],
      askTools: [QUERY.tool],
    });
    for (let warm = 0; warm < 5; warm += 1) await trial(decidePool, pollPool, adminPool);
    const trials: Trial[] = [];
    for (let index = 0; index < ctx.settings.revocationTrials; index += 1) {
      trials.push(await trial(decidePool, pollPool, adminPool));
      await pause(10 + Math.random() * 20);
    }
    const fromAck = trials.map((entry) => entry.fromAck);
    const fromSent = trials.map((entry) => entry.fromSent);
    const refused = trials.filter((entry) => !entry.ran).length;
    ctx.log(
      `  answer 200 → call runs: p50 ${fmt(quantile(fromAck, 0.5), 'ms')} p99 ${fmt(quantile(fromAck, 0.99), 'ms')}; answer sent → call runs: p50 ${fmt(quantile(fromSent, 0.5), 'ms')} p99 ${fmt(quantile(fromSent, 0.99), 'ms')} max ${fmt(quantile(fromSent, 1), 'ms')}; ${refused} of ${trials.length} re-decisions refused`,
    );
    if (refused > 0) ctx.note(`approval: ${refused} re-decisions after a once answer were not allowed.`);
    const section = 'approval (real service, state folder)';
    const p99Ack = quantile(fromAck, 0.99);
    const p99Sent = quantile(fromSent, 0.99);
    return {
      rows: [
        {
          section,
          figure: `answer 200 → waiting call runs p50 (${trials.length} answers)`,
          value: fmt(quantile(fromAck, 0.5), 'ms'),
          target: '',
          pass: null,
        },
        {
          section,
          figure: 'answer 200 → waiting call runs p99',
          value: fmt(p99Ack, 'ms'),
          target: `≤ ${TARGET_MS} ms`,
          pass: p99Ack <= TARGET_MS && refused === 0,
        },
        // Context: adds the answer's own round trip, in which the `once` is saved (fsync) before the 200.
        { section, figure: 'answer sent → waiting call runs p99', value: fmt(p99Sent, 'ms'), target: '', pass: null },
      ],
      raw: { trials },
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
    await server?.stop();
    await rm(root, { recursive: true, force: true });
  }
}
