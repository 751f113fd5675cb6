/**
 * docs/api.md#approvals-and-temporary-grants, invariants: a pending request closes (`expired`, `details.cause:
 * "policy_changed"`) once its tool is no longer on ask for its requester, whether the policy changed
 * through the API or in the file; answering it then is `409 approval_closed` and grants nothing; an
 * armed `once` is dropped with it.
 */
import { writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { Approval } from '../../schemas/index.js';
import { admin, approvalOf, askDoc, buildApprovalsApp, type Service } from '../support/approvals-app.js';
import { openSse, type SseFrame } from '../support/sse.js';
import { waitFor } from '../support/wait.js';

const READ = ['idea_ticket_read'];
const ASK_WRITE = { demo: { policy: askDoc({ allowedTools: READ, askTools: ['idea_memory_write'] }) } };
const write = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };

/** Takes the tool off ask for everyone through the API (the project default, as the panel does). */
async function takeOffAskByApi(service: Service): Promise<void> {
  const response = await service.call('PUT', '/projects/demo/mcp-tool-permissions/default', { allowedTools: READ });
  expect(response.statusCode).toBe(200);
}

async function approvalIn(service: Service, id: string): Promise<Approval | undefined> {
  return (await service.approvals('demo')).find((approval) => approval.id === id);
}

describe('a tool taken off ask', () => {
  it('closes its pending request at once (expired, cause policy_changed); answering it is 409 and grants nothing', async (t) => {
    for (const answer of [{ answer: 'always' }, { answer: 'for', ttlSeconds: 3600 }, { answer: 'once' }]) {
      const service = await buildApprovalsApp(t, ASK_WRITE);
      const id = approvalOf(await service.decide(write));
      await takeOffAskByApi(service);
      expect(await approvalIn(service, id)).toMatchObject({ status: 'expired', details: { cause: 'policy_changed' } });
      expect(await service.approvals('demo', 'pending')).toEqual([]);
      const response = await service.call('POST', `/projects/demo/approvals/${id}`, answer);
      expect(response.statusCode).toBe(409);
      expect(response.json()).toMatchObject({
        error: { code: 'approval_closed', details: { status: 'expired', cause: 'policy_changed' } },
      });
      expect(await service.decide(write)).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
      const permissions = (await service.call('GET', '/projects/demo/mcp-tool-permissions')).json<{
        agents: { agentId: string }[];
        projectDefault: { allowedTools: string[] };
      }>();
      expect(permissions.projectDefault.allowedTools).toEqual(READ);
      expect(permissions.agents.map((agent) => agent.agentId)).not.toContain('QA');
      expect((await service.call('GET', '/projects/demo/grants')).json()).toEqual({ grants: [] });
    }
  });

  it('announces the closed request on /events before the policy that closed it', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const base = await service.listen();
    const id = approvalOf(await service.decide(write));
    const stream = await openSse(`${base}/events?project=demo`, admin);
    try {
      const first = await stream.next((frame) => frame.event === 'policy');
      await takeOffAskByApi(service);
      const from = stream.frames.indexOf(first) + 1;
      await stream.next((frame) => frame.event === 'policy', from);
      const after = stream.frames.slice(from).map((frame: SseFrame) => frame.event);
      // The registry tells the approvals before the events stream (server/http/app.ts).
      expect(after.slice(0, 2)).toEqual(['approval', 'policy']);
      expect(stream.frames[from]?.data).toMatchObject({ project: 'demo', id, status: 'expired' });
    } finally {
      stream.close();
    }
  });

  it('closes it on an external edit of the file too', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const id = approvalOf(await service.decide(write));
    await writeFile(service.policyPath('demo'), JSON.stringify(askDoc({ allowedTools: READ })));
    await waitFor(async () => (await approvalIn(service, id))?.status === 'expired', 'the request to close');
    expect(await approvalIn(service, id)).toMatchObject({ details: { cause: 'policy_changed' } });
    const response = await service.call('POST', `/projects/demo/approvals/${id}`, { answer: 'always' });
    expect(response.statusCode).toBe(409);
  });

  it('keeps the requests of tools still on ask, and of other agents whose policy did not change', async (t) => {
    const service = await buildApprovalsApp(t, {
      demo: { policy: askDoc({ allowedTools: READ, askTools: ['idea_memory_write', 'idea_ask_agent'] }) },
    });
    const memory = approvalOf(await service.decide(write));
    const ask = approvalOf(await service.decide({ ...write, tool: 'idea_ask_agent' }));
    const git = approvalOf(await service.decide({ ...write, requester: 'Git' }));
    // QA alone loses idea_memory_write from ask: its override keeps idea_ask_agent on ask.
    const response = await service.call('PUT', '/projects/demo/mcp-tool-permissions/agents/QA', {
      allowedTools: READ,
      askTools: ['idea_ask_agent'],
    });
    expect(response.statusCode).toBe(200);
    expect(await approvalIn(service, memory)).toMatchObject({ status: 'expired', details: { cause: 'policy_changed' } });
    expect(await approvalIn(service, ask)).toMatchObject({ status: 'pending' });
    expect(await approvalIn(service, git)).toMatchObject({ status: 'pending' });
    expect((await service.answer('demo', git, { answer: 'once' })).approval.status).toBe('approved');
  });

  it('an always answered while a write takes the tool off ask writes nothing: the write that read the file decides', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const id = approvalOf(await service.decide(write));
    // Both go through the project's write queue, the PUT first; the answer's own check runs before the PUT lands.
    const [put, answered] = await Promise.all([
      service.call('PUT', '/projects/demo/mcp-tool-permissions/default', { allowedTools: READ }),
      service.call('POST', `/projects/demo/approvals/${id}`, { answer: 'always' }),
    ]);
    expect(put.statusCode).toBe(200);
    expect(answered.statusCode).toBe(409);
    expect(answered.json()).toMatchObject({ error: { code: 'approval_closed', details: { cause: 'policy_changed' } } });
    expect(await approvalIn(service, id)).toMatchObject({ status: 'expired', details: { cause: 'policy_changed' } });
    expect(await service.decide(write)).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
  });

  it('drops an armed once: put back on ask later, the tool asks again instead of allowing', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE);
    const id = approvalOf(await service.decide(write));
    await service.answer('demo', id, { answer: 'once' });
    await takeOffAskByApi(service);
    const back = await service.call('PUT', '/projects/demo/mcp-tool-permissions/default', {
      allowedTools: READ,
      askTools: ['idea_memory_write'],
    });
    expect(back.statusCode).toBe(200);
    const decision = await service.decide(write);
    expect(decision).toMatchObject({ allow: false, reason: 'approval_required' });
  });
});
