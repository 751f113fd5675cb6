/** The MCP guard's mechanics: no registration path and no second install can get around it. */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { PdpClient } from '../../client/index.js';
import { guardMcpServer, type McpRequestExtra } from '../../client/mcp.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { startPolicyTablePdp } from './policy-table-pdp.js';
import { connectGuardedIdeaServer, LowLevelServer as Server } from '../support/guarded-mcp-server.js';
import { sendJson, startFakeHttp, type FakeServer } from './fake-pdp.js';

const table = { QA: [...READ_ONLY_DEFAULT], Main: [...READ_ONLY_DEFAULT, 'idea_memory_write'] };
let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function setup(options: { effectiveFails?: boolean } = {}) {
  const pdp = await startPolicyTablePdp(table, options);
  cleanups.push(pdp.close);
  const client = new PdpClient({ baseUrl: pdp.url, timeoutMs: 1000 });
  cleanups.push(() => client.close());
  return { pdp, client };
}

const decideCount = (pdp: FakeServer) => pdp.requests.filter((request) => request.url === '/decide').length;

async function connect(server: McpServer | Server) {
  const client = new Client({ name: 'test-host', version: '0.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args });
    return { isError: result.isError === true, text: (result.content as { text: string }[])[0]?.text ?? '' };
  };
  return { client, call };
}

describe('guardMcpServer on McpServer', () => {
  it('guards tools registered after the guard (lazy tools/call registration)', async () => {
    const { pdp, client } = await setup();
    const server = new McpServer({ name: 't', version: '0' });
    guardMcpServer(server, { client, project: 'demo', requester: 'QA' });
    const ran: string[] = [];
    for (const name of ['idea_ticket_read', 'idea_memory_write']) {
      server.registerTool(name, { inputSchema: z.looseObject({}) }, () => {
        ran.push(name);
        return { content: [{ type: 'text', text: `${name} ran` }] };
      });
    }
    const { call } = await connect(server);
    // And a tool registered once the session is live.
    server.registerTool('idea_ticket_create', { inputSchema: z.looseObject({}) }, () => {
      ran.push('idea_ticket_create');
      return { content: [{ type: 'text', text: 'created' }] };
    });

    expect(await call('idea_ticket_read')).toEqual({ isError: false, text: 'idea_ticket_read ran' });
    const denied = await call('idea_memory_write', { text: 'x' });
    expect(denied).toEqual({
      isError: true,
      text: 'Tool idea_memory_write is denied for agent QA in project demo (policy: agent-override).',
    });
    expect((await call('idea_ticket_create')).isError).toBe(true);
    expect(ran).toEqual(['idea_ticket_read']);
    expect(decideCount(pdp)).toBe(3);
  });

  it('a second guard replaces the options and never decides twice', async () => {
    const { pdp, client } = await setup();
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'QA' });
    cleanups.push(mcp.close);
    expect((await mcp.call('idea_memory_write')).isError).toBe(true);
    guardMcpServer(mcp.server, { client, project: 'demo', requester: 'Main' });
    guardMcpServer(mcp.server.server, { client, project: 'demo', requester: 'Main' });
    expect(await mcp.call('idea_memory_write', { text: 'hello' })).toEqual({ isError: false, text: 'idea_memory_write done' });
    expect(mcp.recorder.runs.map((run) => run.tool)).toEqual(['idea_memory_write']);
    expect(decideCount(pdp)).toBe(2);
  });

  it('a tools/call handler re-registered behind its back is still guarded', async () => {
    const { client } = await setup();
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'QA' });
    cleanups.push(mcp.close);
    let rogueRan = 0;
    const rogue = () => {
      rogueRan += 1;
      return { content: [{ type: 'text' as const, text: 'rogue ran' }] };
    };
    mcp.server.server.setRequestHandler(CallToolRequestSchema, rogue);
    expect((await mcp.call('idea_memory_write')).isError).toBe(true);
    // Even writing straight into the SDK's private handler map goes through the guard.
    const handlers = (mcp.server.server as unknown as { _requestHandlers: Map<string, unknown> })._requestHandlers;
    handlers.set('tools/call', () => Promise.resolve(rogue()));
    expect((await mcp.call('idea_memory_write')).isError).toBe(true);
    expect(await mcp.call('idea_ticket_read')).toEqual({ isError: false, text: 'rogue ran' });
    expect(rogueRan).toBe(1);
  });

  it('takes the requester from the host function of `extra`, never from the arguments', async () => {
    const { pdp, client } = await setup();
    const seen: McpRequestExtra[] = [];
    const mcp = await connectGuardedIdeaServer({
      client,
      project: 'demo',
      requester: (extra) => {
        seen.push(extra);
        return 'QA';
      },
    });
    cleanups.push(mcp.close);
    expect((await mcp.call('idea_memory_write', { requester: 'Main', agentId: 'Main' })).isError).toBe(true);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toHaveProperty('requestId');
    const asked = pdp.requests.find((request) => request.url === '/decide')?.body;
    expect(asked).toEqual({
      project: 'demo',
      requester: 'QA',
      tool: 'idea_memory_write',
      arguments: { requester: 'Main', agentId: 'Main' },
    });
  });

  it("sends the call's whole arguments with the query: the policy's conditions may read any of them", async () => {
    const { pdp, client } = await setup();
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'QA' });
    cleanups.push(mcp.close);
    await mcp.call('idea_ticket_read', { issueRef: '#82', text: 'x', nested: { deep: [1, { a: 'b' }] } });
    expect(pdp.requests.at(-1)?.body).toEqual({
      project: 'demo',
      requester: 'QA',
      tool: 'idea_ticket_read',
      arguments: { issueRef: '#82', text: 'x', nested: { deep: [1, { a: 'b' }] } },
    });
    expect(mcp.recorder.runs.map((run) => run.args.issueRef)).toEqual(['#82']);
  });

  it('a requester function that throws denies without asking and without running', async () => {
    const { pdp, client } = await setup();
    const mcp = await connectGuardedIdeaServer({
      client,
      project: 'demo',
      requester: () => {
        throw new Error('no session');
      },
    });
    cleanups.push(mcp.close);
    const result = await mcp.call('idea_ticket_read');
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      'Tool idea_ticket_read (unidentified requester, project demo) denied: the requester of the session could not be determined (no session)',
    );
    expect(mcp.recorder.runs).toEqual([]);
    expect(decideCount(pdp)).toBe(0);
  });

  it('filters tools/list with the effective policy, and lists nothing when it is unavailable', async () => {
    const { client } = await setup();
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'Main', filterToolsList: true });
    cleanups.push(mcp.close);
    const listed = (await mcp.client.listTools()).tools.map((tool) => tool.name);
    expect(listed).toEqual(table.Main);

    const failing = await setup({ effectiveFails: true });
    const blind = await connectGuardedIdeaServer({ client: failing.client, project: 'demo', requester: 'Main', filterToolsList: true });
    cleanups.push(blind.close);
    expect((await blind.client.listTools()).tools).toEqual([]);
    // Hiding is not deciding: calls are still decided one by one.
    expect((await blind.call('idea_memory_write')).isError).toBe(false);
  });

  it('lists nothing when the effective policy answered is about another requester', async () => {
    // The service answers Main's wider list whoever is asked about: never trusted for QA.
    const pdp = await startFakeHttp((_request, response) => {
      sendJson(response, 200, {
        project: 'demo',
        requester: { id: 'Main', kind: 'agent' },
        source: 'agent-override',
        allowedTools: table.Main,
        deniedTools: [],
        revision: 'table',
      });
    });
    cleanups.push(pdp.close);
    const client = new PdpClient({ baseUrl: pdp.url, timeoutMs: 1000 });
    cleanups.push(() => client.close());
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'QA', filterToolsList: true });
    cleanups.push(mcp.close);
    expect((await mcp.client.listTools()).tools).toEqual([]);
  });

  it('lists every tool when filtering is off', async () => {
    const { client } = await setup();
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'QA' });
    cleanups.push(mcp.close);
    expect((await mcp.client.listTools()).tools).toHaveLength(25);
  });
});

