/**
 * `idea-mcp-proxy --server <id>` (docs/client.md#any-mcp-server-idea-mcp-proxy, docs/api.md#other-mcp-servers-tools):
 * real service, real SDK client over stdio, the Python fixture server declared as `fs` in the
 * project's `.ideai/mcp-servers.json`. Its tools are decided and listed as `fs/<tool>`, its
 * `resources/read` and `prompts/get` are decided too, and the tools it lists undeclared are
 * reported to the service (never allowed), with the argument names of their inputSchema.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DECISION_META_KEY } from '../../client/mcp.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { connectThroughProxy } from '../support/proxy-process.js';

const suite = suiteScope();
let pdp: RealPdp;
const SERVERS = {
  version: 1,
  servers: { fs: { label: 'Fixture', tools: { idea_ticket_read: { access: 'read' }, idea_memory_write: { access: 'write' } } } },
};

beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
  await writeFile(path.join(pdp.root, 'demo', '.ideai', 'mcp-servers.json'), JSON.stringify(SERVERS));
  await waitFor(async () => (await pdp.admin.projectCatalog('demo')).tools.some((tool) => tool.server === 'fs'), 'catalog read');
});

const connect = (options: string[], env: Record<string, string> = {}) =>
  connectThroughProxy(['--pdp', pdp.url, '--project', 'demo', '--agent', 'QA', ...options], { PDP_DECIDE_TOKEN: pdp.decideToken, ...env });

describe('idea-mcp-proxy --server', () => {
  it(
    'lists and decides the server’s tools as fs/<tool>: a declared read tool runs, a declared write tool and an undeclared one are refused',
    { timeout: 120_000 },
    async () => {
      const host = await connect(['--server', 'fs']);
      suite.onTestFinished(host.close);
      const listed = await host.client.listTools();
      // The tools keep the server's own names; the filter judged them as fs/<tool>.
      expect(listed.tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
      const read = await host.client.callTool({ name: 'idea_ticket_read', arguments: { issueRef: '#1' } });
      expect(read.isError).not.toBe(true);
      const write = await host.client.callTool({ name: 'idea_memory_write', arguments: {} });
      expect(write.isError).toBe(true);
      expect((write.content as { text: string }[])[0]?.text).toContain('fs/idea_memory_write');
      const undeclared = await host.client.callTool({ name: 'idea_ticket_update_carnet', arguments: {} });
      expect((undeclared._meta as Record<string, { reason: string }>)[DECISION_META_KEY]?.reason).toBe('unknown_tool');
      const calls = (await host.client.request({ method: 'fixture/calls' }, (await import('zod')).z.any())) as {
        calls: { name: string }[];
      };
      expect(calls.calls.map((call) => call.name)).toEqual(['idea_ticket_read']);

      // A declared write tool granted by an override runs.
      await pdp.admin.putAgent('demo', 'QA', ['fs/idea_memory_write']);
      const granted = await host.client.callTool({ name: 'idea_memory_write', arguments: {} });
      expect(granted.isError).not.toBe(true);
    },
  );

  it('reports the tools the server lists undeclared, and never allows them', { timeout: 120_000 }, async () => {
    const host = await connect([], { IDEA_MCP_SERVER: 'fs' });
    suite.onTestFinished(host.close);
    await host.client.listTools();
    await waitFor(async () => {
      const servers = await pdp.admin.listServers('demo');
      return servers.find((server) => server.id === 'fs')?.discovered.some((tool) => tool.name === 'idea_ticket_update_carnet') === true;
    }, 'undeclared tool reported');
    const servers = await pdp.admin.listServers('demo');
    const fs = servers.find((server) => server.id === 'fs');
    expect(fs?.discovered.map((tool) => tool.name)).toEqual(['idea_ticket_update_carnet']);
    expect(fs?.discovered[0]?.description).toBe('idea_ticket_update_carnet (fixture)');
    // The argument names of a declared tool's inputSchema (those a condition can name) are known to the catalog.
    const catalog = await pdp.admin.projectCatalog('demo');
    expect(catalog.tools.find((tool) => tool.name === 'fs/idea_ticket_read')?.arguments).toEqual(['issueRef']);
    expect(catalog.tools.find((tool) => tool.name === 'fs/idea_memory_write')?.arguments).toEqual([]);
    const decided = await pdp.decider.decide({ project: 'demo', requester: 'QA', tool: 'fs/idea_ticket_update_carnet' });
    expect(decided).toMatchObject({ allow: false, reason: 'unknown_tool' });
  });

  it('decides resources/read and prompts/get as fs/resources/read and fs/prompts/get', { timeout: 120_000 }, async () => {
    const { z } = await import('zod');
    // An override that leaves the implicit read methods out: both are refused by the proxy itself.
    await pdp.admin.putAgent('demo', 'Reader', ['fs/idea_ticket_read']);
    const refusedHost = await connectThroughProxy(['--pdp', pdp.url, '--project', 'demo', '--agent', 'Reader', '--server', 'fs'], {
      PDP_DECIDE_TOKEN: pdp.decideToken,
    });
    suite.onTestFinished(refusedHost.close);
    for (const method of ['resources/read', 'prompts/get']) {
      const refused = refusedHost.client.request({ method, params: { uri: 'file:///etc/passwd', name: 'p' } }, z.any());
      await expect(refused).rejects.toThrow(`fs/${method}`);
    }
    // Allowed, they reach the server, which does not serve them.
    await pdp.admin.putAgent('demo', 'Browser', ['fs/resources/read', 'fs/prompts/get']);
    const host = await connectThroughProxy(['--pdp', pdp.url, '--project', 'demo', '--agent', 'Browser', '--server', 'fs'], {
      PDP_DECIDE_TOKEN: pdp.decideToken,
    });
    suite.onTestFinished(host.close);
    await expect(host.client.request({ method: 'resources/read', params: { uri: 'file:///x' } }, z.any())).rejects.toThrow(
      /Method not found/,
    );
  });

  it('refuses a server id that cannot be declared', { timeout: 60_000 }, async () => {
    await expect(connect(['--server', 'idea'])).rejects.toThrow();
  });
});
