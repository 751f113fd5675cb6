/**
 * The permissions writes refuse every agent id the domain refuses (reserved, invisible, lookalike),
 * on the agent routes and in a whole document, with 400 invalid_agent_id and nothing written.
 */
import { readFile } from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders as auth, buildTestApp, suiteScope, type TestApp } from '../support/app.js';

const suite = suiteScope();
let server: TestApp;
beforeAll(async () => {
  server = await buildTestApp(suite, { demo: {} }, { rescanMs: 0 });
});

const policyText = (): Promise<string | undefined> => readFile(server.policyPath('demo'), 'utf8').catch(() => undefined);

describe('agent ids of the permission writes', () => {
  const refused = ['mcp', 'QA\u200b', '\uff31\uff21', 'QA\u00a0', 'Q\u202eA', 'QA '];

  it('refuses reserved, invisible and lookalike ids on PUT and DELETE .../agents/:agentId', async () => {
    for (const agentId of refused) {
      const url = `/projects/demo/mcp-tool-permissions/agents/${encodeURIComponent(agentId)}`;
      const put = await server.app.inject({ method: 'PUT', url, headers: auth, payload: { allowedTools: ['idea_memory_write'] } });
      expect(put.statusCode, JSON.stringify(agentId)).toBe(400);
      expect(put.json(), JSON.stringify(agentId)).toMatchObject({ error: { code: 'invalid_agent_id' } });
      const removal = await server.app.inject({ method: 'DELETE', url, headers: auth });
      expect(removal.statusCode, JSON.stringify(agentId)).toBe(400);
      expect(removal.json()).toMatchObject({ error: { code: 'invalid_agent_id' } });
    }
    expect(await policyText()).toBeUndefined();
  });

  it('refuses them in a whole document too, and writes nothing', async () => {
    for (const agentId of refused) {
      const document = {
        version: 1,
        agents: [
          { agentId: 'QA', policy: { allowedTools: [] } },
          { agentId, policy: { allowedTools: ['idea_memory_write'] } },
        ],
      };
      const response = await server.app.inject({
        method: 'PUT',
        url: '/projects/demo/mcp-tool-permissions',
        headers: auth,
        payload: document,
      });
      expect(response.statusCode, JSON.stringify(agentId)).toBe(400);
      expect(response.json(), JSON.stringify(agentId)).toMatchObject({ error: { code: 'invalid_agent_id' } });
    }
    expect(await policyText()).toBeUndefined();
    const accepted = await server.app.inject({
      method: 'PUT',
      url: '/projects/demo/mcp-tool-permissions/agents/Dev%20Ops',
      headers: auth,
      payload: { allowedTools: ['idea_memory_write'] },
    });
    expect(accepted.statusCode).toBe(200);
  });
});
