/** Test doubles of the policy service on real sockets: canned answers, hangs, closed ports. */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface FakeServer {
  url: string;
  /** Requests received (method, url, parsed JSON body). */
  requests: { method: string; url: string; body: unknown; headers: IncomingMessage['headers'] }[];
  close: () => Promise<void>;
}

/** An HTTP server on 127.0.0.1:0 answering with `handler`. */
export async function startFakeHttp(
  handler: (request: IncomingMessage, response: ServerResponse, body: unknown) => void,
): Promise<FakeServer> {
  const requests: FakeServer['requests'] = [];
  const server = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = text;
      }
      requests.push({ method: request.method ?? '', url: request.url ?? '', body, headers: request.headers });
      handler(request, response, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}

/** A TCP server that accepts connections and never writes a byte. */
export async function startBlackHole(): Promise<FakeServer> {
  const sockets = new Set<Socket>();
  const server: NetServer = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: [],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) =>
        server.close(() => {
          resolve();
        }),
      );
    },
  };
}

/** A URL whose port was just free: nothing listens there (connection refused). */
export async function closedPortUrl(): Promise<string> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
  return `http://127.0.0.1:${port}`;
}

/** A decision the real service could give, for canned answers. */
export function cannedDecision(query: { project: string; requester: string; tool: string }, allow: boolean) {
  return {
    allow,
    reason: allow ? 'allowed' : 'not_in_allowlist',
    message: allow
      ? `Tool ${query.tool} is allowed for agent ${query.requester} in project ${query.project} (policy: project-default).`
      : `Tool ${query.tool} is denied for agent ${query.requester} in project ${query.project} (policy: project-default). Grant it in Permissions > Tools MCP IdeA.`,
    source: 'project-default',
    requester: { id: query.requester, kind: 'agent' },
    tool: { name: query.tool, access: 'write' },
    project: query.project,
    revision: 'abc123',
    decisionId: 'd-1',
  };
}

export function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
