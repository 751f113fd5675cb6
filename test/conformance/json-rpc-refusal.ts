/** The JSON-RPC error both halves of the stdio bridge answer a request they refuse with. */
import type { ServerResponse } from 'node:http';

/** Answers a JSON-RPC error on an HTTP status. */
export function refuse(response: ServerResponse, status: number, code: number, message: string, id: unknown = null, data?: unknown): void {
  if (response.headersSent) return;
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, ...(data === undefined ? {} : { data }) } }));
}
