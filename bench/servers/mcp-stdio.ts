/**
 * A small MCP server over stdio for the proxy figures: one IdeA tool and one resource. With
 * `BENCH_GUARD=1` it guards itself in process (`guardMcpServer`, `PDP_URL`, agent `IDEA_AGENT_ID`);
 * without, it is what `idea-mcp-proxy` stands in front of, or what is reached directly.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PdpClient } from '../../client/index.js';
import { guardMcpServer } from '../../client/mcp.js';

const server = new McpServer({ name: 'bench-stdio', version: '1.0.0' });
server.registerTool('idea_ticket_read', { description: 'Reads a ticket (bench stub).' }, () => ({
  content: [{ type: 'text', text: 'ticket #82' }],
}));
server.registerResource('readme', 'bench://readme', { mimeType: 'text/plain' }, () => ({
  contents: [{ uri: 'bench://readme', mimeType: 'text/plain', text: 'bench' }],
}));
const pdp = process.env.BENCH_GUARD === '1' ? new PdpClient({ baseUrl: process.env.PDP_URL ?? '', timeoutMs: 5000 }) : undefined;
if (pdp !== undefined) guardMcpServer(server, { client: pdp, project: 'demo', requester: process.env.IDEA_AGENT_ID ?? '' });
process.stdin.once('end', () => void server.close().finally(() => pdp?.close()));
await server.connect(new StdioServerTransport());
