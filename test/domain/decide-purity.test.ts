/**
 * decide() is pure (docs/design.md#the-hot-path): it only reads the grants and limit windows it is
 * given and hands back what a call needs done; the same inputs give the same verdict, and applying
 * nothing leaves every port as it was. The effects then happen only in the decision service.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { PolicyDocument } from '../../schemas/index.js';
import { compileDocument } from '../../server/domain/compile.js';
import { compileToolConditions } from '../../server/domain/conditions.js';
import {
  answerAsk,
  decide,
  ephemeralGrant,
  lookingVerdict,
  type ApprovalsPort,
  type EphemeralLookup,
  type GrantVerdict,
} from '../../server/domain/decide.js';
import type { LimitsPort, ToolLimit } from '../../server/domain/limits.js';
import { applyEffects } from '../../server/decisions/apply-effects.js';
import { defined } from '../support/typed.js';

const TOOLS = ['idea_ticket_read', 'idea_memory_write', 'idea_ask_agent', 'idea_ticket_update_carnet', 'idea_teleport'];
const REQUESTERS = ['QA', 'Dev', 'Main', 'mcp', 'ticket-assistant:demo:82', 'bad:requester'];

const document: PolicyDocument = {
  version: 1,
  projectDefault: { allowedTools: ['idea_ticket_read'], askTools: ['idea_memory_write'] },
  agents: [
    {
      agentId: 'QA',
      policy: {
        allowedTools: ['idea_ticket_read', 'idea_ask_agent'],
        askTools: ['idea_memory_write', 'idea_ticket_update_carnet'],
        conditions: { idea_ask_agent: { agentId: { in: ['Dev'] } } },
        limits: { idea_ticket_read: { max: 2, per: '1h' }, idea_memory_write: { max: 1, per: '1h' } },
      },
    },
  ],
};
const policy = compileDocument(document, 'rev-1');
const EPHEMERAL: EphemeralLookup = (_project, requester) =>
  requester === 'ticket-assistant:demo:82' ? ephemeralGrant(['idea_ticket_update_carnet'], '82') : undefined;

/** Ports whose every method that changes something throws: a decision that called one would throw. */
function readOnlyPorts(
  grant: GrantVerdict,
  retryAfter: number | undefined,
): { approvals: ApprovalsPort; limits: LimitsPort; reads: string[] } {
  const reads: string[] = [];
  const approvals: ApprovalsPort = {
    granted: (_project, requester, tool) => {
      reads.push(`granted ${requester} ${tool}`);
      return grant;
    },
    consumeOnce: () => {
      throw new Error('decide() spent a once answer');
    },
    request: () => {
      throw new Error('decide() opened an approval request');
    },
  };
  const limits: LimitsPort = {
    retryAfter: (_project, requester, tool) => {
      reads.push(`retryAfter ${requester} ${tool}`);
      return retryAfter;
    },
    count: () => {
      throw new Error('decide() counted a call');
    },
  };
  return { approvals, limits, reads };
}

const grantArb = fc.constantFrom<GrantVerdict>(
  { kind: 'none' },
  { kind: 'ok' },
  { kind: 'invalid_arguments' },
  { kind: 'refused', check: defined(compileToolConditions({ agentId: { in: ['Dev'] } })[0], 'a check') },
);

describe('decide() is pure', () => {
  it('gives the same verdict for the same inputs and calls no port method that changes anything', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...REQUESTERS),
        fc.constantFrom(...TOOLS),
        fc.option(fc.record({ agentId: fc.constantFrom('Dev', 'QA'), issueRef: fc.constantFrom('#82', 82, '#83', null) }), {
          nil: undefined,
        }),
        grantArb,
        fc.option(fc.integer({ min: 1, max: 3600 }), { nil: undefined }),
        (requester, tool, args, grant, retryAfter) => {
          const query = { project: 'demo', requester, tool, ...(args === undefined ? {} : { arguments: args }) };
          const first = readOnlyPorts(grant, retryAfter);
          const second = readOnlyPorts(grant, retryAfter);
          const once = decide(query, policy, EPHEMERAL, first.approvals, first.limits);
          expect(decide(query, policy, EPHEMERAL, second.approvals, second.limits)).toEqual(once);
          expect(second.reads).toEqual(first.reads);
          // A verdict that only looks applies nothing, so the ports that throw on a change are never reached.
          expect(lookingVerdict(once)).toEqual(lookingVerdict(decide(query, policy, EPHEMERAL, first.approvals, first.limits)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('hands the approvals step and the count back as effects, which only applying them carries out', () => {
    const { approvals, limits } = readOnlyPorts({ kind: 'none' }, undefined);
    const query = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };
    const decided = decide(query, policy, EPHEMERAL, approvals, limits);
    expect(decided).toMatchObject({
      kind: 'ask',
      ask: { project: 'demo', requester: 'QA', tool: 'idea_memory_write', issueRef: undefined },
      limited: { project: 'demo', requester: 'QA', tool: 'idea_memory_write', limit: { max: 1, per: '1h' } },
    });
    if (decided.kind !== 'ask') throw new Error('expected the approvals step');
    // The same step, answered: once lets the call through and asks for it to be counted; a pending request denies it.
    expect(answerAsk(decided, { kind: 'once' })).toMatchObject({ body: { allow: true, source: 'approval' }, count: decided.limited });
    expect(answerAsk(decided, { kind: 'denied' })).toMatchObject({ body: { allow: false, reason: 'approval_denied' }, count: undefined });

    const counted: [string, string, string, ToolLimit][] = [];
    let spent = 0;
    const live: ApprovalsPort = { ...approvals, consumeOnce: () => ++spent === 1, request: () => ({ kind: 'denied' }) };
    const counts: LimitsPort = {
      ...limits,
      count: (project, requester, tool, limit) => void counted.push([project, requester, tool, limit]),
    };
    expect(applyEffects(decided, live, counts).body).toMatchObject({ allow: true, source: 'approval' });
    expect(applyEffects(decided, live, counts).body).toMatchObject({ allow: false, reason: 'approval_denied' });
    expect(counted).toEqual([['demo', 'QA', 'idea_memory_write', expect.objectContaining({ max: 1 })]]);
  });

  it('lets a throw while applying an effect go up, so that /decide answers 500 and the guard denies', () => {
    const { approvals, limits } = readOnlyPorts({ kind: 'none' }, undefined);
    const decided = decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' }, policy, EPHEMERAL, approvals, limits);
    expect(() => applyEffects(decided, approvals, limits)).toThrow('decide() spent a once answer');
  });
});
