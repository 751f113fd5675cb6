/**
 * Bounded soak of the real service (`npm run soak`, not part of `npm test`).
 *
 * Starts `server/main.ts` as a child process on 127.0.0.1 with five temp projects, runs
 * SOAK_SECONDS (default 60) of mixed load — single decisions, batches, policy writes, ephemeral
 * policies, inspection reads — checks every answer against a model of the policies, samples the
 * server's RSS (/proc/<pid>/status VmRSS) every SOAK_SAMPLE_SECONDS, and fails (exit 1) on any 5xx,
 * any wrong decision, any transport error, or RSS growth after warm-up beyond 50 MB or 30 %.
 *
 * Env: SOAK_SECONDS=60, SOAK_CONCURRENCY=8, SOAK_SAMPLE_SECONDS=5, SOAK_WARMUP_SECONDS=max(10, 25 %).
 */
import { readFileSync } from 'node:fs';
import { Pool } from 'undici';
import type { Decision, DecideQuery, PermissionsView } from '../schemas/index.js';
import { makeTree, policyText } from '../test/support/files.js';
import { startService } from '../test/support/service-process.js';
import { ALL_TOOLS, READ_TOOLS } from '../test/support/tools.js';

const SECONDS = Number(process.env['SOAK_SECONDS'] ?? 60);
const CONCURRENCY = Number(process.env['SOAK_CONCURRENCY'] ?? 8);
const SAMPLE_SECONDS = Number(process.env['SOAK_SAMPLE_SECONDS'] ?? 5);
const WARMUP_SECONDS = Number(process.env['SOAK_WARMUP_SECONDS'] ?? Math.max(10, Math.round(SECONDS / 4)));
const MAX_GROWTH_BYTES = 50 * 1024 * 1024;
const MAX_GROWTH_RATIO = 0.3;
const ADMIN = `soak-${Date.now().toString(36)}-admin-token`;

const PROJECTS = ['p0', 'p1', 'p2', 'p3', 'p4'];
const DEFAULT_TOOLS = [...READ_TOOLS, 'idea_ticket_create'];
const F1_TOOLS = ['idea_ticket_read', 'idea_memory_write', 'idea_ask_agent'];
const M_GRANT = [...READ_TOOLS, 'idea_memory_write'];
const EPHEMERAL_ISSUE = '9';
const REQUESTERS = ['', 'mcp', 'F1', 'F2', 'M', 'Stranger', 'ticket-assistant:other:1', 'ticket-assistant:@:9'];
const EXTRA_TOOLS = ['idea_teleport', '__proto__', ''];

const rand = (n: number): number => Math.floor(Math.random() * n);
const pick = <T>(items: readonly T[]): T => items[rand(items.length)] as T;

// ------------------------------------------------------------------ the model (docs/api.md#resolving-a-decision)

/** project → revision → M's effective allowlist in that revision (from write answers). */
const mAt = new Map<string, Map<string, ReadonlySet<string>>>();
/** Answers about M, checked once every revision is known (a decision may see a write before its 200). */
const mAnswers: Array<{ query: DecideQuery; decision: Decision }> = [];
const wrong: string[] = [];

function recordM(project: string, view: PermissionsView): void {
  const m = view.agents.find((agent) => agent.agentId === 'M');
  const tools = new Set(m ? m.allowedTools : view.projectDefault.allowedTools);
  const revisions = mAt.get(project) ?? new Map<string, ReadonlySet<string>>();
  mAt.set(project, revisions);
  const known = revisions.get(view.revision);
  if (known && [...known].join() !== [...tools].join()) wrong.push(`revision ${view.revision} of ${project} seen with two states of M`);
  revisions.set(view.revision, tools);
}

