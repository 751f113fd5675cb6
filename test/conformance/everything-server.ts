/**
 * A reference MCP server with everything the official conformance suite checks (the tools of
 * `everything-tools.ts`, resources, prompts, logging, completion), served over Streamable HTTP
 * on 127.0.0.1 with one `McpServer` per session. `guard` is applied to each session's server
 * before it connects, as an integrator would: that is what the suite then checks.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { registerEverythingTools, TEST_IMAGE_BASE64 } from './everything-tools.js';

export interface EverythingServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  /** The protocol versions the clients asked for in `initialize`. */
  protocolVersions: Set<string>;
  close(): Promise<void>;
}

/** What the guard returns for a session: closed with the session. */
export type SessionGuard = (server: McpServer) => { close(): void } | undefined;

function registerResourcesAndPrompts(server: McpServer): void {
  const textResource = (uri: string, body: string) => () => ({ contents: [{ uri, mimeType: 'text/plain', text: body }] });
  server.registerResource(
    'static-text',
    'test://static-text',
    { title: 'Static Text Resource', description: 'A static text resource for testing', mimeType: 'text/plain' },
    textResource('test://static-text', 'This is the content of the static text resource.'),
  );
  server.registerResource(
    'static-binary',
    'test://static-binary',
    { title: 'Static Binary Resource', description: 'A static binary resource (image) for testing', mimeType: 'image/png' },
    () => ({ contents: [{ uri: 'test://static-binary', mimeType: 'image/png', blob: TEST_IMAGE_BASE64 }] }),
  );
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json' },
    (uri, variables) => ({
      contents: [
        {
          uri: uri.toString(),
          mimeType: 'application/json',
          text: JSON.stringify({ id: variables.id, templateTest: true, data: `Data for ID: ${String(variables.id)}` }),
        },
      ],
    }),
  );
  server.registerResource(
    'watched-resource',
    'test://watched-resource',
    { title: 'Watched Resource', description: 'A resource that auto-updates every 3 seconds', mimeType: 'text/plain' },
    textResource('test://watched-resource', 'Watched resource content'),
  );
  const log = (data: string) =>
    server.server.sendLoggingMessage({ level: 'info', logger: 'conformance-test-server', data }).catch(() => undefined);
  server.server.setRequestHandler(
    z.object({ method: z.literal('resources/subscribe'), params: z.object({ uri: z.string() }) }),
    (request) => {
      void log(`Subscribed to resource: ${request.params.uri}`);
      return {};
    },
  );
  server.server.setRequestHandler(
    z.object({ method: z.literal('resources/unsubscribe'), params: z.object({ uri: z.string() }) }),
    (request) => {
      void log(`Unsubscribed from resource: ${request.params.uri}`);
      return {};
    },
  );

  const userText = (body: string) => ({ role: 'user' as const, content: { type: 'text' as const, text: body } });
  server.registerPrompt('test_simple_prompt', { title: 'Simple Test Prompt', description: 'A simple prompt without arguments' }, () => ({
    messages: [userText('This is a simple prompt for testing.')],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      title: 'Prompt With Arguments',
      description: 'A prompt with required arguments',
      argsSchema: { arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') },
    },
    (args) => ({ messages: [userText(`Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`)] }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      title: 'Prompt With Embedded Resource',
      description: 'A prompt that includes an embedded resource',
      argsSchema: { resourceUri: z.string().describe('URI of the resource to embed') },
    },
    (args) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        userText('Please process the embedded resource above.'),
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_image',
    { title: 'Prompt With Image', description: 'A prompt that includes image content' },
    () => ({
      messages: [
        { role: 'user', content: { type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' } },
        userText('Please analyze the image above.'),
      ],
    }),
  );

  server.server.setRequestHandler(
    z.object({ method: z.literal('logging/setLevel'), params: z.object({ level: z.string() }) }),
    (request) => {
      void log(`Log level set to: ${request.params.level}`);
      return {};
    },
  );
  server.server.setRequestHandler(z.object({ method: z.literal('completion/complete') }), () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));
}

export function createEverythingMcpServer(): McpServer {
  const server = new McpServer(
    { name: 'idea-conformance-reference-server', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        logging: {},
        completions: {},
      },
    },
  );
  registerEverythingTools(server);
  registerResourcesAndPrompts(server);
  return server;
}

/** Resumable SSE streams: events kept in memory, replayed after a `Last-Event-ID`. */
function memoryEventStore(): EventStore {
  const events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];
  let sequence = 0;
  return {
    storeEvent: (streamId, message) => {
      sequence += 1;
      const id = `${streamId}::${String(sequence).padStart(8, '0')}`;
      events.push({ id, streamId, message });
      return Promise.resolve(id);
    },
    replayEventsAfter: async (lastEventId, { send }) => {
      const streamId = lastEventId.split('::')[0] ?? '';
      for (const event of events) {
        if (event.streamId === streamId && event.id > lastEventId && Object.keys(event.message).length > 0)
          await send(event.id, event.message);
      }
      return streamId;
    },
  };
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

function refuse(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

/**
 * What serves one session over its Streamable HTTP transport: connects something to it (an
 * `McpServer`, or a bridge to a stdio server) and answers how to end it when the session closes.
 */
export type SessionConnector = (transport: StreamableHTTPServerTransport) => Promise<() => void>;

export async function startEverythingServer(guard?: SessionGuard): Promise<EverythingServer> {
  return serveSessions(async (transport) => {
    const server = createEverythingMcpServer();
    const guarded = guard?.(server);
    await server.connect(transport);
    return () => {
      guarded?.close();
      void server.close();
    };
  });
}

/** The reference server's HTTP front: one session per `initialize`, each connected by `connect`. */
export async function serveSessions(connect: SessionConnector): Promise<EverythingServer> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const protocolVersions = new Set<string>();
  let allowedHosts: string[] = [];
  const http = createServer((request, response) => {
    void (async () => {
      const sessionId = request.headers['mcp-session-id'];
      const existing = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (request.method !== 'POST') {
        if (existing === undefined) {
          refuse(response, 400, 'Invalid or missing session ID');
          return;
        }
        return existing.handleRequest(request, response);
      }
      const body = await readJson(request);
      if (existing !== undefined) return existing.handleRequest(request, response, body);
      const initialize = typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';
      if (sessionId !== undefined || !initialize) {
        refuse(response, 400, 'Invalid or missing session ID');
        return;
      }
      const version = (body as { params?: { protocolVersion?: unknown } }).params?.protocolVersion;
      if (typeof version === 'string') protocolVersions.add(version);
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: memoryEventStore(),
        retryInterval: 5000,
        // The reference server's own Host check, which the suite's DNS rebinding scenario probes; the SDK
        // deprecates these options in favour of a middleware this plain node:http server does not have.
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- kept as the reference server has it
        enableDnsRebindingProtection: true,
        // eslint-disable-next-line @typescript-eslint/no-deprecated -- likewise
        allowedHosts,
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      // Set before connecting, as the SDK's Protocol wraps the onclose it finds there.
      const session: { end?: () => void } = {};
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
        session.end?.();
      };
      session.end = await connect(transport);
      await transport.handleRequest(request, response, body);
    })().catch((error: unknown) => {
      if (!response.headersSent) refuse(response, 500, error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    protocolVersions,
    close: async () => {
      for (const transport of sessions.values()) await transport.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) =>
        http.close(() => {
          resolve();
        }),
      );
    },
  };
}
