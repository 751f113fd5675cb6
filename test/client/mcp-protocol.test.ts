/**
 * The guard is transparent to the MCP protocol, checked with the real SDK `Client`:
 * `list_changed` only with the declared capability and only after initialization, a malformed
 * `tools/call` is a JSON-RPC `-32602` that is never decided on, and a low-level server keeps its
 * own `-32602` for a tool name it does not serve.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  ErrorCode,
  LATEST_PROTOCOL_VERSION,
  ListToolsRequestSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { PdpClient } from '../../client/index.js';
import { guardMcpServer, type McpGuardOptions } from '../../client/mcp.js';
import type { ClientDecision } from '../../client/decision.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { startPolicyTablePdp } from './policy-table-pdp.js';
import { connectGuardedIdeaServer, LowLevelServer as Server } from '../support/guarded-mcp-server.js';
import { startRealPdp } from '../support/real-pdp.js';
import { waitFor } from '../support/wait.js';
import type { FakeServer } from './fake-pdp.js';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

const table = { QA: [...READ_ONLY_DEFAULT] };
const decideCount = (pdp: FakeServer) => pdp.requests.filter((request) => request.url === '/decide').length;

async function tablePdp() {
  const pdp = await startPolicyTablePdp(table);
  cleanups.push(pdp.close);
  const client = new PdpClient({ baseUrl: pdp.url, timeoutMs: 1000 });
  cleanups.push(() => client.close());
  return { pdp, client };
}

/** A low-level server declaring `capabilities: { tools: {} }`, serving two tools and answering any other name with `-32602`. */
function lowLevelServer(ran: string[]) {
  const server = new Server({ name: 'low-level', version: '0' }, { capabilities: { tools: {} } });
  const served = ['idea_ticket_read', 'idea_memory_write'];
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: served.map((name) => ({ name, inputSchema: { type: 'object' as const } })),
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    if (!served.includes(request.params.name)) throw new McpError(ErrorCode.InvalidParams, `No such tool here: ${request.params.name}`);
    ran.push(request.params.name);
    return { content: [{ type: 'text', text: `${request.params.name} ran` }] };
  });
  return server;
}

async function connectClient(server: Server) {
  const client = new Client({ name: 'test-host', version: '0.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  const notified = { count: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    notified.count += 1;
  });
  return { client, notified };
}

