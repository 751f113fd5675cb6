/**
 * End to end with the real policy service: the real MCP SDK client talks to the guarded example
 * server, in memory and over stdio (the example started as a child process). Grants and
 * revocations go through the API with the admin client and apply on the very next call.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

describe('guarded MCP server, in memory, real service', () => {
  it('runs allowed tools, never runs denied ones, and applies a grant and a revocation on the next call', async () => {
    const mcp = await connectGuardedIdeaServer({ client: pdp.decider, project: 'demo', requester: 'QA', filterToolsList: true });
    try {
      expect(await mcp.call('idea_ticket_read', { issueRef: '#82' })).toEqual({ isError: false, text: 'idea_ticket_read done' });
      const denied = await mcp.call('idea_memory_write', { text: 'note' });
      expect(denied.isError).toBe(true);
      expect(denied.text).toContain('idea_memory_write');
      expect(denied.text).toContain('QA');
      expect(denied.text).toContain('demo');
      expect(mcp.recorder.runs.map((run) => run.tool)).toEqual(['idea_ticket_read']);
      expect((await mcp.client.listTools()).tools.map((tool) => tool.name)).toEqual([...READ_ONLY_DEFAULT]);

      const { etag } = await pdp.admin.getPermissions('demo');
      await pdp.admin.putAgent('demo', 'QA', [...READ_ONLY_DEFAULT, 'idea_memory_write'], { ifMatch: etag });
      expect(await mcp.call('idea_memory_write', { text: 'note' })).toEqual({ isError: false, text: 'idea_memory_write done' });
      expect((await mcp.client.listTools()).tools.map((tool) => tool.name)).toContain('idea_memory_write');

      await pdp.admin.deleteAgent('demo', 'QA');
      expect((await mcp.call('idea_memory_write', { text: 'again' })).isError).toBe(true);
      expect(mcp.recorder.runs.map((run) => run.tool)).toEqual(['idea_ticket_read', 'idea_memory_write']);
      expect((await mcp.client.listTools()).tools.map((tool) => tool.name)).not.toContain('idea_memory_write');
    } finally {
      await mcp.close();
    }
  });

  it('passes issueRef, so an ephemeral ticket-assistant policy is bound to its ticket', async () => {
    const requester = 'ticket-assistant:demo:82';
    await pdp.admin.putEphemeral('demo', requester, {
      allowedTools: [...READ_ONLY_DEFAULT, 'idea_ticket_update_carnet'],
      boundIssue: '#82',
      ttlSeconds: 60,
    });
    const mcp = await connectGuardedIdeaServer({ client: pdp.decider, project: 'demo', requester: () => requester });
    try {
      expect((await mcp.call('idea_ticket_update_carnet', { issueRef: '82', text: 'x' })).isError).toBe(false);
      const other = await mcp.call('idea_ticket_update_carnet', { issueRef: '#83', text: 'x' });
      expect(other.isError).toBe(true);
      expect(mcp.recorder.runs.map((run) => run.args.issueRef)).toEqual(['82']);
      const recent = await pdp.admin.recentDecisions('demo', { allow: false, limit: 5 });
      expect(recent[0]).toMatchObject({ requester, tool: 'idea_ticket_update_carnet', reason: 'issue_out_of_bounds' });
    } finally {
      await mcp.close();
      await pdp.admin.deleteEphemeral('demo', requester);
    }
  });
});

describe('guarded example MCP server over stdio, real service', () => {
  it('decides every call of a real stdio session; a revocation applies on the next call', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'mcp-stdio-'));
    const toolLog = join(folder, 'runs.jsonl');
    const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'examples/mcp-server/main.ts'],
      cwd: repoRoot,
      env: {
        PATH: process.env.PATH ?? '',
        PDP_URL: pdp.url,
        PDP_PROJECT: 'demo',
        IDEA_AGENT_ID: 'DevFrontend',
        PDP_DECIDE_TOKEN: pdp.decideToken,
        PDP_FILTER_TOOLS_LIST: '1',
        IDEA_TOOL_LOG: toolLog,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-host', version: '0.0.0' });
    const ranTools = async () =>
      (await readFile(toolLog, 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => (JSON.parse(line) as { tool: string }).tool);
    const call = async (name: string, args: Record<string, unknown>) => {
      const result = await client.callTool({ name, arguments: args });
      return { isError: result.isError === true, text: (result.content as { text: string }[])[0]?.text ?? '' };
    };
    try {
      await client.connect(transport);
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      // The demo's DevFrontend may delegate to QA only: a tool with a condition is listed, its calls are decided.
      expect(listed).toEqual([...READ_ONLY_DEFAULT, 'idea_ask_agent', 'idea_ticket_update_carnet']);

      expect(await call('idea_ticket_update_carnet', { issueRef: '#82', text: 'done' })).toEqual({
        isError: false,
        text: 'idea_ticket_update_carnet done',
      });
      const denied = await call('idea_memory_write', { text: 'x' });
      expect(denied.isError).toBe(true);
      expect(denied.text).toMatch(/idea_memory_write.*DevFrontend.*demo/);
      expect(await ranTools()).toEqual(['idea_ticket_update_carnet']);

      let listChanged = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        listChanged += 1;
      });
      await pdp.admin.putAgent('demo', 'DevFrontend', [...READ_ONLY_DEFAULT]);
      expect((await call('idea_ticket_update_carnet', { issueRef: '#82', text: 'again' })).isError).toBe(true);
      expect(await ranTools()).toEqual(['idea_ticket_update_carnet']);
      // The host that caches tools/list is told, and lists the revoked tool no more.
      await waitFor(() => listChanged > 0, 'list_changed');
      expect(listChanged).toBe(1);
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([...READ_ONLY_DEFAULT]);
    } finally {
      await client.close();
      await rm(folder, { recursive: true, force: true });
    }
  }, 30_000);
});
