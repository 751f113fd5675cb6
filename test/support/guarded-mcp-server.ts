/** A guarded example MCP server and a real SDK client connected in memory. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { guardMcpServer, type McpGuardOptions } from '../../client/mcp.js';
import { createIdeaToolsServer, ToolRunRecorder } from '../../examples/mcp-server/idea-tools.js';

/**
 * The SDK's low-level `Server`, which the guard supports: the SDK deprecates it for new servers
 * only, and the tests that import it from here check servers built on it.
 */
// eslint-disable-next-line @typescript-eslint/no-deprecated -- see above
export const LowLevelServer = Server;
// eslint-disable-next-line @typescript-eslint/no-deprecated -- see above
export type LowLevelServer = Server;

export async function connectGuardedIdeaServer(options: McpGuardOptions) {
  const recorder = new ToolRunRecorder();
  const server = createIdeaToolsServer(recorder);
  guardMcpServer(server, options);
  const client = new Client({ name: 'test-host', version: '0.0.0' });
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  return {
    server,
    client,
    recorder,
    /** The text of the first content block of a tools/call result. */
    call: async (name: string, args: Record<string, unknown> = {}) => {
      const result = await client.callTool({ name, arguments: args });
      const content = result.content as { type: string; text: string }[];
      return { isError: result.isError === true, text: content[0]?.text ?? '' };
    },
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}
