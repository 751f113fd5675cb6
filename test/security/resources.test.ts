/**
 * Resource bounds through the public API: the recent-decisions ring keeps at most 1,000 decisions
 * per project, ephemeral policies expire and are capped per project, and decisions about unknown
 * projects (or random requesters) are not recorded and do not grow the heap.
 */
import { randomBytes } from 'node:crypto';
import v8 from 'node:v8';
import vm from 'node:vm';
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DecideQuery, Decision, EphemeralPolicy, RecentDecision } from '../../schemas/index.js';
import { policyText } from '../support/files.js';
import { buildTestApp, suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';

const ADMIN = 'resources-admin-token-0123456789ab';
/** The documented bounds (docs/api.md#http-api and docs/api.md#ephemeral-ticket-assistant-policies): the ring size and the live ephemeral policies per project. */
const RING = 1000;
const MAX_EPHEMERAL_PER_PROJECT = 1000;
const auth = { authorization: `Bearer ${ADMIN}` };
let app: FastifyInstance;
const suite = suiteScope();

beforeAll(async () => {
  ({ app } = await buildTestApp(suite, { demo: policyText(undefined), ephemeral: null, capped: null }, { adminToken: ADMIN, rescanMs: 0 }));
});

async function batch(queries: DecideQuery[]): Promise<Decision[]> {
  const response = await app.inject({ method: 'POST', url: '/decide/batch', payload: { queries } });
  expect(response.statusCode).toBe(200);
  return response.json<{ decisions: Decision[] }>().decisions;
}

async function recent(project: string, query: string): Promise<{ status: number; decisions: RecentDecision[] }> {
  const response = await app.inject({ method: 'GET', url: `/projects/${project}/decisions?${query}` });
  return {
    status: response.statusCode,
    decisions: response.statusCode === 200 ? response.json<{ decisions: RecentDecision[] }>().decisions : [],
  };
}

describe('recent decisions ring', () => {
  it(`keeps exactly the last ${RING} decisions of 5,000 (older denials are gone)`, async () => {
    const ids: string[] = [];
    // 4,000 denials, then 1,000 allows: if the ring kept more than 1,000, a denial would show up.
    for (let round = 0; round < 50; round++) {
      const tool = round < 40 ? 'idea_memory_write' : 'idea_memory_read';
      const decisions = await batch(Array.from({ length: 100 }, () => ({ project: 'demo', requester: 'Main', tool })));
      ids.push(...decisions.map((decision) => decision.decisionId));
    }
    const newest = await recent('demo', `limit=${RING}`);
    expect(newest.decisions).toHaveLength(RING);
    expect(newest.decisions.map((decision) => decision.decisionId)).toEqual(ids.slice(-RING).reverse());
    expect((await recent('demo', `allow=false&limit=${RING}`)).decisions).toEqual([]);
    expect((await recent('demo', `limit=${RING + 1}`)).status).toBe(400);
    expect((await recent('demo', 'limit=10')).decisions.map((decision) => decision.decisionId)).toEqual(ids.slice(-10).reverse());
  });
});

describe('ephemeral policies', () => {
  const url = (issue: string | number, project = 'ephemeral'): string =>
    `/projects/${project}/ephemeral-policies/ticket-assistant%3A${project}%3A${issue}`;
  const decideAs = async (tool: string, issueRef?: string): Promise<Decision> =>
    (
      await app.inject({
        method: 'POST',
        url: '/decide',
        payload: {
          project: 'ephemeral',
          requester: 'ticket-assistant:ephemeral:7',
          tool,
          ...(issueRef === undefined ? {} : { arguments: { issueRef } }),
        },
      })
    ).json<Decision>();

  it('expire after their TTL: gone from the list, the requester back to read-only', async () => {
    const put = await app.inject({
      method: 'PUT',
      url: url(7),
      headers: auth,
      payload: { allowedTools: ['idea_ticket_update'], boundIssue: '#7', ttlSeconds: 1 },
    });
    expect(put.statusCode).toBe(200);
    expect(await decideAs('idea_ticket_update', '#7')).toMatchObject({ allow: true, source: 'ephemeral' });
    await waitFor(
      async () =>
        (await app.inject({ method: 'GET', url: '/projects/ephemeral/ephemeral-policies' })).json<{ policies: EphemeralPolicy[] }>()
          .policies.length === 0,
      'the ephemeral policy to expire',
      5_000,
      50,
    );
    expect(await decideAs('idea_ticket_update', '#7')).toMatchObject({ allow: false, source: 'builtin-read-only' });
    expect(await decideAs('idea_ticket_read', '#7')).toMatchObject({ allow: true, source: 'builtin-read-only' });
  });

  it(`are capped at ${MAX_EPHEMERAL_PER_PROJECT} live policies per project (409 limit_exceeded), replacing one does not count`, async () => {
    const put = (issue: number) =>
      app.inject({
        method: 'PUT',
        url: url(issue, 'capped'),
        headers: auth,
        payload: { allowedTools: ['idea_ticket_update'], ttlSeconds: 60 },
      });
    for (let issue = 0; issue < MAX_EPHEMERAL_PER_PROJECT; issue++) expect((await put(issue)).statusCode).toBe(200);
    const over = await put(MAX_EPHEMERAL_PER_PROJECT);
    expect(over.statusCode).toBe(409);
    expect(over.json()).toMatchObject({ error: { code: 'limit_exceeded' } });
    expect((await put(5)).statusCode).toBe(200);
    expect((await app.inject({ method: 'DELETE', url: url(5, 'capped'), headers: auth })).statusCode).toBe(200);
    expect((await put(MAX_EPHEMERAL_PER_PROJECT)).statusCode).toBe(200);
    const listed = (await app.inject({ method: 'GET', url: '/projects/capped/ephemeral-policies' })).json<{ policies: unknown[] }>();
    expect(listed.policies).toHaveLength(MAX_EPHEMERAL_PER_PROJECT);
  });
});

/** `global.gc` when the process allows it (the V8 flag can be set at run time), else undefined. */
function collector(): (() => void) | undefined {
  try {
    v8.setFlagsFromString('--expose_gc');
    const gc: unknown = vm.runInNewContext('gc');
    return typeof gc === 'function' ? (gc as () => void) : undefined;
  } catch {
    return undefined;
  }
}

describe('decisions about unknown projects and random requesters', () => {
  it('are answered, not recorded, and do not grow the heap (50,000 of each)', async () => {
    const gc = collector();
    const heap = (): number => {
      gc?.();
      gc?.();
      return process.memoryUsage().heapUsed;
    };
    const unknownQueries = (): DecideQuery[] =>
      Array.from({ length: 100 }, () => ({ project: `p${randomBytes(8).toString('hex')}`, requester: 'Main', tool: 'idea_memory_read' }));
    const randomRequesters = (): DecideQuery[] =>
      Array.from({ length: 100 }, () => ({ project: 'demo', requester: `R${randomBytes(8).toString('hex')}`, tool: 'idea_memory_write' }));
    // Warm-up: the ring of demo fills up, the code paths are compiled.
    for (let round = 0; round < 50; round++) {
      await batch(unknownQueries());
      await batch(randomRequesters());
    }
    const before = heap();
    const sample: string[] = [];
    for (let round = 0; round < 500; round++) {
      const queries = unknownQueries();
      if (round % 100 === 0) sample.push(queries[0]?.project as string);
      for (const decision of await batch(queries))
        expect(decision).toMatchObject({ allow: false, reason: 'unknown_project', revision: 'none' });
      await batch(randomRequesters());
    }
    const after = heap();
    for (const project of sample) {
      const response = await app.inject({ method: 'GET', url: `/projects/${project}/decisions` });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toMatchObject({ error: { code: 'unknown_project' } });
    }
    const projects = (await app.inject({ method: 'GET', url: '/projects' })).json<{ projects: { id: string }[] }>().projects;
    expect(projects.map((project) => project.id)).toEqual(['capped', 'demo', 'ephemeral']);
    expect((await recent('demo', `limit=${RING}`)).decisions).toHaveLength(RING);
    if (gc === undefined) return; // no collector: the functional checks above still ran
    // 50,000 recorded entries would cost far more than this (a ring per project is ~16 KB alone).
    expect(after - before, `heap grew from ${before} to ${after}`).toBeLessThan(4 * 1024 * 1024);
  });
});
