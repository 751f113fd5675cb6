/** The conformance reference server over stdio, unguarded: what `idea-mcp-proxy` stands in front of in the suite. */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createEverythingMcpServer } from './everything-server.js';

const server = createEverythingMcpServer();
process.stdin.once('end', () => void server.close());
await server.connect(new StdioServerTransport());