function queryOf(): DecideQuery {
  const project = Math.random() < 0.05 ? `unknown-${rand(1_000_000)}` : pick(PROJECTS);
  let requester = pick(REQUESTERS);
  if (requester === 'ticket-assistant:@:9') requester = `ticket-assistant:${project}:${EPHEMERAL_ISSUE}`;
  const tool = Math.random() < 0.05 ? pick(EXTRA_TOOLS) : pick(ALL_TOOLS);
  const issueRef = Math.random() < 0.5 ? `#${EPHEMERAL_ISSUE}` : '#1';
  return { project, requester, tool, arguments: { issueRef } };
}

/** Checks what can be checked at once; answers about M are kept for the end. */
function check(query: DecideQuery, decision: Decision): void {
  const fail = (why: string): void => void wrong.push(`${why}: ${JSON.stringify(query)} → ${decision.allow} ${decision.reason}`);
  if (decision.project !== query.project || decision.requester.id !== query.requester || decision.tool.name !== query.tool)
    return fail('echo');
  if (!PROJECTS.includes(query.project))
    return decision.allow || decision.reason !== 'unknown_project' ? fail('unknown project') : undefined;
  // Two reasons may apply to one call; the contract does not rank them, only that it is a denial.
  const denials = query.requester === 'ticket-assistant:other:1' ? ['unknown_tool', 'requester_project_mismatch'] : ['unknown_tool'];
  if (!ALL_TOOLS.includes(query.tool)) return decision.allow || !denials.includes(decision.reason) ? fail('unknown tool') : undefined;
  const allowedBy = (tools: readonly string[]): void => (decision.allow !== tools.includes(query.tool) ? fail('allowlist') : undefined);
  switch (query.requester) {
    case '':
    case 'mcp':
      return allowedBy(READ_TOOLS);
    case 'F1':
      return allowedBy(F1_TOOLS);
    case 'F2':
    case 'Stranger':
      return allowedBy(DEFAULT_TOOLS);
    case 'ticket-assistant:other:1':
      return decision.allow || decision.reason !== 'requester_project_mismatch' ? fail('mismatch') : undefined;
    case 'M':
      mAnswers.push({ query, decision });
      return;
    default: {
      // The ticket assistant: read-only, or its ephemeral grant (bound to #9) while it lives.
      if (!decision.allow) return;
      if (query.tool === 'idea_ticket_update' && query.arguments?.['issueRef'] === `#${EPHEMERAL_ISSUE}`) return;
      if (!READ_TOOLS.includes(query.tool)) fail('ticket assistant');
    }
  }
}

// ------------------------------------------------------------------ load

interface Counters {
  requests: number;
  decisions: number;
  writes: number;
  serverErrors: number;
  unexpected: number;
  transport: number;
}
const counters: Counters = { requests: 0, decisions: 0, writes: 0, serverErrors: 0, unexpected: 0, transport: 0 };
const decideLatencies: number[] = [];
const problems: string[] = [];

