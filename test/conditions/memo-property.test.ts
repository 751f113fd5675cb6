/**
 * docs/api.md#conditions-on-a-tools-arguments: the decision memo never answers a call with a decision made for another one. For
 * random policies with conditions and usage limits, grants and once answers that change as calls go,
 * and random argument sequences, the service (which memoizes) answers exactly what a fresh decide()
 * does, each side counting its own calls (docs/api.md#usage-limits).
 */
import fc from 'fast-check';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Decision, DecideQuery, PolicyDocument, ToolConditions } from '../../schemas/index.js';
import { compileDocument, type CompiledPolicy } from '../../server/domain/compile.js';
import { ephemeralGrant, type ApprovalsPort, type EphemeralLookup } from '../../server/domain/decide.js';
import { decide } from '../support/decide.js';
import { DecisionService } from '../../server/decisions/decision-service.js';
import { checkArguments, compileToolConditions, type ToolChecks } from '../../server/domain/conditions.js';
import { UsageCounts } from '../../server/limits/usage-counts.js';

const TOOLS = ['idea_ask_agent', 'idea_run_in_background', 'idea_ticket_update_carnet', 'idea_memory_read', 'idea_memory_write'];
const ARGUMENTS = ['agentId', 'command', 'issueRef'];
const AGENTS = ['QA', 'Dev'];
const REQUESTERS = [...AGENTS, 'Main', 'mcp', 'ticket-assistant:demo:82', 'ticket-assistant:demo:90', 'bad:requester'];
const VALUES = ['QA', 'Dev', 'npm test', 'npm test -- x', 'npm test; rm', '#82', '82', '', 82, 90, 1];

// 2^53 + 2: a number no condition may compare, since JSON.parse rounds its neighbours onto it.
const valueArb = fc.oneof(fc.constantFrom(...VALUES, 2 ** 53 + 2), fc.constant(null), fc.constant(['#82']), fc.constant({ a: 1 }));
const conditionArb = fc.oneof(
  fc.record({ in: fc.array(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 3 }) }),
  fc.record({ notIn: fc.array(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 3 }) }),
  fc.record({ prefix: fc.array(fc.constantFrom('npm test', 'npm', 'QA', '82'), { minLength: 1, maxLength: 2 }) }),
  fc.constant({ absent: true as const }),
);

/** A policy: each tool allowed, on ask or neither; some listed tools conditioned. */
const policyArb = fc
  .record({
    placement: fc.array(fc.constantFrom('allow', 'ask', 'none'), { minLength: TOOLS.length, maxLength: TOOLS.length }),
    conditions: fc.array(fc.dictionary(fc.constantFrom(...ARGUMENTS), conditionArb, { maxKeys: 2 }), {
      minLength: TOOLS.length,
      maxLength: TOOLS.length,
    }),
    conditioned: fc.array(fc.boolean(), { minLength: TOOLS.length, maxLength: TOOLS.length }),
    // A cap of 1 to 3 calls an hour on some listed tools: sequences of 60 steps reach it.
    limits: fc.array(fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }), { minLength: TOOLS.length, maxLength: TOOLS.length }),
  })
  .map(({ placement, conditions, conditioned, limits }) => {
    const allowedTools = TOOLS.filter((_, index) => placement[index] === 'allow');
    const askTools = TOOLS.filter((_, index) => placement[index] === 'ask');
    const policyConditions = Object.fromEntries(
      TOOLS.flatMap((tool, index) =>
        placement[index] !== 'none' && conditioned[index] === true && Object.keys(conditions[index] ?? {}).length > 0
          ? [[tool, conditions[index] ?? {}]]
          : [],
      ),
    );
    const policyLimits = Object.fromEntries(
      TOOLS.flatMap((tool, index) => {
        const max = limits[index];
        return placement[index] !== 'none' && max !== undefined ? [[tool, { max, per: '1h' }]] : [];
      }),
    );
    return { allowedTools, askTools, conditions: policyConditions, limits: policyLimits };
  });

const documentArb = fc
  .record({
    projectDefault: fc.option(policyArb, { nil: undefined }),
    overrides: fc.array(fc.option(policyArb, { nil: undefined }), { minLength: 2, maxLength: 2 }),
  })
  .map(({ projectDefault, overrides }): PolicyDocument => ({
    version: 1,
    ...(projectDefault === undefined ? {} : { projectDefault }),
    agents: AGENTS.flatMap((agentId, index) => {
      const policy = overrides[index];
      return policy === undefined ? [] : [{ agentId, policy }];
    }),
  }));

