/**
 * Property tests with generated hostile bodies (fast-check, through `app.inject`): for /decide and
 * /decide/batch every answer is either a 200 whose decisions equal the model of the fixed policy,
 * or a 4xx with a stable error code; never a 5xx. A well-formed body is never refused.
 */
import { Value } from '@sinclair/typebox/value';
import fc from 'fast-check';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AGENT_ID_REGEX,
  DecideQuerySchema,
  DecisionSchema,
  PolicyDocumentSchema,
  type DecideQuery,
  type Decision,
} from '../../schemas/index.js';
import { agentIdProblem } from '../../server/domain/agent-id.js';
import { buildTestApp, isStableError, suiteScope, type TestApp } from '../support/app.js';
import { policyText } from '../support/files.js';
import { ALL_TOOLS, READ_TOOLS } from '../support/tools.js';

const ADMIN = 'properties-admin-token-0123456789';
let app: FastifyInstance;
const suite = suiteScope();
let made: TestApp;

beforeAll(async () => {
  made = await buildTestApp(
    suite,
    { demo: policyText(undefined, { Granted: ['idea_memory_write'] }), victim: null },
    { adminToken: ADMIN, rescanMs: 0 },
  );
  ({ app } = made);
});

/**
 * docs/api.md#resolving-a-decision for the fixed fixture (demo: Granted may also write memory; victim: no file), written
 * independently of the server. `undefined`: the contract does not pin the answer down.
 */
function expectedAllow(query: DecideQuery): boolean | undefined {
  if (query.project !== 'demo' && query.project !== 'victim') return false;
  if (!ALL_TOOLS.includes(query.tool)) return false;
  const { requester } = query;
  if (requester.startsWith('ticket-assistant:')) {
    const rest = requester.slice('ticket-assistant:'.length);
    const colon = rest.indexOf(':');
    if (colon < 0 || rest.slice(0, colon) !== query.project) return false;
    if (rest.slice(colon + 1) === '') return undefined;
    return READ_TOOLS.includes(query.tool);
  }
  if (requester !== '' && requester !== 'mcp' && agentIdProblem(requester) !== undefined) return false;
  if (query.project === 'demo' && requester === 'Granted') return query.tool === 'idea_memory_write';
  return READ_TOOLS.includes(query.tool);
}

function checkDecision(query: DecideQuery, decision: Decision): void {
  expect(Value.Check(DecisionSchema, decision), JSON.stringify(decision)).toBe(true);
  expect(decision.project).toBe(query.project);
  expect(decision.requester.id).toBe(query.requester);
  expect(decision.tool.name).toBe(query.tool);
  expect(decision.allow).toBe(decision.reason === 'allowed');
  if (query.project !== 'demo' && query.project !== 'victim') expect(decision.reason).toBe('unknown_project');
  const expected = expectedAllow(query);
  if (expected === undefined) expect(decision.allow && !READ_TOOLS.includes(query.tool)).toBe(false);
  else expect(decision.allow, JSON.stringify(query)).toBe(expected);
}

/** A body is well-formed when it passes the published schema and carries no poisoning key. */
function wellFormed(text: string, check: (value: unknown) => boolean): boolean {
  if (/__proto__|constructor/.test(text)) return false;
  try {
    return check(JSON.parse(text));
  } catch {
    return false;
  }
}

const isQuery = (value: unknown): value is DecideQuery => Value.Check(DecideQuerySchema, value);

// ------------------------------------------------------------------ arbitraries

