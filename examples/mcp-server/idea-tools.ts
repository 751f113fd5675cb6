/**
 * The 25 IdeA MCP tools as small stubs: each one only records that it ran (tool, arguments,
 * time) so a test or a demo can see exactly which handlers were executed.
 */
import { appendFileSync } from 'node:fs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { TOOL_CATALOG } from '../../schemas/catalog.js';

/** One executed tool call. */
export interface ToolRun {
  tool: string;
  args: Record<string, unknown>;
  at: string;
}

/** Where the stubs record their runs: a list in memory, plus a JSON-lines file when given. */
export class ToolRunRecorder {
  readonly runs: ToolRun[] = [];
  constructor(private readonly file?: string) {}

  record(tool: string, args: Record<string, unknown>): void {
    const run: ToolRun = { tool, args, at: new Date().toISOString() };
    this.runs.push(run);
    if (this.file !== undefined) appendFileSync(this.file, `${JSON.stringify(run)}\n`);
  }
}

// Every stub accepts any object; issueRef is declared because ticket tools carry the ticket in it.
const toolInput = z.looseObject({ issueRef: z.string().optional() });

/** An `McpServer` exposing the 25 catalog tools as recording stubs (not guarded yet). */
export function createIdeaToolsServer(recorder: ToolRunRecorder): McpServer {
  const server = new McpServer({ name: 'idea-tools-example', version: '0.1.0' });
  for (const tool of TOOL_CATALOG) {
    server.registerTool(tool.name, { title: tool.label, description: `${tool.label} (${tool.access})`, inputSchema: toolInput }, (args) => {
      recorder.record(tool.name, args);
      return { content: [{ type: 'text', text: `${tool.name} done` }] };
    });
  }
  return server;
}