type Step =
  | { kind: 'call'; query: DecideQuery }
  | { kind: 'grant'; requester: string; tool: string; conditions: ToolConditions }
  | { kind: 'once'; requester: string; tool: string }
  | { kind: 'reload'; index: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({
        requester: fc.constantFrom(...REQUESTERS),
        tool: fc.constantFrom(...TOOLS, 'idea_teleport'),
        // `AgentID` and `COMMAND`: other spellings of a conditioned argument, which a condition refuses.
        arguments: fc.option(fc.dictionary(fc.constantFrom(...ARGUMENTS, 'other', 'AgentID', 'COMMAND'), valueArb, { maxKeys: 3 }), {
          nil: undefined,
        }),
      })
      .map(({ requester, tool, arguments: args }): Step => ({
        kind: 'call',
        query: { project: 'demo', requester, tool, ...(args === undefined ? {} : { arguments: args }) },
      })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({
        requester: fc.constantFrom(...AGENTS, 'Main'),
        tool: fc.constantFrom(...TOOLS),
        // The conditions a grant kept when it was made (none, half the time).
        conditions: fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom(...ARGUMENTS), conditionArb, { minKeys: 1, maxKeys: 2 })),
      })
      .map((one): Step => ({ kind: 'grant', ...one })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ requester: fc.constantFrom(...AGENTS, 'Main'), tool: fc.constantFrom(...TOOLS) })
      .map((one): Step => ({ kind: 'once', ...one })),
  },
  { weight: 1, arbitrary: fc.nat(1).map((index): Step => ({ kind: 'reload', index })) },
);

/** Grants (with the conditions they kept) and once answers held in memory; two equal instances answer alike. */
class FakeApprovals implements ApprovalsPort {
  readonly grants = new Map<string, ToolChecks>();
  readonly onces = new Set<string>();
  granted(
    _project: string,
    requester: string,
    tool: string,
    args: Readonly<Record<string, unknown>> | undefined,
  ): ReturnType<ApprovalsPort['granted']> {
    const checks = this.grants.get(`${requester}\u0000${tool}`);
    return checks === undefined ? { kind: 'none' } : checkArguments(checks, args);
  }
  consumeOnce(_project: string, requester: string, tool: string): boolean {
    return this.onces.delete(`${requester}\u0000${tool}`);
  }
  request(): ReturnType<ApprovalsPort['request']> {
    return { kind: 'pending', approval: { id: 'r1', status: 'pending', expiresAt: '2030-01-01T00:00:00.000Z' } };
  }
}

const EPHEMERAL: EphemeralLookup = (_project, requester) =>
  requester === 'ticket-assistant:demo:82' ? ephemeralGrant(['idea_ticket_update_carnet', 'idea_memory_read'], '82') : undefined;

const withoutId = ({ decisionId: _id, ...body }: Decision) => body;

describe('the decision memo', () => {
  it('always answers what a fresh decision answers, for random policies, conditions, limits, grants with kept conditions and arguments', () => {
    fc.assert(
      fc.property(
        fc.array(documentArb, { minLength: 2, maxLength: 2 }),
        fc.array(stepArb, { minLength: 1, maxLength: 60 }),
        (documents, steps) => {
          const policies: CompiledPolicy[] = documents.map((document, index) => compileDocument(document, `rev${index}`));
          let policy = policies[0];
          const memoized = new FakeApprovals();
          const fresh = new FakeApprovals();
          // Time stands still: a window filled in a run stays full.
          const clock = { monotonic: () => 1_000, wall: () => 1_000 };
          const freshCounts = new UsageCounts({ clock });
          const service = new DecisionService({
            projects: { policyOf: () => policy },
            ephemeral: EPHEMERAL,
            approvals: memoized,
            limits: new UsageCounts({ clock }),
            logger: pino({ enabled: false }),
          });
          for (const step of steps) {
            if (step.kind === 'reload') policy = policies[step.index];
            else if (step.kind === 'grant') {
              for (const approvals of [memoized, fresh])
                approvals.grants.set(`${step.requester}\u0000${step.tool}`, compileToolConditions(step.conditions));
            } else if (step.kind === 'once') {
              for (const approvals of [memoized, fresh]) approvals.onces.add(`${step.requester}\u0000${step.tool}`);
            } else {
              const answered = withoutId(service.decide(step.query));
              expect(answered).toEqual(decide(step.query, policy, EPHEMERAL, fresh, freshCounts));
            }
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});
