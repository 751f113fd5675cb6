/** Approval requests (docs/api.md#approvals-and-temporary-grants): one pending per requester and tool, the queue bound, refusals, expiry, answers. */
import { describe, expect, it } from 'vitest';
import { MAX_CLOSED_APPROVALS_PER_PROJECT } from '../../server/approvals/approval-requests.js';
import { ApiError } from '../../server/errors.js';
import { EVERY_PROJECT, open } from '../support/clocked-approvals.js';
import { stringContaining, stringMatching } from '../support/typed.js';

const MINUTE = 60_000;

async function rejection(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ApiError);
  return { code: (error as ApiError).code, message: (error as ApiError).message };
}

function pendingId(outcome: ReturnType<ReturnType<typeof open>['requests']['request']>): string {
  if (outcome.kind !== 'pending') throw new Error(`expected a pending request, got ${outcome.kind}`);
  return outcome.approval.id;
}

describe('ApprovalRequests.request', () => {
  it('opens a pending request that expires after the default 300 s, lists it and announces it', () => {
    const { requests, clock, changes } = open();
    const outcome = requests.request('demo', 'QA', 'idea_ticket_update_carnet', '82', clock.now);
    expect(outcome).toEqual({
      kind: 'pending',
      created: true,
      approval: {
        id: stringMatching(/^[A-Za-z0-9_-]{12}$/),
        status: 'pending',
        expiresAt: new Date(clock.now + 300_000).toISOString(),
      },
    });
    const id = pendingId(outcome);
    expect(requests.list('demo', undefined, clock.now)).toEqual([
      {
        id,
        requester: 'QA',
        tool: 'idea_ticket_update_carnet',
        issueRef: '#82',
        status: 'pending',
        createdAt: new Date(clock.now).toISOString(),
        expiresAt: new Date(clock.now + 300_000).toISOString(),
      },
    ]);
    expect(changes).toEqual([{ project: 'demo', id, status: 'pending' }]);
  });

  it('reuses the pending request of the same project, requester and tool (whatever the ticket), and only that one', () => {
    const { requests, clock, changes } = open();
    const first = pendingId(requests.request('demo', 'QA', 'idea_ticket_update', '#82', clock.now));
    const again = requests.request('demo', 'QA', 'idea_ticket_update', '#83', clock.advance(1000));
    expect(again).toMatchObject({ kind: 'pending', created: false, approval: { id: first } });
    const others = [
      requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now),
      requests.request('demo', 'Git', 'idea_ticket_update', '#82', clock.now),
      requests.request('other', 'QA', 'idea_ticket_update', '#82', clock.now),
    ].map(pendingId);
    expect(new Set([first, ...others]).size).toBe(4);
    expect(changes.map((change) => change.id)).toEqual([first, ...others]);
    expect(requests.list('demo', 'pending', clock.now).find((approval) => approval.id === first)?.issueRef).toBe('#82');
  });

  it('takes its lifetime from the option, expires on the next call after it and then opens a new one', () => {
    const { requests, clock, changes } = open({ approvalTtlSeconds: 30 });
    const first = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    expect(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.advance(29_999))).toMatchObject({
      approval: { id: first },
    });
    const second = requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.advance(1));
    expect(second).toMatchObject({ kind: 'pending', created: true });
    expect(pendingId(second)).not.toBe(first);
    expect(requests.get('demo', first, clock.now)?.status).toBe('expired');
    expect(changes.map((change) => change.status)).toEqual(['pending', 'expired', 'pending']);
  });

  it('expires unanswered requests in the periodic sweep and announces it', () => {
    const { requests, clock, changes } = open({ approvalTtlSeconds: 10 });
    const id = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    requests.sweep(clock.advance(10_000));
    expect(changes).toEqual([
      { project: 'demo', id, status: 'pending' },
      { project: 'demo', id, status: 'expired' },
    ]);
    expect(requests.list('demo', 'expired', clock.now).map((approval) => approval.id)).toEqual([id]);
  });

  it('is only for agents and catalog tools', () => {
    const { requests, clock } = open();
    for (const requester of ['', 'mcp', 'ticket-assistant:demo:82', 'QA:x']) {
      expect(() => requests.request('demo', requester, 'idea_memory_write', undefined, clock.now)).toThrow(TypeError);
    }
    expect(() => requests.request('demo', 'QA', 'rm_rf', undefined, clock.now)).toThrow(TypeError);
    expect(requests.list('demo', undefined, clock.now)).toEqual([]);
  });

  it('opens at most 100 requests per project: the 101st is queue_full, reuse still works, an answer makes room', async () => {
    const { requests, clock, changes } = open();
    const ids = Array.from({ length: 100 }, (_, index) =>
      pendingId(requests.request('demo', `agent-${index}`, 'idea_memory_write', undefined, clock.now)),
    );
    expect(requests.request('demo', 'late', 'idea_memory_write', undefined, clock.now)).toEqual({ kind: 'queue_full', limit: 'project' });
    expect(requests.request('demo', 'agent-7', 'idea_memory_write', undefined, clock.now)).toMatchObject({ approval: { id: ids[7] } });
    expect(requests.request('other', 'late', 'idea_memory_write', undefined, clock.now).kind).toBe('pending');
    expect(changes).toHaveLength(101);
    expect(requests.list('demo', 'pending', clock.now)).toHaveLength(100);
    await requests.answer('demo', ids[0] as string, 'deny', undefined, clock.now);
    expect(requests.request('demo', 'late', 'idea_memory_write', undefined, clock.now).kind).toBe('pending');
    expect(requests.request('demo', 'later', 'idea_memory_write', undefined, clock.now)).toEqual({ kind: 'queue_full', limit: 'project' });
  });

  it('makes room in a full queue as soon as requests have expired', () => {
    const { requests, clock } = open({ approvalTtlSeconds: 10 });
    for (let index = 0; index < 100; index += 1) requests.request('demo', `agent-${index}`, 'idea_memory_write', undefined, clock.now);
    expect(requests.request('demo', 'late', 'idea_memory_write', undefined, clock.advance(9_999))).toEqual({
      kind: 'queue_full',
      limit: 'project',
    });
    expect(requests.request('demo', 'late', 'idea_memory_write', undefined, clock.advance(1)).kind).toBe('pending');
  });

  it(`keeps the ${MAX_CLOSED_APPROVALS_PER_PROJECT} latest closed requests beside the pending ones`, async () => {
    const { requests, clock } = open();
    const ids: string[] = [];
    for (let index = 0; index < MAX_CLOSED_APPROVALS_PER_PROJECT + 20; index += 1) {
      const id = pendingId(requests.request('demo', `agent-${index}`, 'idea_memory_write', undefined, clock.advance(1)));
      ids.push(id);
      await requests.answer('demo', id, 'deny', undefined, clock.now);
    }
    const pending = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.advance(1)));
    const listed = requests.list('demo', undefined, clock.now).map((approval) => approval.id);
    expect(listed).toEqual([pending, ...ids.slice(-MAX_CLOSED_APPROVALS_PER_PROJECT).reverse()]);
  });
});

