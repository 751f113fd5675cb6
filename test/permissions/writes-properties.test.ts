/**
 * Property tests at the HTTP level (inject): random allowlists written through the API, then every
 * (requester, tool) decision must equal the model computed from docs/api.md#resolving-a-decision.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Decision, DecideQuery, PermissionsView } from '../../schemas/index.js';
import { agentUrl, buildTestApp, call, decideBatch, defaultUrl, permissionsUrl, suiteScope } from '../support/app.js';
import { ALL_TOOLS, READ_TOOLS, WRITE_TOOLS } from '../support/tools.js';
import { agentIdProblem } from '../../schemas/agent-id.js';
import type { FastifyInstance } from 'fastify';

const AGENTS = ['Architect', 'DevFrontend', 'Git', 'Main', 'QA'] as const;
const REQUESTERS = ['', 'mcp', ...AGENTS, 'Stranger', 'ticket-assistant:demo:7', 'ticket-assistant:other:7'];

interface Model {
  projectDefault: string[] | undefined;
  overrides: Map<string, string[]>;
}

interface Expected {
  allow: boolean;
  reason: Decision['reason'];
  source?: Decision['source'];
}

/** A requester that is neither anonymous, nor a ticket assistant, nor an agent id (docs/api.md#resolving-a-decision; its pattern, docs/api.md#agent-ids) is invalid. */
function malformed(requester: string): boolean {
  const anonymous = requester === '' || requester === 'mcp';
  return (
    !anonymous &&
    !requester.startsWith('ticket-assistant:') &&
    // eslint-disable-next-line no-control-regex
    (!/^[^\s:/\\\u0000-\u001f\u007f][^:/\\\u0000-\u001f\u007f]{0,127}$/.test(requester) ||
      // Lookalikes of another id (docs/api.md#agent-ids): invisible characters, odd spaces, NFKC, mixed scripts.
      agentIdProblem(requester) !== undefined)
  );
}

/** docs/api.md#resolving-a-decision, written independently of the server. */
function expected(model: Model, requester: string, tool: string): Expected {
  if (malformed(requester)) return { allow: false, reason: 'invalid_requester', source: 'none' };
  if (!ALL_TOOLS.includes(tool)) return { allow: false, reason: 'unknown_tool' };
  let allowlist: readonly string[];
  let source: Decision['source'];
  if (requester === '' || requester === 'mcp') {
    allowlist = READ_TOOLS;
    source = 'builtin-read-only';
  } else if (requester.startsWith('ticket-assistant:')) {
    if (requester.split(':')[1] !== 'demo') return { allow: false, reason: 'requester_project_mismatch' };
    allowlist = READ_TOOLS;
    source = 'builtin-read-only';
  } else if (model.overrides.has(requester)) {
    allowlist = model.overrides.get(requester) ?? [];
    source = 'agent-override';
  } else if (model.projectDefault !== undefined) {
    allowlist = model.projectDefault;
    source = 'project-default';
  } else {
    allowlist = READ_TOOLS;
    source = 'builtin-read-only';
  }
  const allow = allowlist.includes(tool);
  return { allow, reason: allow ? 'allowed' : 'not_in_allowlist', source };
}

const allowlistArb = fc.shuffledSubarray([...ALL_TOOLS]);
const modelArb: fc.Arbitrary<Model> = fc
  .record({
    projectDefault: fc.option(allowlistArb, { nil: undefined }),
    overrides: fc.array(fc.tuple(fc.constantFrom(...AGENTS, 'Stranger'), allowlistArb), { maxLength: 6 }),
  })
  .map(({ projectDefault, overrides }) => ({ projectDefault, overrides: new Map(overrides) }));

const suite = suiteScope();
let app: FastifyInstance;

beforeAll(async () => {
  ({ app } = await buildTestApp(suite, { demo: { agents: AGENTS.map((id) => ({ id })) }, other: {} }));
});

function ok(response: Awaited<ReturnType<typeof call>>): void {
  if (response.statusCode !== 200) throw new Error(`write answered ${response.statusCode}: ${response.body}`);
}

/** Applies the model with the per-route writes (PUT/DELETE default, PUT/DELETE agent). */
async function applyByRoutes(model: Model): Promise<void> {
  ok(
    model.projectDefault === undefined
      ? await call(app, 'DELETE', defaultUrl('demo'), { auth: true })
      : await call(app, 'PUT', defaultUrl('demo'), { body: { allowedTools: model.projectDefault }, auth: true }),
  );
  for (const agent of [...AGENTS, 'Stranger']) {
    const tools = model.overrides.get(agent);
    ok(
      tools === undefined
        ? await call(app, 'DELETE', agentUrl('demo', agent), { auth: true })
        : await call(app, 'PUT', agentUrl('demo', agent), { body: { allowedTools: tools }, auth: true }),
    );
  }
}

/** Applies the model with one whole-document PUT. */
async function applyByDocument(model: Model): Promise<void> {
  const doc = {
    version: 1,
    ...(model.projectDefault === undefined ? {} : { projectDefault: { allowedTools: model.projectDefault } }),
    agents: [...model.overrides].map(([agentId, allowedTools]) => ({ agentId, policy: { allowedTools } })),
  };
  ok(await call(app, 'PUT', permissionsUrl('demo'), { body: doc, auth: true }));
}