const hostileIds = [
  '',
  'mcp',
  'demo',
  'victim',
  'Granted',
  'Main',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  '..',
  '../../etc/passwd',
  '%2e%2e%2f',
  '..\\..\\x',
  'a\u0000b',
  '\u001b[31m',
  '\u202egnp.exe',
  '\ud800',
  'GRANTED',
  'Granted ',
  'ticket-assistant:demo:1',
  'ticket-assistant:victim:7',
  'ticket-assistant:',
  'ticket-assistant:demo:',
  'ticket-assistant:demo',
  'x'.repeat(256),
  'x'.repeat(257),
  'y'.repeat(512),
  'y'.repeat(513),
];
const idArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...hostileIds) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);
const toolArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...ALL_TOOLS) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '__proto__',
      'constructor',
      'IDEA_MEMORY_READ',
      'idea_memory_read ',
      'idea_memory_read\u0000',
      'x'.repeat(300),
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);
const argumentsArb = fc.oneof(
  fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
  fc.record({ issueRef: fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.constant(null), fc.jsonValue({ maxDepth: 2 })) }),
);
const queryArb: fc.Arbitrary<Record<string, unknown>> = fc.record(
  {
    project: fc.oneof({ weight: 3, arbitrary: fc.constantFrom('demo', 'victim') }, { weight: 1, arbitrary: idArb }),
    requester: fc.oneof(
      { weight: 1, arbitrary: fc.constantFrom('Granted', 'Main', '', 'ticket-assistant:demo:1') },
      { weight: 2, arbitrary: idArb },
    ),
    tool: toolArb,
    arguments: argumentsArb,
  },
  { requiredKeys: ['project', 'requester', 'tool'] },
);
const keyArb = fc.oneof(
  fc.constantFrom('project', 'requester', 'tool', 'arguments', 'queries', '__proto__', 'constructor', 'prototype', 'extra', ''),
  fc.string({ maxLength: 8 }),
);
/** `JSON.stringify`, typed as what it answers: `undefined` for `undefined` (its declared type says string). */
const jsonText = (value: unknown): string | undefined => JSON.stringify(value);

const anyValueArb = fc.oneof(idArb, toolArb, fc.jsonValue({ maxDepth: 3 }), argumentsArb);
/** An object literal written by hand, so `__proto__` keys and duplicates reach the server. */
const rawObjectArb = fc
  .array(fc.tuple(keyArb, anyValueArb), { maxLength: 6 })
  .map((pairs) => `{${pairs.map(([key, value]) => `${JSON.stringify(key)}:${jsonText(value) ?? 'null'}`).join(',')}}`);
/** A well-formed query with one field broken: wrong type, removed, or an extra key. */
const brokenQueryArb = fc
  .tuple(
    queryArb,
    fc.constantFrom('project', 'requester', 'tool', 'arguments', 'extra', '__proto__'),
    fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)),
  )
  .map(([query, key, value]) => {
    const text = JSON.stringify({ ...query, [key]: value });
    return key === '__proto__' ? `{"__proto__":${jsonText(value) ?? '{}'},${text.slice(1)}` : text;
  });
const garbageArb = fc.oneof(
  fc.string({ maxLength: 60 }),
  fc.jsonValue({ maxDepth: 3 }).map((value) => jsonText(value) ?? ''),
  fc.tuple(queryArb, fc.nat()).map(([query, cut]) => {
    const text = JSON.stringify(query);
    return text.slice(0, cut % text.length);
  }),
);
const decideBodyArb = fc.oneof(
  { weight: 4, arbitrary: queryArb.map((query) => JSON.stringify(query)) },
  { weight: 2, arbitrary: brokenQueryArb },
  { weight: 2, arbitrary: rawObjectArb },
  { weight: 1, arbitrary: garbageArb },
);

async function post(url: string, payload: string): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload });
}

function expectSafe(response: LightMyRequestResponse, payload: string): void {
  expect(response.statusCode, `${payload.slice(0, 200)} → ${response.body.slice(0, 200)}`).toBeLessThan(500);
  if (response.statusCode !== 200) {
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(isStableError(JSON.parse(response.body)), response.body).toBe(true);
  }
}

