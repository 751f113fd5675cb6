/**
 * `guardMcpServer` around a v2 SDK server (`@modelcontextprotocol/server` 2.4.0, `serveStdio`), driven
 * over stdio by the real v2 client pinned to 2026-07-28 and on 2025-11-25, real service: the list
 * filtered, an allowed call run, a refusal read as a tool result with the guard's text and `_meta`.
 * And a clear error, naming both SDK lines, for an object that is neither's server.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { beforeAll, describe, expect, it } from 'vitest';
import { guardMcpServer } from '../../client/mcp.js';
import { suiteScope } from '../support/app.js';
import { REPO_ROOT } from '../support/service-process.js';
import { startRealPdp, type RealPdp } from './real-pdp.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

async function connect(pinned: boolean) {
  const client = new Client({ name: 'v2-host', version: '1.0.0' }, pinned ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {});
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('PDP_')) env[key] = value;
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', path.join(REPO_ROOT, 'test', 'proxy', 'fixtures', 'v2-server.ts')],
      cwd: REPO_ROOT,
      env: { ...env, PDP_URL: pdp.url, PDP_DECIDE_TOKEN: pdp.decideToken, IDEA_AGENT_ID: 'QA' },
      stderr: 'inherit',
    }),
  );
  suite.onTestFinished(() => client.close());
  return client;
}

describe.each([
  ['2026-07-28', true],
  ['2025-11-25', false],
])('guardMcpServer around a v2 McpServer, v2 client on %s', (era, pinned) => {
  it('filters the list, runs an allowed call and refuses another with the guard text', { timeout: 120_000 }, async () => {
    const client = await connect(pinned);
    expect(client.getNegotiatedProtocolVersion()).toBe(era);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    const allowed = await client.callTool({ name: 'idea_ticket_read', arguments: { issueRef: '#82' } });
    expect((allowed.content as { text: string }[])[0]?.text).toBe('idea_ticket_read ran with {"issueRef":"#82"}');
    const refused = await client.callTool({ name: 'idea_memory_write', arguments: { text: 'x' } });
    expect(refused.isError).toBe(true);
    expect(refused._meta).toMatchObject({ 'io.ideai/decision': { reason: 'not_in_allowlist' } });
    expect((refused.content as { text: string }[])[0]?.text).toContain('idea_memory_write');
  });
});

describe('guardMcpServer given something else', () => {
  it('names both SDK lines in its error', () => {
    expect(() => guardMcpServer({}, { client: pdp.decider, project: 'demo', requester: 'QA' })).toThrow(
      /@modelcontextprotocol\/server \(v2\) or @modelcontextprotocol\/sdk \(v1\)/u,
    );
  });
});
