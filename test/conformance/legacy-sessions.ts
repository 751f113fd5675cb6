/**
 * The 2025-11-25 half of the stdio bridge: Streamable HTTP sessions (one per `initialize`, the v1
 * SDK's server transport, resumable SSE) each relayed, message by message and unchanged, to a stdio
 * process of its own, since a stdio connection is pinned to the era it opened in. A message the
 * stdio side sends during a request (progress, a log line, a sampling or elicitation request) goes
 * out on that request's stream, as an HTTP server would send it.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPServerTransport, type EventStore } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { refuse } from './json-rpc-refusal.js';
import type { StdioCommand } from './stdio-command.js';

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

/** Starts a stdio process, ready for a session (nothing is read from it before its first message). */
async function startChild(stdio: StdioCommand): Promise<StdioClientTransport> {
  const log = process.env.CONFORMANCE_STDERR_FILE;
  const child = new StdioClientTransport({ ...stdio, stderr: log === undefined ? 'ignore' : 'pipe' });
  if (log !== undefined)
    child.stderr?.on('data', (chunk: Buffer) => {
      appendFileSync(log, chunk);
    });
  await child.start();
  return child;
}

/** Relays one session's HTTP transport to its own stdio process; answers how to end it. */
async function relay(http: StreamableHTTPServerTransport, child: StdioClientTransport): Promise<() => void> {
  const inFlight: RequestId[] = [];
  const byProgressToken = new Map<string | number, RequestId>();
  http.onmessage = (message: JSONRPCMessage) => {
    if ('method' in message && 'id' in message) {
      inFlight.push(message.id);
      const token = message.params?._meta?.progressToken;
      if (token !== undefined) byProgressToken.set(token, message.id);
    }
    void child.send(message);
  };
  child.onmessage = (message: JSONRPCMessage) => {
    if (!('method' in message)) {
      const index = 'id' in message && message.id !== undefined ? inFlight.indexOf(message.id) : -1;
      if (index >= 0) inFlight.splice(index, 1);
      void http.send(message);
      return;
    }
    const token = message.method === 'notifications/progress' ? (message.params?.progressToken as string | number | undefined) : undefined;
    const related = (token === undefined ? undefined : byProgressToken.get(token)) ?? inFlight.at(-1);
    void http.send(message, related === undefined ? undefined : { relatedRequestId: related });
  };
  await http.start();
  return () => {
    void child.close();
  };
}

export class LegacySessions {
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  /** One process started ahead, since the suite opens a session per scenario (two processes each through the proxy). */
  private spare: Promise<StdioClientTransport> | undefined;

  constructor(private readonly stdio: StdioCommand) {}

  private nextChild(): Promise<StdioClientTransport> {
    const child = this.spare ?? startChild(this.stdio);
    this.spare = startChild(this.stdio);
    this.spare.catch(() => undefined);
    return child;
  }

  async handle(request: IncomingMessage, response: ServerResponse, body: unknown): Promise<void> {
    const sessionId = request.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? this.sessions.get(sessionId) : undefined;
    if (existing !== undefined) return existing.handleRequest(request, response, body);
    if (sessionId !== undefined) {
      // Unknown or terminated: the client must open a new session (Streamable HTTP's 404).
      refuse(response, 404, -32001, 'Session not found');
      return;
    }
    const initialize =
      request.method === 'POST' && typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'initialize';
    if (!initialize) {
      refuse(response, 400, -32000, 'Invalid or missing session ID');
      return;
    }
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      eventStore: memoryEventStore(),
      retryInterval: 5000,
      onsessioninitialized: (id) => {
        this.sessions.set(id, transport);
      },
    });
    // Set before relaying, as the transport's own start wraps the onclose it finds there.
    const session: { end?: () => void } = {};
    transport.onclose = () => {
      if (transport.sessionId !== undefined) this.sessions.delete(transport.sessionId);
      session.end?.();
    };
    session.end = await relay(transport, await this.nextChild());
    await transport.handleRequest(request, response, body);
  }

  async close(): Promise<void> {
    for (const transport of this.sessions.values()) await transport.close();
    const spare = this.spare;
    this.spare = undefined;
    await (await spare?.catch(() => undefined))?.close();
  }
}
