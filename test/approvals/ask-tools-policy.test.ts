/**
 * docs/api.md#approvals-and-temporary-grants, the policy side: `askTools` in the file and the write bodies, the conflicts a name
 * in both lists makes, the permissions view and `.../effective` with the effective `askTools`, and
 * the view's `lastValid` beside an invalid file.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { PUBLISHED_SCHEMA_PATH } from '../../schemas/publish.js';
import type { EffectivePolicy, PermissionsView } from '../../schemas/index.js';
import { askDoc, buildApprovalsApp, type Service } from '../support/approvals-app.js';
import { READ_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

const view = async (service: Service, project = 'demo'): Promise<PermissionsView> =>
  (await service.call('GET', `/projects/${project}/mcp-tool-permissions`)).json<PermissionsView>();

describe('askTools in the policy file', () => {
  it('shows the effective askTools of the default and of each agent, and leaves views of files without them as they were', async (t) => {
    const service = await buildApprovalsApp(t, {
      demo: {
        policy: askDoc(
          { allowedTools: [...READ_TOOLS], askTools: ['idea_memory_write', 'idea_ask_agent'] },
          {
            QA: { allowedTools: [...READ_TOOLS], askTools: ['idea_ticket_create'] },
            Git: { allowedTools: [...READ_TOOLS], askTools: ['idea_ask_agent', 'idea_memory_write'] },
            Main: { allowedTools: [...READ_TOOLS] },
          },
        ),
        agents: [{ id: 'DevFrontend' }],
      },
      plain: { policy: askDoc({ allowedTools: ['idea_ticket_read'] }, { QA: { allowedTools: ['idea_ticket_list'] } }) },
    });
    const shown = await view(service);
    // Catalog order, whatever order the file used.
    expect(shown.projectDefault.askTools).toEqual(['idea_ask_agent', 'idea_memory_write']);
    const byId = new Map(shown.agents.map((agent) => [agent.agentId, agent]));
    expect(byId.get('QA')?.askTools).toEqual(['idea_ticket_create']);
    expect(byId.get('QA')?.redundant).toBe(false);
    // Same lists as the default, in another order: the override changes nothing.
    expect(byId.get('Git')).toMatchObject({ askTools: ['idea_ask_agent', 'idea_memory_write'], redundant: true });
    // Same allowed tools as the default but nothing on ask: it does change something.
    expect(byId.get('Main')?.askTools).toBeUndefined();
    expect(byId.get('Main')?.redundant).toBe(false);
    expect(byId.get('DevFrontend')).toMatchObject({ mode: 'inherit', askTools: ['idea_ask_agent', 'idea_memory_write'] });

    const plain = await view(service, 'plain');
    expect(plain.projectDefault).toEqual({ mode: 'custom', allowedTools: ['idea_ticket_read'], unknownTools: [], conditions: {} });
    expect(plain.agents[0]).not.toHaveProperty('askTools');

    const effective = async (requester: string, project = 'demo') =>
      (await service.call('GET', `/projects/${project}/requesters/${encodeURIComponent(requester)}/effective`)).json<EffectivePolicy>();
    const qa = await effective('QA');
    expect(qa.askTools).toEqual(['idea_ticket_create']);
    expect(qa.deniedTools).not.toContain('idea_ticket_create');
    expect(new Set([...qa.allowedTools, ...(qa.askTools ?? []), ...qa.deniedTools]).size).toBe(25);
    expect((await effective('Other')).askTools).toEqual(['idea_ask_agent', 'idea_memory_write']);
    // Only agents ask.
    for (const requester of ['', 'mcp', 'ticket-assistant:demo:82']) {
      const answer = await effective(requester);
      expect(answer.askTools, requester).toBeUndefined();
      expect(answer.deniedTools, requester).toContain('idea_memory_write');
    }
    expect(await effective('QA', 'plain')).not.toHaveProperty('askTools');
  });

  it('denies every call of a file that puts a tool in both lists, and says which and where', async (t) => {
    const service = await buildApprovalsApp(t, {
      demo: {
        policy: askDoc(
          { allowedTools: ['idea_ticket_read'] },
          { QA: { allowedTools: ['idea_memory_write'], askTools: ['idea_memory_write'] } },
        ),
      },
    });
    const decision = await service.decide({ project: 'demo', requester: 'Main', tool: 'idea_ticket_read' });
    expect(decision).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(decision.message).toContain('"idea_memory_write" in both allowedTools and askTools at /agents/0/policy');
    const shown = await view(service);
    expect(shown.status).toBe('invalid');
    expect(shown.error).toMatchObject({ path: '/agents/0/policy/askTools' });
  });

  it('publishes askTools in the JSON Schema of the file', async () => {
    const published = JSON.parse(await readFile(PUBLISHED_SCHEMA_PATH, 'utf8')) as {
      properties: { projectDefault: { properties: Record<string, unknown> } };
    };
    expect(published.properties.projectDefault.properties).toHaveProperty('askTools');
  });
});

describe('askTools in the write bodies', () => {
  it('writes askTools in catalog order for the default and an agent, and drops an empty list from the file', async (t) => {
    const service = await buildApprovalsApp(t, { demo: {} });
    const put = await service.call('PUT', '/projects/demo/mcp-tool-permissions/default', {
      allowedTools: ['idea_ticket_read'],
      askTools: ['idea_memory_write', 'idea_ask_agent'],
    });
    expect(put.statusCode).toBe(200);
    expect(put.json<PermissionsView>().projectDefault.askTools).toEqual(['idea_ask_agent', 'idea_memory_write']);
    const agent = await service.call('PUT', '/projects/demo/mcp-tool-permissions/agents/QA', {
      allowedTools: ['idea_ticket_read', 'idea_memory_write'],
      askTools: [],
    });
    expect(agent.statusCode).toBe(200);
    const file = JSON.parse(await readFile(service.policyPath('demo'), 'utf8')) as Record<string, unknown>;
    expect(file).toEqual({
      version: 1,
      projectDefault: { allowedTools: ['idea_ticket_read'], askTools: ['idea_ask_agent', 'idea_memory_write'] },
      agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_ticket_read', 'idea_memory_write'] } }],
    });
    expect(await service.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' })).toMatchObject({ allow: true });
    expect(await service.decide({ project: 'demo', requester: 'Main', tool: 'idea_memory_write' })).toMatchObject({
      allow: false,
      reason: 'approval_required',
    });
  });

  it('refuses a name in both lists with 400 invalid_tools and details.conflicts, on every write; nothing is written', async (t) => {
    const original = `${JSON.stringify(askDoc({ allowedTools: ['idea_ticket_read'] }), null, 2)}\n`;
    const service = await buildApprovalsApp(t, { demo: { policy: original } });
    const lists = {
      allowedTools: ['idea_ticket_read', 'idea_memory_write'],
      askTools: ['idea_memory_write', 'idea_nope', 'idea_ask_agent', 'idea_ask_agent'],
    };
    for (const [url, body] of [
      ['/projects/demo/mcp-tool-permissions/default', lists],
      ['/projects/demo/mcp-tool-permissions/agents/QA', lists],
      ['/projects/demo/mcp-tool-permissions', { version: 1, agents: [{ agentId: 'QA', policy: lists }] }],
    ] as const) {
      const response = await service.call('PUT', url, body);
      expect(response.statusCode, url).toBe(400);
      const error = response.json<{ error: { code: string; details: Record<string, unknown> } }>().error;
      expect(error.code, url).toBe('invalid_tools');
      expect(error.details, url).toMatchObject({
        conflicts: ['idea_memory_write'],
        unknown: ['idea_nope'],
        duplicates: ['idea_ask_agent'],
      });
    }
    expect(await readFile(service.policyPath('demo'), 'utf8')).toBe(original);
  });
});

describe('lastValid beside an invalid file', () => {
  it('shows the last valid document the service saw, and never decides with it', async (t) => {
    const service = await buildApprovalsApp(t, {
      demo: { policy: askDoc({ allowedTools: [...READ_TOOLS] }, { QA: { allowedTools: ['idea_memory_write'] } }) },
    });
    const valid = await view(service);
    expect(valid.status).toBe('ok');
    expect(valid).not.toHaveProperty('lastValid');
    const before = JSON.parse(await readFile(service.policyPath('demo'), 'utf8')) as unknown;
    await writeFile(service.policyPath('demo'), '{ "version": 1, "agents": [');
    await waitFor(async () => (await view(service)).status === 'invalid', 'the broken file is read');
    const invalid = await view(service);
    expect(invalid.lastValid).toEqual({ revision: valid.revision, document: before });
    expect(await service.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' })).toMatchObject({
      allow: false,
      reason: 'policy_invalid',
    });
    // Repaired, then broken again: the newest valid document is the one shown.
    const repaired = await service.call('PUT', '/projects/demo/mcp-tool-permissions', { version: 1, agents: [] });
    expect(repaired.statusCode).toBe(200);
    await writeFile(service.policyPath('demo'), '{ "version": 2 }');
    await waitFor(async () => (await view(service)).status === 'invalid', 'the file is broken again');
    expect((await view(service)).lastValid).toEqual({
      revision: repaired.json<PermissionsView>().revision,
      document: { version: 1, agents: [] },
    });
  });

  it('shows lastValid null when the service never saw the file valid', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: '{ nope' } });
    expect((await view(service)).lastValid).toBeNull();
  });
});
