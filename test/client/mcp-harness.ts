/** A guarded example MCP server and a real SDK client connected in memory. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { guardMcpServer, type McpGuardOptions } from '../../client/mcp.js';
import { createIdeaToolsServer, ToolRunRecorder } from '../../examples/mcp-server/idea-tools.js';

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