describe('notifications/tools/list_changed', () => {
  it('a guard installed before connect declares tools.listChanged, and sends the notification', async () => {
    const { client: pdp } = await tablePdp();
    const server = lowLevelServer([]);
    const guard = guardMcpServer(server, { client: pdp, project: 'demo', requester: 'QA', filterToolsList: true });
    const { client, notified } = await connectClient(server);
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    await guard.sendToolListChanged();
    await waitFor(() => notified.count === 1, 'list_changed');
  });

  it('a guard installed on a server connected without the capability never sends it', async () => {
    const { client: pdp } = await tablePdp();
    const server = lowLevelServer([]);
    const { client, notified } = await connectClient(server);
    const guard = guardMcpServer(server, { client: pdp, project: 'demo', requester: 'QA', filterToolsList: true });
    expect(client.getServerCapabilities()?.tools).toEqual({});
    await guard.sendToolListChanged();
    await client.ping(); // a notification sent before the ping's answer would have arrived first
    expect(notified.count).toBe(0);
  });

  it('a policy change reaches a server guarded before connect, not one connected without the capability', async () => {
    const pdp = await startRealPdp();
    cleanups.push(pdp.close);
    const looked = { count: 0 };
    const counting: McpGuardOptions['client'] = Object.assign(Object.create(pdp.decider) as PdpClient, {
      effective: async (...args: Parameters<PdpClient['effective']>) => {
        const effective = await pdp.decider.effective(...args);
        looked.count += 1;
        return effective;
      },
    });
    const declared = lowLevelServer([]);
    guardMcpServer(declared, { client: pdp.decider, project: 'demo', requester: 'QA', filterToolsList: true });
    const withCapability = await connectClient(declared);
    const undeclared = lowLevelServer([]);
    const withoutCapability = await connectClient(undeclared);
    guardMcpServer(undeclared, { client: counting, project: 'demo', requester: 'QA', filterToolsList: true });
    expect((await withCapability.client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    expect((await withoutCapability.client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    const listedOnce = looked.count;

    await pdp.admin.putAgent('demo', 'QA', [...READ_ONLY_DEFAULT, 'idea_memory_write']);
    await waitFor(() => withCapability.notified.count === 1, 'list_changed on the server that declared it');
    await waitFor(() => looked.count > listedOnce, 'the other guard saw the change too');
    await withoutCapability.client.ping();
    expect(withoutCapability.notified.count).toBe(0);
    expect((await withoutCapability.client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read', 'idea_memory_write']);
  });

  it('nothing is sent before the client has finished initializing', async () => {
    const { client: pdp } = await tablePdp();
    const server = lowLevelServer([]);
    const guard = guardMcpServer(server, { client: pdp, project: 'demo', requester: 'QA', filterToolsList: true });
    let hostCallbacks = 0;
    server.oninitialized = () => (hostCallbacks += 1);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const received: JSONRPCMessage[] = [];
    clientSide.onmessage = (message) => received.push(message);
    await server.connect(serverSide);
    await clientSide.start();
    cleanups.push(() => server.close());

    await guard.sendToolListChanged(); // connected, not initialized
    await clientSide.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    await waitFor(() => received.length === 1, 'the initialize answer');
    await guard.sendToolListChanged(); // initialize answered, `notifications/initialized` not sent yet
    await clientSide.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    await waitFor(() => received.length === 2, 'the ping answer');
    expect(received.map((message) => ('method' in message ? message.method : 'answer'))).toEqual(['answer', 'answer']);

    await clientSide.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await waitFor(() => hostCallbacks === 1, "the host's own oninitialized still runs");
    await guard.sendToolListChanged();
    await waitFor(() => received.length === 3, 'list_changed once initialized');
    expect(received[2]).toEqual({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  });
});

describe('tools/call the protocol refuses before any decision', () => {
  it.each([
    ['a string', 'text'],
    ['an array', ['a', 'b']],
    ['null', null],
  ])('arguments that are %s: JSON-RPC -32602, no decision, no run', async (_what, args) => {
    const { pdp, client: pdpClient } = await tablePdp();
    const decisions: ClientDecision[] = [];
    const mcp = await connectGuardedIdeaServer({
      client: pdpClient,
      project: 'demo',
      requester: 'QA',
      onDecision: (d) => decisions.push(d),
    });
    cleanups.push(mcp.close);
    const call = mcp.client.request(
      { method: 'tools/call', params: { name: 'idea_ticket_read', arguments: args as never } },
      CallToolResultSchema,
    );
    await expect(call).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    expect(decideCount(pdp)).toBe(0);
    expect(decisions).toEqual([]);
    expect(mcp.recorder.runs).toEqual([]);
  });

  it('a low-level server keeps its own -32602 for a name it does not serve; a served name it may not call is a refusal', async () => {
    const { pdp, client: pdpClient } = await tablePdp();
    const ran: string[] = [];
    const server = lowLevelServer(ran);
    guardMcpServer(server, { client: pdpClient, project: 'demo', requester: 'QA' });
    const { client } = await connectClient(server);

    const unserved = client.callTool({ name: 'test_simple_text', arguments: {} });
    await expect(unserved).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
    const refused = await client.callTool({ name: 'idea_memory_write', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(await client.callTool({ name: 'idea_ticket_read', arguments: {} })).toMatchObject({
      content: [{ text: 'idea_ticket_read ran' }],
    });
    expect(ran).toEqual(['idea_ticket_read']);
    expect(decideCount(pdp)).toBe(3); // each call is still decided: the check never replaces the decision
  });

  it('an allowed name the server does not serve gets the server’s own error, word for word', async () => {
    const allowAll: McpGuardOptions['client'] = {
      timeoutMs: 1000,
      decide: (query) => Promise.resolve({ ...allowed(query) }),
      decideBatch: () => Promise.reject(new Error('unused')),
      effective: () => Promise.reject(new Error('unused')),
    };
    const server = lowLevelServer([]);
    guardMcpServer(server, { client: allowAll, project: 'demo', requester: 'QA' });
    const { client } = await connectClient(server);
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow('No such tool here: nope');
  });
});

function allowed(query: { project: string; requester: string; tool: string }): ClientDecision {
  return {
    allow: true,
    reason: 'allowed',
    message: `Tool ${query.tool} is allowed.`,
    source: 'project-default',
    requester: { id: query.requester, kind: 'agent' },
    tool: { name: query.tool, access: 'read' },
    project: query.project,
    revision: 'r',
    decisionId: 'd',
  };
}
