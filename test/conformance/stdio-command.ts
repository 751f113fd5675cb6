/** A stdio MCP server to start: the example server, or `idea-mcp-proxy` in front of it. */
export interface StdioCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
}
