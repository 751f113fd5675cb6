/**
 * The conformance suite speaks Streamable HTTP only; the example server, `idea-mcp-proxy` and a
 * server guarded in process all speak stdio. This bridge is the HTTP front they share: it checks
 * the `Host` header (the suite's DNS rebinding scenario probes it), lets the v2 SDK's own classifier
 * tell each request's era (and answer the HTTP-level rejections of 2026-07-28, which have no stdio
 * counterpart), then relays the JSON-RPC messages unchanged: 2025-11-25 sessions each to a stdio
 * process of their own, 2026-07-28 requests to one shared process (a request claiming
 * another revision to a process of its own, whose opening answers it).
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { refuse } from './json-rpc-refusal.js';
import type { StdioCommand } from './stdio-command.js';
import { LegacySessions } from './legacy-sessions.js';
import { claimedRevision, ModernRelay, MODERN_REVISION, type Message } from './modern-relay.js';

export type { StdioCommand } from './stdio-command.js';

export interface StdioBridge {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<{ ok: true; body: unknown } | { ok: false }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return { ok: true, body: undefined };
  try {
    return { ok: true, body: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** `{ [key]: value }` when the request has that header, else nothing (the classifier's fields are optional). */
function header(request: IncomingMessage, name: string, key: string): Record<string, string> {
  const raw = request.headers[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  return value === undefined ? {} : { [key]: value };
}

export async function startStdioBridge(stdio: StdioCommand): Promise<StdioBridge> {
  const legacy = new LegacySessions(stdio);
  const modern = new ModernRelay(stdio);
  let allowedHosts: string[] = [];
  const http = createServer((request, response) => {
    void (async () => {
      if (!allowedHosts.includes(request.headers.host ?? '')) {
        refuse(response, 403, -32000, `Invalid Host header: ${String(request.headers.host)}`);
        return;
      }
      const read = request.method === 'POST' ? await readBody(request) : { ok: true as const, body: undefined };
      if (!read.ok) {
        refuse(response, 400, -32700, 'Parse error');
        return;
      }
      const route = classifyInboundRequest({
        httpMethod: request.method ?? '',
        ...header(request, 'mcp-protocol-version', 'protocolVersionHeader'),
        ...header(request, 'mcp-method', 'mcpMethodHeader'),
        ...header(request, 'mcp-name', 'mcpNameHeader'),
        body: read.body,
      });
      if (route.kind === 'reject') {
        const id = typeof read.body === 'object' && read.body !== null ? ((read.body as { id?: unknown }).id ?? null) : null;
        refuse(response, route.httpStatus, route.code, route.message, id, route.data);
      } else if (route.kind === 'modern' && claimedRevision(route.message as Message) !== MODERN_REVISION) {
        // A stdio connection answers another revision's claim only as its opening message: a process of its own.
        const once = new ModernRelay(stdio);
        response.on('close', () => void once.close());
        once.handle(route.message as Message, response);
      } else if (route.kind === 'modern') {
        modern.handle(route.message as Message, response);
      } else {
        await legacy.handle(request, response, read.body);
      }
    })().catch((error: unknown) => {
      refuse(response, 500, -32603, error instanceof Error ? error.message : String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  allowedHosts = [`127.0.0.1:${String(port)}`, `localhost:${String(port)}`];
  return {
    url: `http://127.0.0.1:${String(port)}/mcp`,
    close: async () => {
      await Promise.all([legacy.close(), modern.close()]);
      http.closeAllConnections();
      await new Promise<void>((resolve) =>
        http.close(() => {
          resolve();
        }),
      );
    },
  };
}
