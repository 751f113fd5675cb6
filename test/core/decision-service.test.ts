/**
 * The decision service answers exactly what the domain's decision function gives for the project's
 * current policy (a policy swap counts from the very next call), stamps each answer with a new id,
 * and keeps what a decision leaves behind only for the projects it serves.
 */
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { TOOL_CATALOG, type DecideQuery, type Decision, type PolicyDocument } from '../../schemas/index.js';
import { DecisionService } from '../../server/decisions/decision-service.js';
import { builtinPolicy, compileDocument, invalidPolicy, type CompiledPolicy } from '../../server/domain/compile.js';
import { decide, NO_EPHEMERAL } from '../../server/domain/decide.js';
import { unknownProject } from '../../server/errors.js';

function serviceOver(policies: Map<string, CompiledPolicy>): DecisionService {
  return new DecisionService({ policyOf: (project) => policies.get(project), ephemeral: NO_EPHEMERAL, logger: pino({ level: 'silent' }) });
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
