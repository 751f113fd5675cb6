/**
 * The conformance suite speaks Streamable HTTP only; `idea-mcp-proxy` speaks stdio. This bridge
 * serves the suite's sessions over HTTP (the reference server's own front) and relays each one's
 * messages, unchanged, to a stdio command of its own: the reference server directly (the
 * baseline), or the proxy in front of it. A message the stdio side sends during a request (a
 * progress notification, a log line, a sampling or elicitation request) goes out on that
 * request's stream, as an HTTP server would send it.
 */
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { serveSessions, type EverythingServer } from './everything-server.js';

export interface StdioCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

export function startStdioBridge(stdio: StdioCommand): Promise<EverythingServer> {
  return serveSessions(async (http) => {
    const child = new StdioClientTransport({ ...stdio, stderr: 'ignore' });
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
      const token =
        message.method === 'notifications/progress' ? (message.params?.progressToken as string | number | undefined) : undefined;
      const related = (token === undefined ? undefined : byProgressToken.get(token)) ?? inFlight.at(-1);
      void http.send(message, related === undefined ? undefined : { relatedRequestId: related });
    };
    await child.start();
    await http.start();
    return () => {
      void child.close();
    };
  });
}