describe('ApprovalRequests.answer', () => {
  it('deny closes the request and answers denied for that requester and tool for 60 s, without a new request', async () => {
    const { requests, clock, changes } = open();
    const id = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    const { approval } = await requests.answer('demo', id, 'deny', undefined, clock.advance(5000));
    expect(approval).toMatchObject({ id, status: 'denied', answer: 'deny', answeredAt: new Date(clock.now).toISOString() });
    expect(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now)).toEqual({ kind: 'denied' });
    expect(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.advance(MINUTE - 1))).toEqual({ kind: 'denied' });
    expect(requests.request('demo', 'QA', 'idea_ask_agent', undefined, clock.now).kind).toBe('pending');
    expect(requests.request('demo', 'Git', 'idea_memory_write', undefined, clock.now).kind).toBe('pending');
    expect(requests.list('demo', undefined, clock.now)).toHaveLength(3);
    expect(changes.map((change) => change.status)).toEqual(['pending', 'denied', 'pending', 'pending']);
    expect(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.advance(1))).toMatchObject({
      kind: 'pending',
      created: true,
    });
  });

  it('for creates a temporary grant of ttlSeconds and closes the request as approved', async () => {
    const { requests, grants, clock } = open();
    const id = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    const outcome = await requests.answer('demo', id, 'for', 900, clock.now);
    expect(outcome.approval).toMatchObject({ status: 'approved', answer: 'for' });
    expect(outcome.grant).toMatchObject({
      requester: 'QA',
      tools: ['idea_memory_write'],
      expiresAt: new Date(clock.now + 900_000).toISOString(),
    });
    expect(grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(true);
    expect(grants.has('demo', 'QA', 'idea_memory_write', clock.now + 900_000)).toBe(false);
  });

  it('always closes the request only once the durable write is done; meanwhile it is pending, reused and not answerable', async () => {
    let finish: () => void = () => undefined;
    const calls: string[][] = [];
    const { service, requests, clock, changes } = open({
      approvalTtlSeconds: 10,
      always: {
        allowAlways: (project, requester, tool) => {
          calls.push([project, requester, tool]);
          return new Promise<void>((resolve) => (finish = resolve));
        },
      },
    });
    const id = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    const answering = service.answer('demo', id, 'always', undefined);
    expect(calls).toEqual([['demo', 'QA', 'idea_memory_write']]);
    expect((await rejection(requests.answer('demo', id, 'deny', undefined, clock.now))).code).toBe('approval_closed');
    clock.advance(60_000);
    requests.sweep(clock.now);
    expect(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now)).toMatchObject({ kind: 'pending', approval: { id } });
    expect(requests.get('demo', id, clock.now)?.status).toBe('pending');
    finish();
    expect((await answering).approval).toMatchObject({ id, status: 'approved', answer: 'always' });
    expect(changes.map((change) => change.status)).toEqual(['pending', 'approved']);
  });

  it('leaves the request pending when the always write fails, so that it can be answered again', async () => {
    let fail = true;
    const { service, requests, clock } = open({
      always: { allowAlways: () => (fail ? Promise.reject(new Error('policy_invalid')) : Promise.resolve()) },
    });
    const id = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    await expect(service.answer('demo', id, 'always', undefined)).rejects.toThrow('policy_invalid');
    expect(requests.get('demo', id, clock.now)?.status).toBe('pending');
    fail = false;
    expect((await service.answer('demo', id, 'always', undefined)).approval.status).toBe('approved');
  });

  it('always: a policy change heard during its write reaches the other requests once the write is done, never the one it answers', async () => {
    let onAsk = true;
    let finish: () => void = () => undefined;
    const { service, requests, clock, changes } = open({
      projects: { ...EVERY_PROJECT, isOnAsk: () => onAsk },
      always: { allowAlways: () => new Promise<void>((resolve) => (finish = resolve)) },
    });
    const answered = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    const other = pendingId(requests.request('demo', 'Git', 'idea_memory_write', undefined, clock.now));
    const elsewhere = pendingId(requests.request('other', 'QA', 'idea_memory_write', undefined, clock.now));
    const answering = service.answer('demo', answered, 'always', undefined);
    // The write's own change and an editor's save, heard before the write resolves.
    onAsk = false;
    service.projectChanged('demo', 'changed');
    service.projectChanged('other', 'changed');
    expect(requests.get('demo', other, clock.now)?.status).toBe('pending');
    expect(requests.get('other', elsewhere, clock.now)?.status).toBe('expired');
    finish();
    expect((await answering).approval).toMatchObject({ id: answered, status: 'approved', answer: 'always' });
    expect(requests.get('demo', other, clock.now)).toMatchObject({ status: 'expired', details: { cause: 'policy_changed' } });
    expect(changes.map((change) => [change.id, change.status])).toEqual([
      [answered, 'pending'],
      [other, 'pending'],
      [elsewhere, 'pending'],
      [elsewhere, 'expired'],
      [answered, 'approved'],
      [other, 'expired'],
    ]);
  });

  it('leaves the request pending when the grant of a for answer cannot be made', async () => {
    const { requests, grants, clock } = open();
    for (let index = 0; index < 1000; index += 1) grants.create('demo', `agent-${index}`, ['idea_ask_agent'], 600, clock.now);
    const id = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    expect((await rejection(requests.answer('demo', id, 'for', 600, clock.now))).code).toBe('limit_exceeded');
    expect(requests.get('demo', id, clock.now)?.status).toBe('pending');
    expect(grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
  });

  it('refuses unknown ids, closed requests and a ttlSeconds that does not go with the answer', async () => {
    const { requests, clock } = open({ approvalTtlSeconds: 10 });
    const id = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    expect((await rejection(requests.answer('demo', 'nope', 'once', undefined, clock.now))).code).toBe('not_found');
    expect((await rejection(requests.answer('other', id, 'once', undefined, clock.now))).code).toBe('not_found');
    for (const [answer, ttl] of [
      ['for', undefined],
      ['for', 0],
      ['for', 86_401],
      ['for', 2.5],
      ['once', 60],
      ['deny', 60],
      ['always', 60],
    ] as const) {
      expect((await rejection(requests.answer('demo', id, answer, ttl, clock.now))).code).toBe('invalid_ttl');
    }
    expect(requests.get('demo', id, clock.now)?.status).toBe('pending');
    await requests.answer('demo', id, 'once', undefined, clock.now);
    const closed = await rejection(requests.answer('demo', id, 'deny', undefined, clock.now));
    expect(closed).toEqual({ code: 'approval_closed', message: stringContaining('approved') });
    const late = pendingId(requests.request('demo', 'Git', 'idea_memory_write', undefined, clock.now));
    expect((await rejection(requests.answer('demo', late, 'once', undefined, clock.advance(10_000)))).code).toBe('approval_closed');
    expect(requests.get('demo', late, clock.now)?.status).toBe('expired');
  });
});

