/**
 * docs/api.md#approvals-and-temporary-grants, the decisions: allowed → temporary grant → on ask (a `once` answer, else the
 * pending request) → denied, for agents only; the answers once, for, always and deny as the next
 * calls see them; expiry, the refusal period and the full queue.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Approval, RecentDecision } from '../../schemas/index.js';
import { ADMIN_TOKEN, MovableClock, approvalOf, askDoc, buildApprovalsApp } from '../support/approvals-app.js';
import { READ_TOOLS, WRITE_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';
import { captureLogs } from '../support/app.js';

afterEach(() => {
  vi.useRealTimers();
});

const ASK_WRITE = { demo: { policy: askDoc({ allowedTools: [...READ_TOOLS], askTools: ['idea_memory_write', 'idea_ticket_update'] }) } };
const write = (requester = 'QA', extra: Record<string, unknown> = {}) => ({
  project: 'demo',
  requester,
  tool: 'idea_memory_write',
  ...extra,
});

describe('a tool on ask', () => {
  it('answers approval_required with one pending request per requester and tool, reused until answered', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const first = await service.decide(write());
    expect(first).toMatchObject({ allow: false, reason: 'approval_required', source: 'project-default' });
    expect(first.approval).toMatchObject({ status: 'pending' });
    expect(Date.parse(first.approval?.expiresAt ?? '') - Date.now()).toBeGreaterThan(290_000);
    expect(first.message).toContain('Tool idea_memory_write is denied for agent QA in project demo');
    expect(first.message).toContain('approval was requested in Permissions > Tools MCP IdeA');
    expect(first.message).toContain('may be retried once it is granted');
    const again = await service.decide(write());
    expect(again.approval?.id).toBe(first.approval?.id);
    const other = await service.decide(write('Git'));
    expect(other.approval?.id).not.toBe(first.approval?.id);
    const listed = await service.approvals('demo', 'pending');
    expect(listed.map((approval) => [approval.requester, approval.tool, approval.status])).toEqual([
      ['Git', 'idea_memory_write', 'pending'],
      ['QA', 'idea_memory_write', 'pending'],
    ]);
    // A tool neither allowed nor on ask is denied as before, and opens nothing.
    expect(await service.decide(write('QA', { tool: 'idea_ask_agent' }))).toMatchObject({ reason: 'not_in_allowlist' });
    expect(await service.approvals('demo')).toHaveLength(2);
  });

  it('never asks for anonymous, ticket-assistant or invalid requesters, nor for an unknown tool or project', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    expect(await service.decide(write(''))).toMatchObject({ allow: false, reason: 'not_in_allowlist', source: 'builtin-read-only' });
    expect(await service.decide(write('mcp'))).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    expect(await service.decide(write('ticket-assistant:demo:82'))).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    expect(await service.decide(write('QA:x'))).toMatchObject({ allow: false, reason: 'invalid_requester' });
    expect(await service.decide(write('QA', { tool: 'idea_teleport' }))).toMatchObject({ reason: 'unknown_tool' });
    expect(await service.decide(write('QA', { project: 'ghost' }))).toMatchObject({ reason: 'unknown_project' });
    expect(await service.approvals('demo')).toEqual([]);
    expect(await service.decide(write(''))).not.toHaveProperty('approval');
  });

  it('answers /decide/batch as /decide per query', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const response = await service.call('POST', '/decide/batch', {
      queries: [write(), write(), write('Git'), write('', {}), { project: 'demo', requester: 'QA', tool: 'idea_ticket_read' }],
    });
    const decisions = response.json<{ decisions: { reason: string; approval?: { id: string } }[] }>().decisions;
    expect(decisions.map((decision) => decision.reason)).toEqual([
      'approval_required',
      'approval_required',
      'approval_required',
      'not_in_allowlist',
      'allowed',
    ]);
    expect(decisions[1]?.approval?.id).toBe(decisions[0]?.approval?.id);
    expect(decisions[2]?.approval?.id).not.toBe(decisions[0]?.approval?.id);
    expect(await service.approvals('demo')).toHaveLength(2);
  });
});

describe('the answers', () => {
  it('once: allows the next matching call only, for the ticket the request named; the call after asks again', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const ticket = { tool: 'idea_ticket_update', arguments: { issueRef: '#82' } };
    const id = approvalOf(await service.decide(write('QA', ticket)));
    expect((await service.answer('demo', id, { answer: 'once' })).approval).toMatchObject({
      id,
      status: 'approved',
      answer: 'once',
      issueRef: '#82',
    });
    // Another ticket is another call: it asks anew (the request that was answered is closed).
    const other = await service.decide(write('QA', { ...ticket, arguments: { issueRef: '83' } }));
    expect(other).toMatchObject({ allow: false, reason: 'approval_required' });
    expect(other.approval?.id).not.toBe(id);
    const allowed = await service.decide(write('QA', { ...ticket, arguments: { issueRef: '82' } }));
    expect(allowed).toMatchObject({ allow: true, reason: 'allowed', source: 'approval' });
    expect(allowed.message).toContain('approved once');
    expect(await service.decide(write('QA', ticket))).toMatchObject({ allow: false, reason: 'approval_required' });
  });

  it('once for no ticket: a call whose issueRef is a list or an object is invalid_arguments and does not use it up', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const id = approvalOf(await service.decide(write('QA', { tool: 'idea_ticket_update' })));
    await service.answer('demo', id, { answer: 'once' });
    for (const issueRef of [['82'], { id: '82' }, null, false]) {
      const refused = await service.decide(write('QA', { tool: 'idea_ticket_update', arguments: { issueRef } }));
      expect(refused, JSON.stringify(issueRef)).toMatchObject({ allow: false, reason: 'invalid_arguments', source: 'project-default' });
      expect(refused.message).toContain('issueRef');
    }
    // Nothing was opened for them, and the once is still there for the call it was given for.
    expect(await service.approvals('demo', 'pending')).toEqual([]);
    expect(await service.decide(write('QA', { tool: 'idea_ticket_update' }))).toMatchObject({ allow: true, source: 'approval' });
  });

  it('for: a temporary grant of ttlSeconds, listed, that allows with source grant until it is revoked', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const id = approvalOf(await service.decide(write()));
    const answered = await service.answer('demo', id, { answer: 'for', ttlSeconds: 3600 });
    expect(answered.grant).toMatchObject({ requester: 'QA', tools: ['idea_memory_write'] });
    expect(Date.parse(answered.grant?.expiresAt ?? '') - Date.now()).toBeGreaterThan(3_590_000);
    for (let call = 0; call < 3; call++) expect(await service.decide(write())).toMatchObject({ allow: true, source: 'grant' });
    expect(await service.decide(write('Git'))).toMatchObject({ allow: false, reason: 'approval_required' });
    const grants = (await service.call('GET', '/projects/demo/grants')).json<{ grants: { id: string }[] }>().grants;
    expect(grants.map((grant) => grant.id)).toEqual([answered.grant?.id]);
    expect((await service.call('DELETE', `/projects/demo/grants/${answered.grant?.id}`)).statusCode).toBe(200);
    expect(await service.decide(write())).toMatchObject({ allow: false, reason: 'approval_required' });
  });

  it('always: the tool joins the agent override, made from its effective policy and taken off its askTools, in the file', async (t) => {
    const service = await buildApprovalsApp(t, {
      demo: {
        policy: askDoc({ allowedTools: ['idea_ticket_read', 'idea_ticket_list'], askTools: ['idea_memory_write', 'idea_ask_agent'] }),
      },
    });
    const id = approvalOf(await service.decide(write()));
    expect((await service.answer('demo', id, { answer: 'always' })).approval).toMatchObject({ status: 'approved', answer: 'always' });
    const file = JSON.parse(await readFile(service.policyPath('demo'), 'utf8')) as Record<string, unknown>;
    expect(file.agents).toEqual([
      {
        agentId: 'QA',
        policy: { allowedTools: ['idea_ticket_read', 'idea_ticket_list', 'idea_memory_write'], askTools: ['idea_ask_agent'] },
      },
    ]);
    expect(await service.decide(write())).toMatchObject({ allow: true, source: 'agent-override' });
    expect(await service.decide(write('QA', { tool: 'idea_ask_agent' }))).toMatchObject({ reason: 'approval_required' });
    expect(await service.decide(write('Git'))).toMatchObject({ reason: 'approval_required' });
  });

  it('always: keeps the request pending and answers the error when the file cannot be written (invalid file)', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: askDoc({ allowedTools: [], askTools: ['idea_memory_write'] }) } });
    const id = approvalOf(await service.decide(write()));
    const broken = '{ "version": 1, ';
    // The answer reads the file afresh before writing it: an invalid file is refused, not replaced.
    await writeFile(service.policyPath('demo'), broken);
    const response = await service.call('POST', `/projects/demo/approvals/${id}`, { answer: 'always' });
    expect(response.statusCode).toBe(409);
    expect(response.json<{ error: { code: string } }>().error.code).toBe('policy_invalid');
    expect(await readFile(service.policyPath('demo'), 'utf8')).toBe(broken);
    expect((await service.approvals('demo'))[0]).toMatchObject({ id, status: 'pending' });
  });

  it('deny: approval_denied for that requester and tool for 60 s without a new request, then asks again', async (t) => {
    const clock = new MovableClock();
    const service = await buildApprovalsApp(t, ASK_WRITE, { clock });
    const id = approvalOf(await service.decide(write()));
    expect((await service.answer('demo', id, { answer: 'deny' })).approval).toMatchObject({ status: 'denied', answer: 'deny' });
    const refused = await service.decide(write());
    expect(refused).toMatchObject({ allow: false, reason: 'approval_denied', source: 'project-default' });
    expect(refused).not.toHaveProperty('approval');
    expect(refused.message).toContain('refused');
    expect(await service.decide(write('Git'))).toMatchObject({ reason: 'approval_required' });
    clock.advance(59_000);
    expect(await service.decide(write())).toMatchObject({ reason: 'approval_denied' });
    clock.advance(2_000);
    const asked = await service.decide(write());
    expect(approvalOf(asked)).not.toBe(id);
  });

  it('answers 409 approval_closed to a second answer, 404 to an unknown request, 400 to a bad ttlSeconds', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const id = approvalOf(await service.decide(write()));
    const url = `/projects/demo/approvals/${id}`;
    for (const body of [
      { answer: 'for' },
      { answer: 'once', ttlSeconds: 60 },
      { answer: 'for', ttlSeconds: 0 },
      { answer: 'maybe' },
      { answer: 'once', who: 'me' },
    ]) {
      const response = await service.call('POST', url, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json<{ error: { code: string } }>().error.code).toBe('invalid_request');
    }
    await service.answer('demo', id, { answer: 'once' });
    const again = await service.call('POST', url, { answer: 'deny' });
    expect(again.statusCode).toBe(409);
    expect(again.json<{ error: { code: string } }>().error.code).toBe('approval_closed');
    expect((await service.call('POST', '/projects/demo/approvals/nope', { answer: 'once' })).statusCode).toBe(404);
    const ghost = await service.call('POST', `/projects/ghost/approvals/${id}`, { answer: 'once' });
    expect(ghost.statusCode).toBe(404);
    expect(ghost.json<{ error: { code: string } }>().error.code).toBe('unknown_project');
  });
});

describe('grants, expiry and limits', () => {
  it('a grant allows a tool that is not on ask, for agents only, and never while the file is invalid', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: askDoc({ allowedTools: [...READ_TOOLS] }) } });
    const grant = await service.grant('demo', 'QA', ['idea_memory_write', 'idea_ask_agent'], 600);
    expect(grant.tools).toEqual(['idea_ask_agent', 'idea_memory_write']);
    expect(await service.decide(write())).toMatchObject({ allow: true, reason: 'allowed', source: 'grant' });
    expect(await service.decide(write('Git'))).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    for (const requester of ['', 'mcp', 'ticket-assistant:demo:82', 'QA:x']) {
      const refused = await service.call('POST', '/projects/demo/grants', { requester, tools: ['idea_memory_write'], ttlSeconds: 60 });
      expect(refused.statusCode, requester).toBe(400);
      expect(refused.json<{ error: { code: string } }>().error.code, requester).toBe('invalid_requester');
    }
    await writeFile(service.policyPath('demo'), '[]');
    await waitFor(async () => (await service.decide(write())).reason === 'policy_invalid', 'the invalid file is read');
  });

  it('refuses grants of names outside the catalog, duplicates, bad durations and unknown projects', async (t) => {
    const service = await buildApprovalsApp(t, { demo: {} });
    const post = (body: unknown, project = 'demo') => service.call('POST', `/projects/${project}/grants`, body);
    const bad = await post({ requester: 'QA', tools: ['idea_memory_write', 'idea_nope', 'idea_memory_write'], ttlSeconds: 60 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ error: { code: string; details: unknown } }>().error).toMatchObject({
      code: 'invalid_tools',
      details: { unknown: ['idea_nope'], duplicates: ['idea_memory_write'] },
    });
    for (const body of [
      { requester: 'QA', tools: ['idea_memory_write'], ttlSeconds: 0 },
      { requester: 'QA', tools: ['idea_memory_write'], ttlSeconds: 86_401 },
      { requester: 'QA', tools: [], ttlSeconds: 60 },
      { requester: 'QA', tools: ['idea_memory_write'] },
    ]) {
      expect((await post(body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await post({ requester: 'QA', tools: ['idea_memory_write'], ttlSeconds: 60 }, 'ghost')).statusCode).toBe(404);
    expect((await service.call('GET', '/projects/ghost/grants')).statusCode).toBe(404);
    expect((await service.call('GET', '/projects/ghost/approvals')).statusCode).toBe(404);
    expect((await service.call('DELETE', '/projects/demo/grants/nope')).statusCode).toBe(404);
    expect(await service.decide(write())).toMatchObject({ allow: false });
  });

  it('expires a pending request after PDP_APPROVAL_TTL_SECONDS; the next call opens a new one', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE, { approvalTtlSeconds: 1 });
    const first = await service.decide(write());
    const id = approvalOf(first);
    expect(Date.parse(first.approval?.expiresAt ?? '') - Date.now()).toBeLessThanOrEqual(1000);
    const waited = await service.call('GET', `/projects/demo/approvals/${id}?waitSeconds=10`);
    expect(waited.json<Approval>()).toMatchObject({ id, status: 'expired' });
    const answer = await service.call('POST', `/projects/demo/approvals/${id}`, { answer: 'once' });
    expect(answer.statusCode).toBe(409);
    expect(approvalOf(await service.decide(write()))).not.toBe(id);
  });

  it('opens at most 100 requests per project; past that, approval_required says the queue is full', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const queries = Array.from({ length: 100 }, (_, index) => write(`agent-${index}`));
    const response = await service.call('POST', '/decide/batch', { queries });
    const decisions = response.json<{ decisions: { reason: string; approval?: unknown }[] }>().decisions;
    expect(decisions.every((decision) => decision.reason === 'approval_required' && decision.approval !== undefined)).toBe(true);
    const full = await service.decide(write('one-more'));
    expect(full).toMatchObject({ allow: false, reason: 'approval_required' });
    expect(full).not.toHaveProperty('approval');
    expect(full.message).toContain('queue of project demo is full');
    expect(await service.approvals('demo', 'pending')).toHaveLength(100);
    // Answering one frees a place.
    const first = (await service.approvals('demo', 'pending')).at(-1);
    await service.answer('demo', first?.id ?? '', { answer: 'deny' });
    expect(approvalOf(await service.decide(write('one-more')))).toBeTypeOf('string');
  });
  it('keeps room for the agents the project declares: a full queue of made-up requesters gives way, oldest first', async (t) => {
    const declared = { agents: [{ id: 'QA' }, { id: 'Git' }] };
    const service = await buildApprovalsApp(t, { demo: { ...ASK_WRITE.demo, ...declared } });
    const queries = Array.from({ length: 100 }, (_, index) => write(`made-up-${index}`));
    await service.call('POST', '/decide/batch', { queries });
    expect(await service.approvals('demo', 'pending')).toHaveLength(100);
    // Another made-up requester still finds the queue full.
    expect(await service.decide(write('made-up-100'))).not.toHaveProperty('approval');
    // A declared agent asks: the oldest made-up request makes room, closed with its cause.
    const asked = await service.decide(write('QA'));
    expect(approvalOf(asked)).toBeTypeOf('string');
    const pending = await service.approvals('demo', 'pending');
    expect(pending).toHaveLength(100);
    expect(pending.map((approval) => approval.requester)).not.toContain('made-up-0');
    const displaced = (await service.approvals('demo', 'expired')).find((approval) => approval.requester === 'made-up-0');
    expect(displaced).toMatchObject({ status: 'expired', details: { cause: 'displaced' } });
    const answer = await service.call('POST', `/projects/demo/approvals/${displaced?.id ?? ''}`, { answer: 'once' });
    expect(answer.statusCode).toBe(409);
    expect(answer.json()).toMatchObject({ error: { code: 'approval_closed', details: { cause: 'displaced' } } });
    expect(approvalOf(await service.decide(write('Git')))).toBeTypeOf('string');
    const after = await service.approvals('demo', 'pending');
    expect(after.filter((approval) => approval.requester.startsWith('made-up-'))).toHaveLength(98);
    expect(after.map((approval) => approval.requester)).not.toContain('made-up-1');
  });
});

describe('the requests of one requester', () => {
  it('are at most 10 open per project: the 11th tool answers approval_required without a request, saying why', async (t) => {
    const onAsk = WRITE_TOOLS.slice(0, 12);
    const service = await buildApprovalsApp(t, { demo: { policy: askDoc({ allowedTools: [...READ_TOOLS], askTools: onAsk }) } });
    const decisions = await Promise.all(onAsk.map((tool) => service.decide(write('QA', { tool }))));
    expect(decisions.slice(0, 10).every((decision) => decision.approval !== undefined)).toBe(true);
    for (const decision of decisions.slice(10)) {
      expect(decision).toMatchObject({ allow: false, reason: 'approval_required' });
      expect(decision).not.toHaveProperty('approval');
      expect(decision.message).toContain('agent QA already has 10 open approval requests in project demo: no request was opened');
    }
    expect(await service.approvals('demo', 'pending')).toHaveLength(10);
    // Another requester still asks; reusing one of the 10 still works; answering one frees a place.
    expect(approvalOf(await service.decide(write('Git', { tool: onAsk[11] })))).toBeTypeOf('string');
    expect(approvalOf(await service.decide(write('QA', { tool: onAsk[0] })))).toBe(decisions[0]?.approval?.id);
    await service.answer('demo', decisions[0]?.approval?.id ?? '', { answer: 'deny' });
    expect(approvalOf(await service.decide(write('QA', { tool: onAsk[10] })))).toBeTypeOf('string');
  });
});

describe('audit', () => {
  it('logs every answer and grant change (project, requester, tool, answer, who) and shows the calls they allowed with their source', async (t) => {
    const logs: Record<string, unknown>[] = [];
    const service = await buildApprovalsApp(t, ASK_WRITE, { logger: captureLogs(logs) });
    const once = approvalOf(await service.decide(write()));
    await service.answer('demo', once, { answer: 'once' });
    await service.decide(write());
    const denied = approvalOf(await service.decide(write('Git')));
    await service.answer('demo', denied, { answer: 'deny' });
    const grant = await service.grant('demo', 'Main', ['idea_ask_agent'], 60);
    await service.decide(write('Main', { tool: 'idea_ask_agent' }));
    await service.call('DELETE', `/projects/demo/grants/${grant.id}`);
    const answers = logs.filter((line) => line.msg === 'approval answered');
    expect(answers).toEqual([
      expect.objectContaining({ level: 30, project: 'demo', requester: 'QA', tool: 'idea_memory_write', answer: 'once', who: 'admin' }),
      expect.objectContaining({ level: 30, project: 'demo', requester: 'Git', tool: 'idea_memory_write', answer: 'deny', who: 'admin' }),
    ]);
    expect(logs.find((line) => line.msg === 'grant created')).toMatchObject({
      requester: 'Main',
      tools: ['idea_ask_agent'],
      who: 'admin',
    });
    expect(logs.find((line) => line.msg === 'grant revoked')).toMatchObject({ grant: grant.id, who: 'admin' });
    expect(logs.find((line) => line.msg === 'decision allowed by approval')).toMatchObject({ requester: 'QA', source: 'approval' });
    expect(JSON.stringify(logs)).not.toContain(ADMIN_TOKEN);
    const recent = (await service.call('GET', '/projects/demo/decisions?allow=true')).json<{ decisions: RecentDecision[] }>().decisions;
    expect(recent.map((decision) => [decision.requester, decision.tool, decision.source])).toEqual([
      ['Main', 'idea_ask_agent', 'grant'],
      ['QA', 'idea_memory_write', 'approval'],
    ]);
  });
});
