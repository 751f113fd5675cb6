/**
 * docs/api.md#approvals-and-temporary-grants and docs/api.md#security, docs/api.md#live-changes-get-events, the routes: who may read and who may answer (an agent holding the
 * decide token never approves itself), the long-poll over a real socket, the `approval` events of
 * `GET /events`, and the OpenAPI document.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Approval, Grant } from '../../schemas/index.js';
import { admin, approvalOf, askDoc, decider, DECIDE_TOKEN, buildApprovalsApp } from '../support/approvals-app.js';
import { handlerReached } from '../support/app.js';
import { openSse } from '../support/sse.js';
import { READ_TOOLS } from '../support/tools.js';

const ASK_WRITE = { demo: { policy: askDoc({ allowedTools: [...READ_TOOLS], askTools: ['idea_memory_write'] }) } };
const WRITE = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' } as const;

describe('tokens', () => {
  it('lets the decide token read and long-poll, and never answer nor grant nor revoke (401); the admin token may', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE, { decideToken: DECIDE_TOKEN });
    const decided = await service.call('POST', '/decide', WRITE, decider);
    const id = approvalOf(decided.json());
    const grant = await service.grant('demo', 'Git', ['idea_ask_agent'], 60);
    const policyBefore = await readFile(service.policyPath('demo'), 'utf8');

    for (const url of ['/projects/demo/approvals', `/projects/demo/approvals/${id}`, '/projects/demo/grants']) {
      expect((await service.call('GET', url, undefined, decider)).statusCode, url).toBe(200);
      expect((await service.call('GET', url, undefined, {})).statusCode, url).toBe(401);
    }
    for (const headers of [decider, {}, { authorization: 'Bearer wrong' }]) {
      const answered = await service.call('POST', `/projects/demo/approvals/${id}`, { answer: 'always' }, headers);
      expect(answered.statusCode).toBe(401);
      expect(answered.json<{ error: { code: string } }>().error.code).toBe('unauthorized');
      const granted = await service.call(
        'POST',
        '/projects/demo/grants',
        { requester: 'QA', tools: ['idea_memory_write'], ttlSeconds: 60 },
        headers,
      );
      expect(granted.statusCode).toBe(401);
      expect((await service.call('DELETE', `/projects/demo/grants/${grant.id}`, undefined, headers)).statusCode).toBe(401);
    }
    // Nothing an agent tried changed anything.
    expect((await service.call('POST', '/decide', WRITE, decider)).json()).toMatchObject({ allow: false, reason: 'approval_required' });
    expect((await service.approvals('demo'))[0]).toMatchObject({ id, status: 'pending' });
    expect((await service.call('GET', '/projects/demo/grants', undefined, decider)).json<{ grants: Grant[] }>().grants).toHaveLength(1);
    expect(await readFile(service.policyPath('demo'), 'utf8')).toBe(policyBefore);

    expect((await service.call('POST', `/projects/demo/approvals/${id}`, { answer: 'once' }, admin)).statusCode).toBe(200);
    expect((await service.call('POST', '/decide', WRITE, decider)).json()).toMatchObject({ allow: true, source: 'approval' });
  });
});

describe('long-poll', () => {
  it('answers a waiting GET as soon as the request is answered, over a real socket', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const base = await service.listen();
    const id = approvalOf(await service.decide(WRITE));
    const started = performance.now();
    const polling = handlerReached((url) => url.endsWith(`/approvals/${id}?waitSeconds=30`), 'the long-poll');
    const waiting = fetch(`${base}/projects/demo/approvals/${id}?waitSeconds=30`).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as Approval,
      at: performance.now(),
    }));
    await polling;
    const answered = await fetch(`${base}/projects/demo/approvals/${id}`, {
      method: 'POST',
      headers: { ...admin, 'content-type': 'application/json' },
      body: JSON.stringify({ answer: 'once' }),
    });
    expect(answered.status).toBe(200);
    const result = await waiting;
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ id, status: 'approved', answer: 'once' });
    expect(result.at - started).toBeLessThan(10_000);
    const decided = await fetch(`${base}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(WRITE),
    });
    expect(await decided.json()).toMatchObject({ allow: true, source: 'approval' });
  });

  it('answers at once without waitSeconds, and after waitSeconds with the state then; refuses more than 60 s and unknown ids', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const id = approvalOf(await service.decide(WRITE));
    expect((await service.call('GET', `/projects/demo/approvals/${id}`)).json<Approval>()).toMatchObject({ id, status: 'pending' });
    const started = performance.now();
    expect((await service.call('GET', `/projects/demo/approvals/${id}?waitSeconds=1`)).json<Approval>()).toMatchObject({
      status: 'pending',
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    for (const query of ['waitSeconds=61', 'waitSeconds=-1', 'waitSeconds=x', 'other=1']) {
      expect((await service.call('GET', `/projects/demo/approvals/${id}?${query}`)).statusCode, query).toBe(400);
    }
    const unknown = await service.call('GET', '/projects/demo/approvals/nope?waitSeconds=5');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json<{ error: { code: string } }>().error.code).toBe('not_found');
    expect((await service.call('GET', `/projects/ghost/approvals/${id}`)).statusCode).toBe(404);
    expect((await service.call('GET', '/projects/demo/approvals?status=maybe')).statusCode).toBe(400);
  });

  it('releases a waiting GET when the service closes, without holding the shutdown', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const base = await service.listen();
    const id = approvalOf(await service.decide(WRITE));
    const polling = handlerReached((url) => url.endsWith(`/approvals/${id}?waitSeconds=60`), 'the long-poll');
    const waiting = fetch(`${base}/projects/demo/approvals/${id}?waitSeconds=60`).then(
      async (response) => (await response.json()) as Approval,
    );
    await polling;
    const started = performance.now();
    await service.app.close();
    expect(await waiting).toMatchObject({ id, status: 'pending' });
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('events', () => {
  it('sends an approval event for every new or changed request, after the policy events', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const base = await service.listen();
    const stream = await openSse(`${base}/events?project=demo`);
    try {
      await stream.next((frame) => frame.event === 'policy');
      const id = approvalOf(await service.decide(WRITE));
      expect((await stream.next((frame) => frame.event === 'approval')).data).toEqual({ project: 'demo', id, status: 'pending' });
      // Reusing the pending request is no change.
      await service.decide(WRITE);
      await service.answer('demo', id, { answer: 'deny' });
      const from = stream.frames.findIndex((frame) => frame.event === 'approval') + 1;
      expect((await stream.next((frame) => frame.event === 'approval', from)).data).toEqual({ project: 'demo', id, status: 'denied' });
      expect(stream.frames.filter((frame) => frame.event === 'approval')).toHaveLength(2);
    } finally {
      stream.close();
    }
  });
});

describe('OpenAPI', () => {
  it('documents the approval and grant routes, and the new decision fields', async (t) => {
    const service = await buildApprovalsApp(t, { demo: {} });
    const document = (await service.call('GET', '/docs/json')).json<{ paths: Record<string, Record<string, unknown>> }>();
    expect(Object.keys(document.paths['/projects/{project}/approvals/{id}'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/projects/{project}/grants'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(document.paths['/projects/{project}/grants/{id}'] ?? {})).toEqual(['delete']);
    expect(JSON.stringify(document.paths['/decide'])).toContain('approval_required');
  });
});