describe('generated hostile bodies', () => {
  it('POST /decide: a 200 equal to the model for well-formed bodies, else a 4xx with a stable code', async () => {
    const seen = { ok: 0, refused: 0, allowed: 0 };
    await fc.assert(
      fc.asyncProperty(decideBodyArb, async (payload) => {
        const response = await post('/decide', payload);
        expectSafe(response, payload);
        seen[response.statusCode === 200 ? 'ok' : 'refused']++;
        if (response.statusCode === 200 && response.json<Decision>().allow) seen.allowed++;
        if (wellFormed(payload, isQuery)) expect(response.statusCode, payload).toBe(200);
        if (response.statusCode === 200) {
          const query = JSON.parse(payload) as DecideQuery;
          expect(isQuery(query), payload).toBe(true);
          checkDecision(query, response.json<Decision>());
        }
      }),
      { numRuns: 600 },
    );
    // Not vacuous: the generator reaches decisions (some allowed) and refusals alike.
    expect(seen.ok).toBeGreaterThan(100);
    expect(seen.refused).toBeGreaterThan(100);
    expect(seen.allowed).toBeGreaterThan(10);
  });

  it('POST /decide/batch: 1 to 100 well-formed queries get the same decisions as /decide, anything else a 4xx', async () => {
    const itemArb = fc.oneof(
      { weight: 6, arbitrary: queryArb.map((query) => JSON.stringify(query)) },
      { weight: 1, arbitrary: decideBodyArb },
    );
    const batchArb = fc.oneof(
      { weight: 5, arbitrary: fc.array(itemArb, { minLength: 0, maxLength: 110 }).map((items) => `{"queries":[${items.join(',')}]}`) },
      {
        weight: 1,
        arbitrary: fc
          .tuple(fc.array(itemArb, { maxLength: 3 }), rawObjectArb)
          .map(([items, extra]) => `{"queries":[${items.join(',')}],"x":${extra}}`),
      },
      { weight: 1, arbitrary: decideBodyArb },
    );
    const seen = { ok: 0, refused: 0 };
    await fc.assert(
      fc.asyncProperty(batchArb, async (payload) => {
        const response = await post('/decide/batch', payload);
        expectSafe(response, payload);
        seen[response.statusCode === 200 ? 'ok' : 'refused']++;
        const isBatch = (value: unknown): boolean => {
          const queries = (value as { queries?: unknown } | null)?.queries;
          return (
            typeof value === 'object' &&
            value !== null &&
            Object.keys(value).length === 1 &&
            Array.isArray(queries) &&
            queries.length >= 1 &&
            queries.length <= 100 &&
            queries.every(isQuery)
          );
        };
        if (wellFormed(payload, isBatch)) expect(response.statusCode, payload.slice(0, 200)).toBe(200);
        if (response.statusCode === 200) {
          const { queries } = JSON.parse(payload) as { queries: DecideQuery[] };
          const { decisions } = response.json<{ decisions: Decision[] }>();
          expect(decisions).toHaveLength(queries.length);
          queries.forEach((query, index) => {
            checkDecision(query, decisions[index] as Decision);
          });
        }
      }),
      { numRuns: 250 },
    );
    expect(seen.ok).toBeGreaterThan(20);
    expect(seen.refused).toBeGreaterThan(20);
  });

  it('PUT an agent allowlist: 200 only for catalog names without duplicates, the file stays a valid document', async () => {
    const toolsArb = fc.array(fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...ALL_TOOLS) }, { weight: 1, arbitrary: toolArb }), {
      maxLength: 30,
    });
    const agentArb = fc.constantFrom(
      'QA',
      'Main',
      '__proto__',
      'constructor',
      '...',
      'a%2Fb',
      'a/b',
      '../x',
      'a:b',
      'a\\b',
      'a\u0000b',
      ' QA',
      'x'.repeat(200),
    );
    await fc.assert(
      fc.asyncProperty(agentArb, toolsArb, async (agent, tools) => {
        const response = await app.inject({
          method: 'PUT',
          url: `/projects/victim/mcp-tool-permissions/agents/${encodeURIComponent(agent)}`,
          headers: { authorization: `Bearer ${ADMIN}` },
          payload: { allowedTools: tools },
        });
        const payload = JSON.stringify({ agent, tools });
        expectSafe(response, payload);
        const valid = tools.every((tool) => ALL_TOOLS.includes(tool)) && new Set(tools).size === tools.length && AGENT_ID_REGEX.test(agent);
        expect(response.statusCode, payload).toBe(valid ? 200 : 400);
        if (response.statusCode === 200) {
          const decision = (
            await post('/decide', JSON.stringify({ project: 'victim', requester: agent, tool: 'idea_memory_write' }))
          ).json<Decision>();
          expect(decision.allow).toBe(tools.includes('idea_memory_write'));
        }
      }),
      { numRuns: 120 },
    );
    const text = await readFile(made.policyPath('victim'), 'utf8');
    expect(Value.Check(PolicyDocumentSchema, JSON.parse(text))).toBe(true);
  });
});
