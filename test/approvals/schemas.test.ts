/** The wire schemas of approvals and grants (docs/api.md#approvals-and-temporary-grants) accept what the classes produce and refuse malformed bodies. */
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import {
  ApprovalAnswerBodySchema,
  ApprovalAnswerResponseSchema,
  ApprovalsQuerySchema,
  ApprovalsResponseSchema,
  ApprovalWaitQuerySchema,
  DecisionApprovalSchema,
  GrantCreateBodySchema,
  GrantsResponseSchema,
} from '../../schemas/approvals.js';
import { open } from '../support/clocked-approvals.js';

describe('approvals wire schemas', () => {
  it('describe what the classes answer', async () => {
    const { requests, grants, clock } = open();
    const outcome = requests.request('demo', 'QA', 'idea_ticket_update', '#82', clock.now);
    if (outcome.kind !== 'pending') throw new Error('expected a pending request');
    expect(Value.Check(DecisionApprovalSchema, outcome.approval)).toBe(true);
    const answered = await requests.answer('demo', outcome.approval.id, 'for', 600, clock.now);
    expect(Value.Check(ApprovalAnswerResponseSchema, answered)).toBe(true);
    requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now);
    expect(Value.Check(ApprovalsResponseSchema, { approvals: requests.list('demo', undefined, clock.now) })).toBe(true);
    expect(Value.Check(GrantsResponseSchema, { grants: grants.list('demo', clock.now) })).toBe(true);
  });

  it('accept the four answers, ttlSeconds from 1 to 86,400, and nothing else', () => {
    for (const answer of ['once', 'for', 'always', 'deny']) expect(Value.Check(ApprovalAnswerBodySchema, { answer })).toBe(true);
    expect(Value.Check(ApprovalAnswerBodySchema, { answer: 'for', ttlSeconds: 86_400 })).toBe(true);
    for (const body of [
      {},
      { answer: 'yes' },
      { answer: 'for', ttlSeconds: 0 },
      { answer: 'for', ttlSeconds: 86_401 },
      { answer: 'for', ttlSeconds: 1.5 },
      { answer: 'once', extra: true },
    ]) {
      expect(Value.Check(ApprovalAnswerBodySchema, body)).toBe(false);
    }
  });

  it('accept a grant body with a requester, 1 or more tools and a ttl, and nothing else', () => {
    expect(Value.Check(GrantCreateBodySchema, { requester: 'QA', tools: ['idea_memory_write'], ttlSeconds: 60 })).toBe(true);
    for (const body of [
      { requester: 'QA', tools: [], ttlSeconds: 60 },
      { requester: 'QA', tools: ['idea_memory_write'] },
      { requester: 'QA', tools: ['idea_memory_write'], ttlSeconds: 86_401 },
      { requester: 'QA', tools: ['idea_memory_write'], ttlSeconds: 60, project: 'other' },
    ]) {
      expect(Value.Check(GrantCreateBodySchema, body)).toBe(false);
    }
  });

  it('bound the long-poll to 60 s and the status filter to the four statuses', () => {
    expect(Value.Check(ApprovalWaitQuerySchema, { waitSeconds: 60 })).toBe(true);
    expect(Value.Check(ApprovalWaitQuerySchema, { waitSeconds: 61 })).toBe(false);
    expect(Value.Check(ApprovalsQuerySchema, { status: 'expired' })).toBe(true);
    expect(Value.Check(ApprovalsQuerySchema, { status: 'open' })).toBe(false);
  });
});
