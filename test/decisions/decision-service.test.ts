/**
 * The decision service answers exactly what the domain's decision function gives for the project's
 * current policy (a policy swap counts from the very next call), stamps each answer with a new id,
 * and keeps what a decision leaves behind only for the projects it serves.
 */
import { IDEA_CATALOG } from '../../server/domain/project-catalog.js';
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { TOOL_CATALOG, type DecideQuery, type Decision, type PolicyDocument } from '../../schemas/index.js';
import { DecisionService } from '../../server/decisions/decision-service.js';
import { builtinPolicy, compileDocument, invalidPolicy, makeAllowlist, type CompiledPolicy } from '../../server/domain/compile.js';
import { NO_EPHEMERAL, type ApprovalsPort, type EphemeralGrant } from '../../server/domain/decide.js';
import { decide } from '../support/decide.js';
import { unknownProject } from '../../server/errors.js';
import { defined } from '../support/typed.js';

function serviceOver(policies: Map<string, CompiledPolicy>): DecisionService {
  return new DecisionService({
    projects: { policyOf: (project) => policies.get(project) },
    ephemeral: NO_EPHEMERAL,
    logger: pino({ level: 'silent' }),
  });
}

const withoutId = ({ decisionId: _id, ...rest }: Decision): Omit<Decision, 'decisionId'> => rest;

const toolNames = TOOL_CATALOG.map((tool) => tool.name);
const toolArb = fc.oneof(fc.constantFrom(...toolNames), fc.constantFrom('idea_nope', 'x"y\\z', ''));
const requesterArb = fc.oneof(
  fc.constantFrom('Main', 'QA', 'Dev"Ops', '', 'mcp', 'ticket-assistant:a:82', 'QA:x'),
  fc.string({ maxLength: 8 }),
);
const documentArb: fc.Arbitrary<PolicyDocument> = fc.record(
  {
    version: fc.constant(1 as const),
    projectDefault: fc.record({ allowedTools: fc.uniqueArray(fc.constantFrom(...toolNames), { maxLength: 25 }) }),
    agents: fc.uniqueArray(
      fc.record({
        agentId: fc.constantFrom('Main', 'QA', 'DevOps'),
        policy: fc.record({ allowedTools: fc.uniqueArray(fc.constantFrom(...toolNames), { maxLength: 25 }) }),
      }),
      { selector: (agent) => agent.agentId, maxLength: 3 },
    ),
  },
  { requiredKeys: ['version'] },
);
const policyArb: fc.Arbitrary<CompiledPolicy> = fc.oneof(
  documentArb.map((document) => compileDocument(document, 'rev-doc')),
  fc.constant(builtinPolicy()),
  fc.constant(invalidPolicy('rev-bad', { message: 'Unexpected token', line: 1, column: 2 })),
);
type Step = { kind: 'ask'; query: DecideQuery } | { kind: 'swap'; project: string; policy: CompiledPolicy | undefined };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc
      .record({ project: fc.constantFrom('a', 'b', 'gone'), requester: requesterArb, tool: toolArb })
      .map((query) => ({ kind: 'ask' as const, query })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ project: fc.constantFrom('a', 'b'), policy: fc.option(policyArb, { nil: undefined }) })
      .map((swap) => ({ kind: 'swap' as const, ...swap })),
  },
);

describe('decision service', () => {
  it('answers the decision of the current policy with a new id, over any history of questions and policy swaps', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 80 }), (steps) => {
        const policies = new Map<string, CompiledPolicy>([
          ['a', builtinPolicy()],
          ['b', builtinPolicy()],
        ]);
        const service = serviceOver(policies);
        const ids = new Set<string>();
        for (const step of steps) {
          if (step.kind === 'swap') {
            if (step.policy) policies.set(step.project, step.policy);
            else policies.delete(step.project);
            continue;
          }
          const answered = service.decide(step.query);
          expect(withoutId(answered)).toEqual(decide(step.query, policies.get(step.query.project), NO_EPHEMERAL));
          expect(ids.has(answered.decisionId)).toBe(false);
          ids.add(answered.decisionId);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps the decisions about a project it serves, newest first, and none about an unknown one', () => {
    const policies = new Map<string, CompiledPolicy>([['a', builtinPolicy()]]);
    const service = serviceOver(policies);
    const first = service.decide({ project: 'a', requester: 'QA', tool: 'idea_memory_write' });
    const second = service.decide({ project: 'a', requester: 'QA', tool: 'idea_ticket_read' });
    service.decide({ project: 'late', requester: 'QA', tool: 'idea_ticket_read' });
    expect(service.recentDecisions('a', undefined, 10).map((entry) => entry.decisionId)).toEqual([second.decisionId, first.decisionId]);
    expect(service.recentDecisions('a', false, 10)).toEqual([
      expect.objectContaining({ decisionId: first.decisionId, requester: 'QA', tool: 'idea_memory_write', allow: false }),
    ]);
    expect(() => service.recentDecisions('late', undefined, 10)).toThrow(unknownProject('late'));
    policies.set('late', builtinPolicy());
    expect(service.recentDecisions('late', undefined, 10)).toEqual([]);
  });
});

