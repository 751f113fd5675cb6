/** What the stdio bridge's two halves share. */
import type { ServerResponse } from 'node:http';

/** A stdio MCP server to start: the example server, or `idea-mcp-proxy` in front of it. */
export interface StdioCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}

/** Answers a JSON-RPC error on an HTTP status. */
export function refuse(response: ServerResponse, status: number, code: number, message: string, id: unknown = null, data?: unknown): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } }));
}