describe('ApprovalRequests.list', () => {
  it('lists newest first, filters by status and shows the answer', async () => {
    const { requests, clock } = open();
    const a = pendingId(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now));
    const b = pendingId(requests.request('demo', 'QA', 'idea_ask_agent', undefined, clock.advance(1000)));
    const c = pendingId(requests.request('demo', 'Git', 'idea_ask_agent', '#7', clock.advance(1000)));
    await requests.answer('demo', b, 'once', undefined, clock.advance(1000));
    expect(requests.list('demo', undefined, clock.now).map((approval) => approval.id)).toEqual([c, b, a]);
    expect(requests.list('demo', 'pending', clock.now).map((approval) => approval.id)).toEqual([c, a]);
    expect(requests.list('demo', 'approved', clock.now)).toEqual([
      expect.objectContaining({ id: b, status: 'approved', answer: 'once', answeredAt: new Date(clock.now).toISOString() }),
    ]);
    expect(requests.list('demo', 'denied', clock.now)).toEqual([]);
    expect(requests.list('nowhere', undefined, clock.now)).toEqual([]);
  });

  it('forgets a dropped project', () => {
    const { requests, clock } = open();
    requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now);
    requests.dropProject('demo');
    expect(requests.list('demo', undefined, clock.now)).toEqual([]);
    expect(requests.request('demo', 'QA', 'idea_memory_write', undefined, clock.now)).toMatchObject({ created: true });
  });
});
