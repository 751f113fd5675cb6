/**
 * `guardMcpServer` around a v2 SDK server (`@modelcontextprotocol/server` 2.4.0, `serveStdio`), driven
 * over stdio by the real v2 client pinned to 2026-07-28 and on 2025-11-25, real service: the list
 * filtered, an allowed call run, a refusal read as a tool result with the guard's text and `_meta`
 * (the same in both eras), an approval answered through the form (the call then runs once), and a
 * `list_changed` after a policy change (on the host's subscription on 2026-07-28). And a clear
 * error, naming both SDK lines, for an object that is neither's server.
 */
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { guardMcpServer } from '../../client/mcp.js';
import { suiteScope } from '../support/app.js';
import { REPO_ROOT } from '../support/service-process.js';
import { waitFor } from '../support/wait.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

/** The v2 client on the guarded v2 fixture for `agent`: it can show forms (answering `answer`) and counts list changes. */
async function connect(pinned: boolean, agent = 'QA', answer = 'Autoriser une fois') {
  const client = new Client(
    { name: 'v2-host', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, ...(pinned ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {}) },
  );
  const questions: string[] = [];
  client.setRequestHandler('elicitation/create', (request) => {
    questions.push(request.params.message);
    return { action: 'accept', content: { reponse: answer } };
  });
  let listChanged = 0;
  client.setNotificationHandler('notifications/tools/list_changed', () => {
    listChanged += 1;
  });
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('PDP_')) env[key] = value;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['--import', 'tsx', path.join(REPO_ROOT, 'test', 'proxy', 'fixtures', 'v2-server.ts')],
    cwd: REPO_ROOT,
    env: {
      ...env,
      PDP_URL: pdp.url,
      PDP_DECIDE_TOKEN: pdp.decideToken,
      PDP_APPROVER_TOKEN: pdp.approverToken,
      IDEA_AGENT_ID: agent,
      FIXTURE_CALLS_ON_STDERR: '1',
    },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await client.connect(transport);
  suite.onTestFinished(() => client.close());
  /** The tools that ran, as the fixture reported them. */
  const ran = () => stderr.split('\n').filter((line) => line.startsWith('ran '));
  return { client, questions, listChanged: () => listChanged, ran };
}

const textOf = (result: { content?: unknown }) => (result.content as { text: string }[])[0]?.text;

describe.each([
  ['2026-07-28', true],
  ['2025-11-25', false],
])('guardMcpServer around a v2 McpServer, v2 client on %s', (era, pinned) => {
  it('filters the list, runs an allowed call and refuses another with the guard text', { timeout: 120_000 }, async () => {
    const { client, ran } = await connect(pinned);
    expect(client.getNegotiatedProtocolVersion()).toBe(era);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    const allowed = await client.callTool({ name: 'idea_ticket_read', arguments: { issueRef: '#82' } });
    expect(textOf(allowed)).toBe('idea_ticket_read ran with {"issueRef":"#82"}');
    const refused = await client.callTool({ name: 'idea_memory_write', arguments: { text: 'x' } });
    expect(refused.isError).toBe(true);
    expect(refused._meta).toMatchObject({ 'io.ideai/decision': { reason: 'not_in_allowlist' } });
    // The text is the service's own message for that call, as every guard words it.
    const direct = await pdp.decider.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write', arguments: { text: 'x' } });
    expect(textOf(refused)).toBe(direct.message);
    expect(ran()).toEqual(['ran idea_ticket_read {"issueRef":"#82"}']);
  });

  it('asks for an approval through the form, then runs the call once', { timeout: 120_000 }, async () => {
    const agent = `GuardForm${pinned ? 'Modern' : 'Legacy'}`;
    await pdp.admin.putAgent('demo', agent, [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const { client, questions, ran } = await connect(pinned, agent);
    const result = await client.callTool({ name: 'idea_memory_write', arguments: { text: 'approved' } });
    expect(result.isError).not.toBe(true);
    expect(textOf(result)).toBe('idea_memory_write ran with {"text":"approved"}');
    expect(questions).toHaveLength(1);
    expect(questions[0]).toContain(`L\u2019agent ${agent} demande à utiliser l\u2019outil`);
    expect(ran()).toEqual(['ran idea_memory_write {"text":"approved"}']);
    const answered = (await pdp.admin.listApprovals('demo')).filter((approval) => approval.requester === agent);
    expect(answered.map((approval) => [approval.answer, approval.via])).toEqual([['once', 'elicitation']]);
  });

  it('refuses the call when the user refuses in the form, and runs nothing', { timeout: 120_000 }, async () => {
    const agent = `GuardDeny${pinned ? 'Modern' : 'Legacy'}`;
    await pdp.admin.putAgent('demo', agent, [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const { client, questions, ran } = await connect(pinned, agent, 'Refuser');
    const result = await client.callTool({ name: 'idea_memory_write', arguments: { text: 'no' } });
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({ 'io.ideai/decision': { reason: 'approval_denied' } });
    expect(questions).toHaveLength(1);
    expect(ran()).toEqual([]);
  });

  it('tells the host its tool list changed after a policy change', { timeout: 120_000 }, async () => {
    const agent = `GuardChanging${pinned ? 'Modern' : 'Legacy'}`;
    const { client, listChanged } = await connect(pinned, agent);
    if (pinned) await client.listen({ toolsListChanged: true });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    await pdp.admin.putAgent('demo', agent, ['idea_ticket_read', 'idea_memory_write']);
    await waitFor(() => listChanged() > 0, 'a tools/list_changed', 30_000);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['idea_memory_write', 'idea_ticket_read']);
  });
});

describe('guardMcpServer refusals in both eras', () => {
  it('are the same text and the same decision', { timeout: 120_000 }, async () => {
    const [modern, legacy] = await Promise.all(
      [true, false].map(async (pinned) => {
        const { client } = await connect(pinned);
        const refused = await client.callTool({ name: 'idea_ticket_update_carnet', arguments: { issueRef: '#82' } });
        const { decisionId: _id, ...decision } = refused._meta?.['io.ideai/decision'] as Record<string, unknown>;
        return { isError: refused.isError, content: refused.content, decision };
      }),
    );
    expect(modern?.isError).toBe(true);
    expect(modern).toEqual(legacy);
  });
});

describe('guardMcpServer given something else', () => {
  it('names both SDK lines in its error', () => {
    expect(() => guardMcpServer({}, { client: pdp.decider, project: 'demo', requester: 'QA' })).toThrow(
      /@modelcontextprotocol\/server \(v2\) or @modelcontextprotocol\/sdk \(v1\)/u,
    );
  });
});
