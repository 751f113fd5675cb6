/**
 * docs/api.md#other-mcp-servers-tools: a declared tool is `<server>/<tool>` everywhere a tool is
 * named, through the real app (`app.inject`): the catalog and effective routes, writes, askTools and
 * approvals, once, grants, ephemeral policies, the recent decisions and the preview. An undeclared
 * name is refused wherever IdeA's unknown names are.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CatalogResponse, EffectivePolicy } from '../../schemas/index.js';
import { ADMIN_TOKEN, buildTestApp } from '../support/app.js';
import { waitFor } from '../support/wait.js';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SERVERS = {
  version: 1,
  servers: {
    fs: {
      label: 'Fichiers',
      tools: { read_text_file: { access: 'read', label: 'Lire un fichier' }, write_file: { access: 'write' } },
    },
  },
};

async function appWithServers(t: Parameters<typeof buildTestApp>[0], policy?: unknown) {
  return buildTestApp(t, { demo: { servers: SERVERS, agents: [{ id: 'QA' }], ...(policy === undefined ? {} : { policy }) } });
}

describe('qualified names through the app', () => {
  it('lists declared tools in the project catalog, a group per server, with an ETag that follows the file', async (t) => {
    const { app, projectDir } = await appWithServers(t);
    const response = await app.inject({ method: 'GET', url: '/projects/demo/catalog' });
    expect(response.statusCode).toBe(200);
    const body = response.json<CatalogResponse>();
    expect(body.tools.find((tool) => tool.name === 'fs/read_text_file')).toEqual({
      name: 'fs/read_text_file',
      access: 'read',
      group: 'server:fs',
      label: 'Lire un fichier',
      issueScoped: false,
      arguments: [],
      server: 'fs',
    });
    expect(body.tools.find((tool) => tool.name === 'fs/write_file')).toMatchObject({ access: 'write', label: 'write_file' });
    expect(body.tools.slice(0, 25).every((tool) => tool.server === undefined)).toBe(true);
    expect(body.groups.at(-1)).toEqual({ id: 'server:fs', label: 'Fichiers' });
    expect(body.readOnlyDefault).toContain('fs/read_text_file');
    expect(body.readOnlyDefault).not.toContain('fs/write_file');
    expect(response.headers.etag).toBe(`"${body.version ?? ''}"`);
    // IdeA's catalog stays IdeA's.
    const idea = (await app.inject({ method: 'GET', url: '/catalog' })).json<CatalogResponse>();
    expect(idea.tools.some((tool) => tool.name.includes('/'))).toBe(false);

    await writeFile(path.join(projectDir('demo'), '.ideai', 'mcp-servers.json'), JSON.stringify({ version: 1, servers: {} }));
    await waitFor(
      async () => (await app.inject({ method: 'GET', url: '/projects/demo/catalog' })).headers.etag !== response.headers.etag,
      'new ETag',
    );
    expect((await app.inject({ method: 'GET', url: '/projects/unknown/catalog' })).statusCode).toBe(404);
  });

  it('lists declared tools in the effective policy like IdeA’s', async (t) => {
    const { app } = await appWithServers(t);
    const effective = (await app.inject({ method: 'GET', url: '/projects/demo/requesters/QA/effective' })).json<EffectivePolicy>();
    expect(effective.allowedTools).toContain('fs/read_text_file');
    expect(effective.allowedTools).toContain('fs/resources/read');
    expect(effective.deniedTools).toContain('fs/write_file');
    expect(effective.deniedTools.at(-1)).toBe('fs/write_file');
  });

  it('writes a declared tool into an allowlist, and refuses an undeclared one with invalid_tools', async (t) => {
    const { app } = await appWithServers(t);
    const refused = await app.inject({
      method: 'PUT',
      url: '/projects/demo/mcp-tool-permissions/agents/QA',
      headers: admin,
      payload: { allowedTools: ['fs/delete_file'] },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: { code: 'invalid_tools', details: { unknown: ['fs/delete_file'] } } });
    const written = await app.inject({
      method: 'PUT',
      url: '/projects/demo/mcp-tool-permissions/agents/QA',
      headers: admin,
      payload: { allowedTools: ['fs/write_file'] },
    });
    expect(written.statusCode).toBe(200);
    const decided = await app.inject({
      method: 'POST',
      url: '/decide',
      payload: { project: 'demo', requester: 'QA', tool: 'fs/write_file' },
    });
    expect(decided.json()).toMatchObject({ allow: true, source: 'agent-override', tool: { name: 'fs/write_file', access: 'write' } });
    const recent = await app.inject({ method: 'GET', url: '/projects/demo/decisions?limit=5' });
    expect(recent.json<{ decisions: { tool: string }[] }>().decisions[0]?.tool).toBe('fs/write_file');
  });

  it('asks for a declared tool on ask, and a once answer allows the next call only', async (t) => {
    const { app } = await appWithServers(t, { version: 1, projectDefault: { allowedTools: [], askTools: ['fs/write_file'] } });
    const query = { project: 'demo', requester: 'QA', tool: 'fs/write_file' };
    const asked = (await app.inject({ method: 'POST', url: '/decide', payload: query })).json<{
      reason: string;
      approval: { id: string };
    }>();
    expect(asked.reason).toBe('approval_required');
    const answer = await app.inject({
      method: 'POST',
      url: `/projects/demo/approvals/${asked.approval.id}`,
      headers: admin,
      payload: { answer: 'once' },
    });
    expect(answer.statusCode).toBe(200);
    expect((await app.inject({ method: 'POST', url: '/decide', payload: query })).json()).toMatchObject({
      allow: true,
      source: 'approval',
    });
    expect((await app.inject({ method: 'POST', url: '/decide', payload: query })).json()).toMatchObject({ reason: 'approval_required' });
  });

  it('grants a declared tool for a while, and refuses a grant of an undeclared one', async (t) => {
    const { app } = await appWithServers(t);
    const refused = await app.inject({
      method: 'POST',
      url: '/projects/demo/grants',
      headers: admin,
      payload: { requester: 'QA', tools: ['fs/nope'], ttlSeconds: 60 },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ error: { code: 'invalid_tools', details: { unknown: ['fs/nope'] } } });
    const granted = await app.inject({
      method: 'POST',
      url: '/projects/demo/grants',
      headers: admin,
      payload: { requester: 'QA', tools: ['fs/write_file'], ttlSeconds: 60 },
    });
    expect(granted.statusCode).toBe(200);
    const decided = await app.inject({
      method: 'POST',
      url: '/decide',
      payload: { project: 'demo', requester: 'QA', tool: 'fs/write_file' },
    });
    expect(decided.json()).toMatchObject({ allow: true, source: 'grant' });
  });

  it('registers an ephemeral policy naming a declared tool', async (t) => {
    const { app } = await appWithServers(t);
    const requester = encodeURIComponent('ticket-assistant:demo:82');
    const put = await app.inject({
      method: 'PUT',
      url: `/projects/demo/ephemeral-policies/${requester}`,
      headers: admin,
      payload: { allowedTools: ['fs/write_file'] },
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ allowedTools: ['fs/write_file'] });
    const decided = await app.inject({
      method: 'POST',
      url: '/decide',
      payload: { project: 'demo', requester: 'ticket-assistant:demo:82', tool: 'fs/write_file' },
    });
    expect(decided.json()).toMatchObject({ allow: true, source: 'ephemeral' });
    const bad = await app.inject({
      method: 'PUT',
      url: `/projects/demo/ephemeral-policies/${requester}`,
      headers: admin,
      payload: { allowedTools: ['fs/nope'] },
    });
    expect(bad.statusCode).toBe(400);
  });

  it('previews a change granting a declared tool, replaying the recent calls', async (t) => {
    const { app } = await appWithServers(t);
    await app.inject({ method: 'POST', url: '/decide', payload: { project: 'demo', requester: 'QA', tool: 'fs/write_file' } });
    const preview = await app.inject({
      method: 'POST',
      url: '/projects/demo/mcp-tool-permissions/preview',
      headers: admin,
      payload: { document: { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['fs/write_file', 'fs/nope'] } }] } },
    });
    expect(preview.statusCode).toBe(200);
    const body = preview.json<{ agents: { agentId: string; added: string[] }[]; replay: { counts: { denyToAllow: number } } }>();
    expect(body.agents.find((agent) => agent.agentId === 'QA')?.added).toContain('fs/write_file');
    expect(body.agents.find((agent) => agent.agentId === 'QA')?.added).not.toContain('fs/nope');
    expect(body.replay.counts.denyToAllow).toBe(1);
  });
});
