/**
 * The approver token (docs/api.md#security, docs/api.md#approvals-and-temporary-grants): it answers approval requests with `once`, `for` up to
 * 8 h or `deny`, never `always` nor any write (403 forbidden, nothing changes); its answers are
 * logged and listed with `answeredBy` and the `via` the caller declares. And the log of refused
 * credentials: route, address, expected and presented kinds, never the token, at most 10 a minute.
 */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Approval } from '../../schemas/index.js';
import { REFUSED_CREDENTIAL_LINES_PER_MINUTE, refusedCredentialLog } from '../../server/http/refused-credentials.js';
import { admin, approvalOf, approver, APPROVER_TOKEN, askDoc, decider, DECIDE_TOKEN, buildApprovalsApp } from '../support/approvals-app.js';
import { READ_TOOLS } from '../support/tools.js';
import { captureLogs } from '../support/app.js';

const ASK = { demo: { policy: askDoc({ allowedTools: [...READ_TOOLS], askTools: ['idea_memory_write', 'idea_ticket_create'] }) } };
const WRITE = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' } as const;
const tokens = { decideToken: DECIDE_TOKEN, approverToken: APPROVER_TOKEN };
interface ErrorReply {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

describe('the approver token', () => {
  it('answers once, and the answer is listed and logged with answeredBy approver and via elicitation', async (t) => {
    const logs: Record<string, unknown>[] = [];
    const service = await buildApprovalsApp(t, ASK, { ...tokens, logger: captureLogs(logs) });
    const id = approvalOf((await service.call('POST', '/decide', WRITE, decider)).json());
    const answered = await service.call('POST', `/projects/demo/approvals/${id}`, { answer: 'once', via: 'elicitation' }, approver);
    expect(answered.statusCode).toBe(200);
    expect(answered.json<{ approval: Approval }>().approval).toMatchObject({
      id,
      status: 'approved',
      answer: 'once',
      answeredBy: 'approver',
      via: 'elicitation',
    });
    const listed = (await service.call('GET', '/projects/demo/approvals', undefined, decider)).json<{ approvals: Approval[] }>();
    expect(listed.approvals.find((approval) => approval.id === id)).toMatchObject({ answeredBy: 'approver', via: 'elicitation' });
    expect(logs.find((line) => line.msg === 'approval answered')).toMatchObject({
      approval: id,
      requester: 'QA',
      tool: 'idea_memory_write',
      answer: 'once',
      who: 'approver',
      via: 'elicitation',
    });
    expect((await service.call('POST', '/decide', WRITE, decider)).json()).toMatchObject({ allow: true, source: 'approval' });

    // The admin token's answers say so, with no via unless given.
    const other = approvalOf((await service.call('POST', '/decide', { ...WRITE, tool: 'idea_ticket_create' }, decider)).json());
    const byAdmin = await service.call('POST', `/projects/demo/approvals/${other}`, { answer: 'deny' }, admin);
    expect(byAdmin.json<{ approval: Approval }>().approval).toMatchObject({ answeredBy: 'admin', status: 'denied' });
    expect(byAdmin.json<{ approval: Approval }>().approval.via).toBeUndefined();
  });

  it('may answer for up to 8 h and deny; always, or a longer for, is 403 forbidden and leaves the request pending', async (t) => {
    const service = await buildApprovalsApp(t, ASK, tokens);
    const policyBefore = await readFile(service.policyPath('demo'), 'utf8');
    const id = approvalOf((await service.call('POST', '/decide', WRITE, decider)).json());
    const refusals = [{ answer: 'always' }, { answer: 'for', ttlSeconds: 28_801 }, { answer: 'always', via: 'elicitation' }];
    for (const body of refusals) {
      const refused = await service.call('POST', `/projects/demo/approvals/${id}`, body, approver);
      expect(refused.statusCode, JSON.stringify(body)).toBe(403);
      const { error } = refused.json<ErrorReply>();
      expect(error.code).toBe('forbidden');
      expect(error.message).toMatch(/approver token may .*(admin token)/);
    }
    expect((await service.approvals('demo'))[0]).toMatchObject({ id, status: 'pending' });
    expect(await readFile(service.policyPath('demo'), 'utf8')).toBe(policyBefore);

    const granted = await service.call('POST', `/projects/demo/approvals/${id}`, { answer: 'for', ttlSeconds: 28_800 }, approver);
    expect(granted.statusCode).toBe(200);
    expect(granted.json<{ grant: { tools: string[] } }>().grant.tools).toEqual(['idea_memory_write']);

    const other = approvalOf((await service.call('POST', '/decide', { ...WRITE, tool: 'idea_ticket_create' }, decider)).json());
    expect((await service.call('POST', `/projects/demo/approvals/${other}`, { answer: 'deny' }, approver)).statusCode).toBe(200);
    expect((await service.call('POST', '/decide', { ...WRITE, tool: 'idea_ticket_create' }, decider)).json()).toMatchObject({
      allow: false,
      reason: 'approval_denied',
    });
  });

  it('writes nothing else: grants, revocations, permissions and ephemeral policies are 403 forbidden', async (t) => {
    const service = await buildApprovalsApp(t, ASK, tokens);
    const policyBefore = await readFile(service.policyPath('demo'), 'utf8');
    const grant = await service.grant('demo', 'Git', ['idea_ask_agent'], 60);
    const writes: ['POST' | 'PUT' | 'DELETE', string, unknown][] = [
      ['POST', '/projects/demo/grants', { requester: 'QA', tools: ['idea_memory_write'], ttlSeconds: 60 }],
      ['DELETE', `/projects/demo/grants/${grant.id}`, undefined],
      ['PUT', '/projects/demo/mcp-tool-permissions/agents/QA', { allowedTools: ['idea_memory_write'] }],
      ['PUT', '/projects/demo/mcp-tool-permissions/default', { allowedTools: ['idea_memory_write'] }],
      [
        'PUT',
        `/projects/demo/ephemeral-policies/${encodeURIComponent('ticket-assistant:demo:82')}`,
        { allowedTools: ['idea_memory_write'] },
      ],
    ];
    for (const [method, url, body] of writes) {
      const response = await service.call(method, url, body, approver);
      expect(response.statusCode, `${method} ${url}`).toBe(403);
      expect(response.json<ErrorReply>().error.message).toMatch(/needs the admin token/);
    }
    expect(await readFile(service.policyPath('demo'), 'utf8')).toBe(policyBefore);
    expect((await service.call('GET', '/projects/demo/grants', undefined, decider)).json<{ grants: unknown[] }>().grants).toHaveLength(1);
  });

  it('answers only in the projects of PDP_APPROVER_PROJECTS: elsewhere 403 forbidden, the request stays pending', async (t) => {
    const projects = { ...ASK, other: ASK.demo, third: ASK.demo };
    const service = await buildApprovalsApp(t, projects, { ...tokens, approverProjects: ['other'] });
    const pending = async (project: string): Promise<string> =>
      approvalOf((await service.call('POST', '/decide', { ...WRITE, project }, decider)).json());
    for (const project of ['demo', 'third']) {
      const id = await pending(project);
      for (const answer of ['once', 'for', 'deny']) {
        const refused = await service.call('POST', `/projects/${project}/approvals/${id}`, { answer, ttlSeconds: 60 }, approver);
        expect(refused.statusCode, `${project} ${answer}`).toBe(403);
        expect(refused.json<ErrorReply>().error).toMatchObject({
          code: 'forbidden',
          message: expect.stringContaining(`may not answer requests of project ${project} (PDP_APPROVER_PROJECTS)`) as unknown,
        });
      }
      expect((await service.approvals(project))[0]).toMatchObject({ id, status: 'pending' });
      expect((await service.call('POST', '/decide', { ...WRITE, project }, decider)).json()).toMatchObject({ allow: false });
      // The admin token still answers there.
      expect((await service.call('POST', `/projects/${project}/approvals/${id}`, { answer: 'deny' }, admin)).statusCode).toBe(200);
    }
    const inScope = await pending('other');
    expect((await service.call('POST', `/projects/other/approvals/${inScope}`, { answer: 'once' }, approver)).statusCode).toBe(200);
    expect((await service.call('POST', '/decide', { ...WRITE, project: 'other' }, decider)).json()).toMatchObject({
      allow: true,
      source: 'approval',
    });
  });
});

describe('refused credentials in the log', () => {
  it('logs the route, the address and the token kinds, never the token, at most 10 lines a minute', async (t) => {
    const logs: Record<string, unknown>[] = [];
    const service = await buildApprovalsApp(t, ASK, { ...tokens, logger: captureLogs(logs) });
    const wrong = 'wrong-token-that-must-never-be-logged';
    await service.call('POST', '/decide', WRITE, { authorization: `Bearer ${wrong}` });
    await service.call('POST', '/projects/demo/approvals/x1', { answer: 'once' }, decider);
    await service.call('PUT', '/projects/demo/mcp-tool-permissions/default', { allowedTools: [] }, approver);
    await service.call('GET', '/projects/demo/approvals?status=pending', undefined, {});
    const refused = logs.filter((line) => line.msg === 'credentials refused');
    expect(
      refused.map(({ method, route, remoteAddress, expected, presented, level }) => ({
        method,
        route,
        remoteAddress,
        expected,
        presented,
        level,
      })),
    ).toEqual([
      { method: 'POST', route: '/decide', remoteAddress: '127.0.0.1', expected: 'decide or admin', presented: 'unknown', level: 40 },
      {
        method: 'POST',
        route: '/projects/:project/approvals/:id',
        remoteAddress: '127.0.0.1',
        expected: 'admin or approver',
        presented: 'decide',
        level: 40,
      },
      {
        method: 'PUT',
        route: '/projects/:project/mcp-tool-permissions/default',
        remoteAddress: '127.0.0.1',
        expected: 'admin',
        presented: 'approver',
        level: 40,
      },
      {
        method: 'GET',
        route: '/projects/:project/approvals',
        remoteAddress: '127.0.0.1',
        expected: 'decide or admin',
        presented: 'none',
        level: 40,
      },
    ]);

    for (let i = 0; i < 30; i += 1) await service.call('POST', '/decide', WRITE, { authorization: `Bearer ${wrong}` });
    expect(logs.filter((line) => line.msg === 'credentials refused')).toHaveLength(REFUSED_CREDENTIAL_LINES_PER_MINUTE);
    const text = JSON.stringify(logs);
    for (const secret of [wrong, DECIDE_TOKEN, APPROVER_TOKEN]) expect(text).not.toContain(secret);
  });

  it('after a minute logs again, saying how many refusals it left out', () => {
    let now = 1_000_000;
    const lines: Record<string, unknown>[] = [];
    const log = refusedCredentialLog({ warn: (fields: object) => void lines.push(fields as Record<string, unknown>) } as never, () => now);
    const refusal = {
      method: 'POST',
      route: '/decide',
      remoteAddress: '127.0.0.1',
      expected: 'decide or admin',
      presented: 'unknown',
    } as const;
    for (let i = 0; i < 25; i += 1) log(refusal);
    expect(lines).toHaveLength(10);
    expect(lines.every((line) => line.suppressed === undefined)).toBe(true);
    now += 59_999;
    log(refusal);
    expect(lines).toHaveLength(10);
    now += 1;
    log(refusal);
    log(refusal);
    expect(lines).toHaveLength(12);
    expect(lines[10]).toMatchObject({ suppressed: 16 });
    expect(lines[11]?.suppressed).toBeUndefined();
  });
});