async function checkEveryDecision(model: Model, extraTools: readonly string[] = []): Promise<void> {
  const queries: DecideQuery[] = [];
  for (const requester of REQUESTERS) {
    for (const tool of [...ALL_TOOLS, ...extraTools]) queries.push({ project: 'demo', requester, tool });
  }
  for (let start = 0; start < queries.length; start += 100) {
    const chunk = queries.slice(start, start + 100);
    const decisions = await decideBatch(app, chunk);
    chunk.forEach((query, index) => {
      const want = expected(model, query.requester, query.tool);
      const got = decisions[index];
      const label = `${JSON.stringify(query.requester)} ${JSON.stringify(query.tool)}`;
      expect(got?.allow, label).toBe(want.allow);
      expect(got?.reason, label).toBe(want.reason);
      if (want.source !== undefined) expect(got?.source, label).toBe(want.source);
    });
  }
}

async function checkView(model: Model): Promise<void> {
  const view = (await call(app, 'GET', permissionsUrl('demo'))).json<PermissionsView>();
  const order = (names: readonly string[]) => ALL_TOOLS.filter((t) => names.includes(t));
  expect(view.projectDefault.allowedTools).toEqual(order(model.projectDefault ?? READ_TOOLS));
  for (const agent of view.agents) {
    const want = expected(model, agent.agentId, 'idea_memory_read').source;
    expect(agent.mode).toBe(want === 'agent-override' ? 'override' : 'inherit');
    const allowlist = model.overrides.get(agent.agentId) ?? model.projectDefault ?? READ_TOOLS;
    expect(agent.allowedTools).toEqual(order(allowlist));
  }
  expect(view.agents.map((a) => a.agentId)).toEqual([...new Set([...AGENTS, ...model.overrides.keys()])].sort());
}

describe('properties: decisions equal the docs/api.md#resolving-a-decision model', () => {
  it('after random allowlists written through the per-route API', async () => {
    await fc.assert(
      fc.asyncProperty(modelArb, async (model) => {
        await applyByRoutes(model);
        await checkEveryDecision(model);
        await checkView(model);
      }),
      { numRuns: 25 },
    );
  }, 60_000);

  it('after random whole documents written through the API', async () => {
    await fc.assert(
      fc.asyncProperty(modelArb, async (model) => {
        await applyByDocument(model);
        await checkEveryDecision(model);
      }),
      { numRuns: 100 },
    );
  }, 60_000);

  it('anonymous requesters never get a write tool', async () => {
    await fc.assert(
      fc.asyncProperty(modelArb, async (model) => {
        await applyByDocument(model);
        const queries = ['', 'mcp'].flatMap((requester) => WRITE_TOOLS.map((tool) => ({ project: 'demo', requester, tool })));
        for (const decision of await decideBatch(app, queries)) expect(decision.allow).toBe(false);
      }),
      { numRuns: 50 },
    );
  }, 60_000);

  it('garbage tool names are never allowed, whoever asks, even when every tool is granted', async () => {
    await applyByDocument({ projectDefault: [...ALL_TOOLS], overrides: new Map(AGENTS.map((agent) => [agent, [...ALL_TOOLS]])) });
    const near = fc
      .tuple(fc.constantFrom(...ALL_TOOLS), fc.constantFrom('upper', 'space', 'prefix', 'suffix', 'zw', 'null', 'trim'))
      .map(([name, how]) => {
        switch (how) {
          case 'upper':
            return name.toUpperCase();
          case 'space':
            return `${name} `;
          case 'prefix':
            return ` ${name}`;
          case 'suffix':
            return `${name}_x`;
          case 'zw':
            return `${name}\u200b`;
          case 'null':
            return `${name}\u0000`;
          default:
            return name.slice(0, -1);
        }
      });
    const garbage = fc
      .oneof(fc.string({ maxLength: 64 }), fc.string({ unit: 'grapheme', maxLength: 32 }), near)
      .filter((name) => !ALL_TOOLS.includes(name));
    const requester = fc.oneof(fc.constantFrom('', 'mcp', ...AGENTS), fc.string({ maxLength: 32 }));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(requester, garbage), { minLength: 1, maxLength: 20 }), async (pairs) => {
        const decisions = await decideBatch(
          app,
          pairs.map(([r, tool]) => ({ project: 'demo', requester: r, tool })),
        );
        decisions.forEach((decision, index) => {
          const label = JSON.stringify(pairs[index]);
          expect(decision.allow, label).toBe(false);
          const asker = pairs[index]?.[0] ?? '';
          if (!asker.startsWith('ticket-assistant:'))
            expect(decision.reason, label).toBe(malformed(asker) ? 'invalid_requester' : 'unknown_tool');
          expect(decision.tool.access, label).toBe('unknown');
        });
      }),
      { numRuns: 100 },
    );
  }, 60_000);

  it('random requester strings get exactly the model allowlist (no valid id is special except "", "mcp" and ticket-assistants)', async () => {
    const model: Model = { projectDefault: ['idea_memory_write', 'idea_ticket_list'], overrides: new Map([['QA', ['idea_ask_agent']]]) };
    await applyByDocument(model);
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 40 }), fc.constantFrom(...ALL_TOOLS), async (requester, tool) => {
        const [decision] = await decideBatch(app, [{ project: 'demo', requester, tool }]);
        const want = requester.startsWith('ticket-assistant:') ? undefined : expected(model, requester, tool);
        if (want === undefined) {
          if (WRITE_TOOLS.includes(tool)) expect(decision?.allow).toBe(false);
          return;
        }
        expect(decision?.allow, JSON.stringify(requester)).toBe(want.allow);
        expect(decision?.source, JSON.stringify(requester)).toBe(want.source);
      }),
      { numRuns: 100 },
    );
  }, 60_000);
});
