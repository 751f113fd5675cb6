/**
 * What the MCP guard relies on in `@modelcontextprotocol/sdk` beyond its public API, checked on
 * the installed SDK so that an upgrade that changes it fails here, loudly, instead of leaving a
 * server unguarded: the dispatcher reads `Protocol._requestHandlers` (a `Map`) at request time,
 * then `fallbackRequestHandler`, and calls `oninitialized` on `notifications/initialized`. The
 * installed version must also be one the client package's peer range names.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { guardMcpServer } from '../../client/mcp.js';
import { REPO_ROOT } from '../support/service-process.js';
import { LowLevelServer as Server } from '../support/guarded-mcp-server.js';

type Handler = (request: unknown, extra: unknown) => Promise<unknown>;
const handlersOf = (server: Server) => (server as unknown as { _requestHandlers: unknown })._requestHandlers;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function connect(server: Server) {
  const client = new Client({ name: 'test-host', version: '0.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

const denyAll = {
  timeoutMs: 1000,
  decide: () => Promise.reject(new Error('unused')),
  decideBatch: () => Promise.reject(new Error('unused')),
  effective: () => Promise.reject(new Error('unused')),
};

describe('the SDK internals the MCP guard relies on', () => {
  it('the installed SDK is a version the client package names as its peer', () => {
    const sdk = JSON.parse(readFileSync(`${REPO_ROOT}/node_modules/@modelcontextprotocol/sdk/package.json`, 'utf8')) as { version: string };
    const client = JSON.parse(readFileSync(`${REPO_ROOT}/client/package.json`, 'utf8')) as {
      peerDependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(client.devDependencies['@modelcontextprotocol/sdk']).toBe(sdk.version);
    const range = client.peerDependencies['@modelcontextprotocol/sdk'] ?? '';
    // The peer range is ">=x.y.z <x.(y+1).0": the minors the tests ran on.
    const [, low, high] = /^>=(\d+\.\d+\.\d+) <(\d+\.\d+\.\d+)$/.exec(range) ?? [];
    const order = (version: string) => version.split('.').reduce((sum, part) => sum * 1000 + Number(part), 0);
    expect(low, `peer range ${range}`).toBeDefined();
    expect(order(sdk.version)).toBeGreaterThanOrEqual(order(low ?? ''));
    expect(order(sdk.version)).toBeLessThan(order(high ?? ''));
  });

  it('McpServer and Server keep their request handlers in the Map `_requestHandlers`', () => {
    const mcp = new McpServer({ name: 't', version: '0' });
    mcp.registerTool('idea_ticket_read', { inputSchema: z.looseObject({}) }, () => ({ content: [] }));
    const handlers = handlersOf(mcp.server);
    expect(handlers).toBeInstanceOf(Map);
    expect(typeof (handlers as Map<string, unknown>).get('tools/call')).toBe('function');
    expect(typeof (handlers as Map<string, unknown>).get('tools/list')).toBe('function');
    const low = new Server({ name: 't', version: '0' }, { capabilities: { tools: {} } });
    low.setRequestHandler(CallToolRequestSchema, () => ({ content: [] }));
    expect(typeof (handlersOf(low) as Map<string, unknown>).get('tools/call')).toBe('function');
  });

  it('the dispatcher reads that Map at request time, then fallbackRequestHandler', async () => {
    const server = new Server({ name: 't', version: '0' }, { capabilities: { tools: {} } });
    const client = await connect(server);
    const handlers = handlersOf(server) as Map<string, Handler>;
    Map.prototype.set.call(handlers, 'tools/call', () => Promise.resolve({ content: [{ type: 'text', text: 'from the map' }] }));
    expect(await client.callTool({ name: 'x', arguments: {} })).toMatchObject({ content: [{ text: 'from the map' }] });
    handlers.delete('tools/call');
    server.fallbackRequestHandler = () => Promise.resolve({ content: [{ type: 'text', text: 'from the fallback' }] });
    expect(await client.callTool({ name: 'x', arguments: {} })).toMatchObject({ content: [{ text: 'from the fallback' }] });
  });

  it('the SDK calls oninitialized when the client has finished initializing', async () => {
    const server = new Server({ name: 't', version: '0' }, { capabilities: { tools: {} } });
    let initialized = 0;
    server.oninitialized = () => (initialized += 1);
    await connect(server);
    expect(initialized).toBe(1);
  });

  it('a server without that Map is refused with a TypeError, never left unguarded', () => {
    const server = new Server({ name: 't', version: '0' }, { capabilities: { tools: {} } });
    Object.defineProperty(server, '_requestHandlers', { value: {} });
    expect(() => guardMcpServer(server, { client: denyAll, project: 'demo', requester: 'QA' })).toThrow(
      /does not keep its request handlers in `_requestHandlers`; refusing to run unguarded/,
    );
  });
});