async function call<T>(
  pool: Pool,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  admin = false,
): Promise<T | undefined> {
  counters.requests++;
  try {
    const response = await pool.request({
      method,
      path,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(admin ? { authorization: `Bearer ${ADMIN}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.body.text();
    if (response.statusCode >= 500) counters.serverErrors++;
    if (response.statusCode !== 200) {
      counters.unexpected++;
      if (problems.length < 20) problems.push(`${method} ${path} → ${response.statusCode} ${text.slice(0, 200)}`);
      return undefined;
    }
    return JSON.parse(text) as T;
  } catch (error) {
    counters.transport++;
    if (problems.length < 20) problems.push(`${method} ${path} → ${String(error)}`);
    return undefined;
  }
}

async function oneOperation(pool: Pool): Promise<void> {
  const roll = Math.random();
  if (roll < 0.6) {
    const query = queryOf();
    const started = performance.now();
    const decision = await call<Decision>(pool, 'POST', '/decide', query);
    decideLatencies.push(performance.now() - started);
    if (decision) {
      counters.decisions++;
      check(query, decision);
    }
  } else if (roll < 0.85) {
    const queries = Array.from({ length: 1 + rand(100) }, queryOf);
    const answer = await call<{ decisions: Decision[] }>(pool, 'POST', '/decide/batch', { queries });
    if (answer) {
      counters.decisions += answer.decisions.length;
      if (answer.decisions.length !== queries.length) wrong.push('batch length');
      queries.forEach((query, index) => check(query, answer.decisions[index] as Decision));
    }
  } else if (roll < 0.95) {
    const project = pick(PROJECTS);
    const url = `/projects/${project}/mcp-tool-permissions/agents/M`;
    const view =
      Math.random() < 0.5
        ? await call<PermissionsView>(pool, 'PUT', url, { allowedTools: M_GRANT }, true)
        : await call<PermissionsView>(pool, 'DELETE', url, undefined, true);
    if (view) {
      counters.writes++;
      recordM(project, view);
    }
  } else {
    const project = pick(PROJECTS);
    const requester = encodeURIComponent(`ticket-assistant:${project}:${EPHEMERAL_ISSUE}`);
    const which = rand(5);
    if (which === 0)
      await call(
        pool,
        'PUT',
        `/projects/${project}/ephemeral-policies/${requester}`,
        { allowedTools: ['idea_ticket_update'], boundIssue: `#${EPHEMERAL_ISSUE}`, ttlSeconds: 2 },
        true,
      );
    else if (which === 1) await call(pool, 'DELETE', `/projects/${project}/ephemeral-policies/${requester}`, undefined, true);
    else if (which === 2) await call(pool, 'GET', `/projects/${project}/decisions?limit=1000`);
    else if (which === 3) await call(pool, 'GET', `/projects/${project}/requesters/M/effective`);
    else await call(pool, 'GET', `/projects/${project}/mcp-tool-permissions`);
  }
}

function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : NaN;
}

const mb = (bytes: number): string => (bytes / 1024 / 1024).toFixed(1);
const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
};

async function main(): Promise<number> {
  const tree = await makeTree(Object.fromEntries(PROJECTS.map((project) => [project, policyText(DEFAULT_TOOLS, { F1: F1_TOOLS })])));
  const service = await startService({
    PDP_PROJECTS_ROOT: tree.root,
    PDP_ADMIN_TOKEN: ADMIN,
    PDP_STATE_DIR: `${tree.outer}/state`,
    PDP_LOG_LEVEL: 'warn',
  });
  const pool = new Pool(service.baseUrl, { connections: CONCURRENCY });
  for (const project of PROJECTS) {
    const view = await call<PermissionsView>(pool, 'GET', `/projects/${project}/mcp-tool-permissions`);
    if (view) recordM(project, view);
  }
  process.stdout.write(
    `soak: ${SECONDS} s, ${CONCURRENCY} in flight, warm-up ${WARMUP_SECONDS} s, service pid ${service.pid} at ${service.baseUrl}\n`,
  );
  process.stdout.write(
    `${'t (s)'.padStart(6)} ${'RSS MB'.padStart(8)} ${'req/s'.padStart(8)} ${'decisions/s'.padStart(12)} ${'writes'.padStart(7)} ${'errors'.padStart(7)}\n`,
  );

  const started = Date.now();
  const deadline = started + SECONDS * 1000;
  const samples: Array<{ t: number; rss: number }> = [{ t: 0, rss: rssBytes(service.pid) }];
  let last = { ...counters };
  let lastAt = started;
  const sampler = setInterval(() => {
    const now = Date.now();
    const rss = rssBytes(service.pid);
    const t = (now - started) / 1000;
    samples.push({ t, rss });
    const dt = (now - lastAt) / 1000;
    const errors =
      counters.serverErrors + counters.unexpected + counters.transport - (last.serverErrors + last.unexpected + last.transport);
    process.stdout.write(
      `${t.toFixed(0).padStart(6)} ${mb(rss).padStart(8)} ${((counters.requests - last.requests) / dt).toFixed(0).padStart(8)} ${((counters.decisions - last.decisions) / dt).toFixed(0).padStart(12)} ${String(counters.writes - last.writes).padStart(7)} ${String(errors).padStart(7)}\n`,
    );
    last = { ...counters };
    lastAt = now;
  }, SAMPLE_SECONDS * 1000);

  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < deadline) await oneOperation(pool);
    }),
  );
  clearInterval(sampler);
  samples.push({ t: (Date.now() - started) / 1000, rss: rssBytes(service.pid) });
  await pool.close();
  const exit = await service.stop();
  await tree.remove();

  for (const { query, decision } of mAnswers) {
    const tools = mAt.get(query.project)?.get(decision.revision);
    if (!tools) wrong.push(`M answered with an unknown revision ${decision.revision} of ${query.project}`);
    else if (decision.allow !== tools.has(query.tool))
      wrong.push(`M: ${JSON.stringify(query)} → ${decision.allow} at ${decision.revision}`);
  }

  const baseline = samples.filter((sample) => sample.t >= WARMUP_SECONDS)[0] ?? samples[samples.length - 1];
  const tail = samples.slice(-3).map((sample) => sample.rss);
  const final = [...tail].sort((a, b) => a - b)[Math.floor(tail.length / 2)] ?? NaN;
  const peak = Math.max(...samples.map((sample) => sample.rss));
  const growth = final - (baseline?.rss ?? NaN);
  const ratio = growth / (baseline?.rss ?? NaN);
  const elapsed = (Date.now() - started) / 1000;

  const failures: string[] = [];
  if (counters.serverErrors > 0) failures.push(`${counters.serverErrors} answer(s) were 5xx`);
  if (counters.unexpected > 0) failures.push(`${counters.unexpected} answer(s) were not 200`);
  if (counters.transport > 0) failures.push(`${counters.transport} transport error(s)`);
  if (wrong.length > 0) failures.push(`${wrong.length} wrong decision(s)`);
  if (!(growth <= MAX_GROWTH_BYTES)) failures.push(`RSS grew by ${mb(growth)} MB after warm-up (bound ${mb(MAX_GROWTH_BYTES)} MB)`);
  if (!(ratio <= MAX_GROWTH_RATIO))
    failures.push(`RSS grew by ${(ratio * 100).toFixed(1)} % after warm-up (bound ${MAX_GROWTH_RATIO * 100} %)`);
  if (exit.code !== 0) failures.push(`the service did not exit cleanly on SIGTERM (${JSON.stringify(exit)})`);

  const rows: Array<[string, string]> = [
    ['duration', `${elapsed.toFixed(1)} s`],
    ['requests', `${counters.requests} (${(counters.requests / elapsed).toFixed(0)}/s)`],
    ['decisions (single + batch items)', `${counters.decisions} (${(counters.decisions / elapsed).toFixed(0)}/s)`],
    ['policy writes (PUT/DELETE agent M)', String(counters.writes)],
    ['answers about M checked against their revision', String(mAnswers.length)],
    [
      '/decide latency p50 / p99 (client side)',
      `${percentile(decideLatencies, 50).toFixed(2)} / ${percentile(decideLatencies, 99).toFixed(2)} ms`,
    ],
    ['5xx / other non-200 / transport errors', `${counters.serverErrors} / ${counters.unexpected} / ${counters.transport}`],
    ['wrong decisions', String(wrong.length)],
    [
      'RSS start / after warm-up / end / peak',
      `${mb(samples[0]?.rss ?? NaN)} / ${mb(baseline?.rss ?? NaN)} / ${mb(final)} / ${mb(peak)} MB`,
    ],
    ['RSS growth after warm-up', `${mb(growth)} MB (${(ratio * 100).toFixed(1)} %), bounds 50 MB and 30 %`],
    ['service exit on SIGTERM', JSON.stringify(exit)],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  process.stdout.write(`\n${rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n')}\n`);
  for (const line of [...problems, ...wrong.slice(0, 20)]) process.stdout.write(`  ! ${line}\n`);
  process.stdout.write(
    failures.length === 0 ? '\nsoak: PASS\n' : `\nsoak: FAIL\n${failures.map((failure) => `  - ${failure}`).join('\n')}\n`,
  );
  return failures.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
