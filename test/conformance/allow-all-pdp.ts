/**
 * A stand-in for the policy service over real HTTP that allows every call and lists every tool of
 * the reference server: the suite's tools are not IdeA tools, which the real service refuses
 * whatever its policy. It is what `idea-mcp-proxy` asks, as it would ask the service.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EVERYTHING_TOOLS } from './everything-tools.js';

/** The decision of a service that allows everything, for `query`. */
export function allowDecision(query: { project: string; requester: string; tool: string }, decisionId: string) {
  return {
    allow: true as const,
    reason: 'allowed' as const,
    message: `Tool ${query.tool} is allowed.`,
    source: 'agent-override' as const,
    requester: { id: query.requester, kind: 'agent' as const },
    tool: { name: query.tool, access: 'read' as const },
    project: query.project,
    revision: 'allow-everything',
    decisionId,
  };
}

export interface AllowAllPdp {
  url: string;
  /** The tools of the `/decide` queries received, in order. */
  decided: string[];
  close(): Promise<void>;
}

function sendJson(response: ServerResponse, body: unknown): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export async function startAllowAllPdp(): Promise<AllowAllPdp> {
  const decided: string[] = [];
  const http = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://pdp');
      const effective = /^\/projects\/([^/]+)\/requesters\/([^/]+)\/effective$/.exec(url.pathname);
      if (request.method === 'POST' && url.pathname === '/decide') {
        const query = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { project: string; requester: string; tool: string };
        decided.push(query.tool);
        sendJson(response, allowDecision(query, `allow-${String(decided.length)}`));
      } else if (request.method === 'GET' && effective !== null) {
        sendJson(response, {
          project: decodeURIComponent(effective[1] ?? ''),
          requester: { id: decodeURIComponent(effective[2] ?? ''), kind: 'agent' },
          source: 'agent-override',
          allowedTools: EVERYTHING_TOOLS.map((tool) => tool.name),
          deniedTools: [],
          revision: 'allow-everything',
        });
      } else if (request.method === 'GET' && url.pathname === '/events') {
        // Held open: a policy that never changes.
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(': ping\n\n');
      } else if (request.method === 'GET' && url.pathname === '/projects') {
        sendJson(response, { projects: [] });
      } else {
        response.writeHead(404, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: { code: 'not_found', message: 'no such route' } }));
      }
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    decided,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) =>
        http.close(() => {
          resolve();
        }),
      );
    },
  };
}