/** A few tools, so that the same call comes back often across changes. */
const readTool = defined(
  TOOL_CATALOG.find((tool) => tool.access === 'read'),
  'a read tool',
).name;
const [writeTool, otherWriteTool] = TOOL_CATALOG.filter((tool) => tool.access === 'write').map((tool) => tool.name);
const firstWrite = defined(writeTool, 'a write tool');
const secondWrite = defined(otherWriteTool, 'a second write tool');
const issueScoped = defined(
  TOOL_CATALOG.find((tool) => tool.issueScoped),
  'an issue-scoped tool',
).name;
const fewTools = fc.constantFrom(readTool, firstWrite, secondWrite, issueScoped, 'idea_nope');

/** Grants and ephemeral policies that change between calls, as the approvals and ephemeral services do. */
type Change =
  | { kind: 'ask'; query: DecideQuery }
  | { kind: 'swap'; project: string; policy: CompiledPolicy }
  | { kind: 'grant'; project: string; requester: string; tool: string; on: boolean }
  | { kind: 'ephemeral'; project: string; requester: string; tools: string[] | null };

const askingDocumentArb: fc.Arbitrary<PolicyDocument> = fc
  .tuple(fc.uniqueArray(fc.constantFrom(...toolNames), { maxLength: 12 }), fc.uniqueArray(fc.constantFrom(...toolNames), { maxLength: 6 }))
  .map(([allowed, ask]) => ({
    version: 1 as const,
    projectDefault: { allowedTools: allowed, askTools: ask.filter((tool) => !allowed.includes(tool)) },
    agents: [{ agentId: 'QA', policy: { allowedTools: ask.slice(0, 2) } }],
  }));
const changeArb: fc.Arbitrary<Change> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .record({
        project: fc.constantFrom('a', 'b'),
        requester: fc.constantFrom('Main', 'QA', '', 'ticket-assistant:a:82', 'ticket-assistant:b:7', 'bad:x'),
        tool: fewTools,
        arguments: fc.option(fc.record({ issueRef: fc.constantFrom('#82', '82', '#7', 'x') }), { nil: undefined }),
      })
      .map(({ arguments: args, ...query }): Change => ({ kind: 'ask', query: args === undefined ? query : { ...query, arguments: args } })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ project: fc.constantFrom('a', 'b'), policy: askingDocumentArb.map((document) => compileDocument(document, 'rev-ask')) })
      .map((swap) => ({ kind: 'swap' as const, ...swap })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        project: fc.constantFrom('a', 'b'),
        requester: fc.constantFrom('Main', 'QA'),
        tool: fewTools,
        on: fc.boolean(),
      })
      .map((grant) => ({ kind: 'grant' as const, ...grant })),
  },
  {
    weight: 2,
    arbitrary: fc
      .record({
        project: fc.constantFrom('a', 'b'),
        requester: fc.constantFrom('ticket-assistant:a:82', 'ticket-assistant:b:7'),
        tools: fc.option(fc.uniqueArray(fewTools, { maxLength: 3 }), { nil: null }),
      })
      .map((change) => ({ kind: 'ephemeral' as const, ...change })),
  },
);