describe('guardMcpServer on the low-level Server', () => {
  function lowLevelServer(ran: string[]) {
    const server = new Server({ name: 't', version: '0' }, { capabilities: { tools: {} } });
    const register = () => {
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: ['idea_ticket_read', 'idea_memory_write'].map((name) => ({ name, inputSchema: { type: 'object' as const } })),
      }));
      server.setRequestHandler(CallToolRequestSchema, (request) => {
        ran.push(request.params.name);
        return { content: [{ type: 'text', text: `${request.params.name} ran` }] };
      });
    };
    return { server, register };
  }

  it.each([
    ['registered before the guard', true],
    ['registered after the guard', false],
  ])('guards handlers %s', async (_name, registerFirst) => {
    const { client } = await setup();
    const ran: string[] = [];
    const { server, register } = lowLevelServer(ran);
    if (registerFirst) register();
    guardMcpServer(server, { client, project: 'demo', requester: 'QA', filterToolsList: true });
    if (!registerFirst) register();
    const { client: mcpClient, call } = await connect(server);
    expect((await mcpClient.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    expect(await call('idea_ticket_read')).toEqual({ isError: false, text: 'idea_ticket_read ran' });
    expect((await call('idea_memory_write')).isError).toBe(true);
    expect(ran).toEqual(['idea_ticket_read']);
  });

  it.each([
    ['before the guard', true],
    ['after the guard', false],
  ])('guards tools/call served by a fallbackRequestHandler set %s', async (_name, setFirst) => {
    const { client } = await setup();
    const ran: string[] = [];
    const server = new Server({ name: 't', version: '0' }, { capabilities: { tools: {} } });
    const fallback: NonNullable<Server['fallbackRequestHandler']> = (request) => {
      if (request.method !== 'tools/call') return Promise.reject(new Error(`unexpected ${request.method}`));
      ran.push(String(request.params?.name));
      return Promise.resolve({ content: [{ type: 'text' as const, text: 'fallback ran' }] });
    };
    if (setFirst) server.fallbackRequestHandler = fallback;
    guardMcpServer(server, { client, project: 'demo', requester: 'QA' });
    if (!setFirst) server.fallbackRequestHandler = fallback;
    const { call } = await connect(server);
    expect((await call('idea_memory_write')).isError).toBe(true);
    expect(await call('idea_ticket_list')).toEqual({ isError: false, text: 'fallback ran' });
    expect(ran).toEqual(['idea_ticket_list']);
  });

  it('refuses to guard something that is not an MCP server', async () => {
    const { client } = await setup();
    expect(() => guardMcpServer({}, { client, project: 'demo', requester: 'QA' })).toThrow(TypeError);
  });
});