describe('decision service memo', () => {
  it('answers what a fresh decision answers, whatever grants and ephemeral policies do between calls', () => {
    fc.assert(
      fc.property(fc.array(changeArb, { minLength: 1, maxLength: 120, size: 'max' }), (changes) => {
        const policies = new Map<string, CompiledPolicy>([
          ['a', builtinPolicy()],
          ['b', compileDocument({ version: 1, projectDefault: { allowedTools: [readTool], askTools: [firstWrite] } }, 'rev-b')],
        ]);
        const grants = new Set<string>();
        const ephemeral = new Map<string, EphemeralGrant>();
        const approvals: ApprovalsPort = {
          granted: (project, requester, tool) => (grants.has(`${project}|${requester}|${tool}`) ? { kind: 'ok' } : { kind: 'none' }),
          consumeOnce: () => false,
          request: () => ({ kind: 'denied' }),
        };
        const lookup = (project: string, requester: string): EphemeralGrant | undefined => ephemeral.get(`${project}|${requester}`);
        const service = new DecisionService({
          projects: { policyOf: (project) => policies.get(project) },
          ephemeral: lookup,
          approvals,
          logger: pino({ level: 'silent' }),
        });
        for (const change of changes) {
          switch (change.kind) {
            case 'swap':
              policies.set(change.project, change.policy);
              break;
            case 'grant': {
              const key = `${change.project}|${change.requester}|${change.tool}`;
              if (change.on) grants.add(key);
              else grants.delete(key);
              break;
            }
            case 'ephemeral': {
              const key = `${change.project}|${change.requester}`;
              if (change.tools === null) ephemeral.delete(key);
              else
                ephemeral.set(key, {
                  allowlist: makeAllowlist('ephemeral', change.tools),
                  boundIssue: '82',
                  tools: change.tools,
                  catalog: IDEA_CATALOG,
                });
              break;
            }
            case 'ask':
              expect(withoutId(service.decide(change.query))).toEqual(
                decide(change.query, policies.get(change.query.project), lookup, approvals),
              );
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('decides again a denial that a temporary grant lifts', () => {
    const grants = new Set<string>();
    const approvals: ApprovalsPort = {
      granted: (project, requester, tool) => (grants.has(`${project}|${requester}|${tool}`) ? { kind: 'ok' } : { kind: 'none' }),
      consumeOnce: () => false,
      request: () => ({ kind: 'denied' }),
    };
    const policy = builtinPolicy();
    const service = new DecisionService({
      projects: { policyOf: () => policy },
      ephemeral: NO_EPHEMERAL,
      approvals,
      logger: pino({ level: 'silent' }),
    });
    const query = { project: 'a', requester: 'QA', tool: firstWrite };
    expect(service.decide(query).reason).toBe('not_in_allowlist');
    grants.add(`a|QA|${query.tool}`);
    expect(service.decide(query)).toMatchObject({ allow: true, source: 'grant' });
    grants.clear();
    expect(service.decide(query).allow).toBe(false);
  });

  it('keeps nothing of a call whose effect fails, and throws (a 500, which every guard takes as a denial)', () => {
    const policy = compileDocument({ version: 1, projectDefault: { allowedTools: [readTool], askTools: [firstWrite] } }, 'rev-ask');
    const approvals: ApprovalsPort = {
      granted: () => ({ kind: 'none' }),
      consumeOnce: () => false,
      request: () => {
        throw new Error('approvals state not saved');
      },
    };
    const service = new DecisionService({
      projects: { policyOf: () => policy },
      ephemeral: NO_EPHEMERAL,
      approvals,
      logger: pino({ level: 'silent' }),
    });
    expect(() => service.decide({ project: 'a', requester: 'QA', tool: firstWrite })).toThrow('approvals state not saved');
    expect(service.recentDecisions('a', undefined, 10)).toEqual([]);
    expect(service.decide({ project: 'a', requester: 'QA', tool: readTool }).allow).toBe(true);
  });

  it('answers each project with its own name when two projects share one policy object', () => {
    const shared = builtinPolicy();
    const service = serviceOver(
      new Map([
        ['a', shared],
        ['b', shared],
      ]),
    );
    for (const project of ['a', 'b', 'a', 'b']) {
      const answer = service.decide({ project, requester: 'QA', tool: readTool });
      expect(answer).toMatchObject({ allow: true, project });
      expect(answer.message).toContain(`in project ${project} `);
    }
  });

  it('reuses the body of a call decided by the policy alone, until the policy changes', () => {
    const policies = new Map<string, CompiledPolicy>([['a', builtinPolicy()]]);
    const service = serviceOver(policies);
    const query = { project: 'a', requester: 'QA', tool: 'idea_ticket_read' };
    const first = service.decide(query);
    const second = service.decide(query);
    expect(second.message).toBe(first.message);
    expect(second.requester).toBe(first.requester);
    policies.set('a', compileDocument({ version: 1, projectDefault: { allowedTools: [] } }, 'rev-none'));
    const after = service.decide(query);
    expect(after.allow).toBe(false);
    expect(after.revision).toBe('rev-none');
  });
});
