/**
 * `idea-mcp-proxy` in front of a v2 SDK server, driven by the real v2 client
 * (`@modelcontextprotocol/client`) pinned to 2026-07-28, real service: a refusal read as a tool
 * result (the service's own text), an allowed call, an approval answered through the form (the call
 * then runs once) or refused there, and a `list_changed` on the host's subscription after a policy change.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { REPO_ROOT } from '../support/service-process.js';
import { waitFor } from '../support/wait.js';
import { proxyArgs, proxyEnv } from '../support/proxy-process.js';

const V2_SERVER = [process.execPath, '--import', 'tsx', path.join(REPO_ROOT, 'test', 'proxy', 'fixtures', 'v2-server.ts')];

const suite = suiteScope();
let pdp: RealPdp;
let tokenFile: string;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
  const folder = await mkdtemp(path.join(tmpdir(), 'proxy-v2-'));
  suite.onTestFinished(() => rm(folder, { recursive: true, force: true }));
  tokenFile = path.join(folder, 'approver-token');
  await writeFile(tokenFile, `${pdp.approverToken}\n`);
  await chmod(tokenFile, 0o600);
});

async function connect(agent: string, pinned: boolean, answer = 'Autoriser une fois') {
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
  const options = ['--pdp', pdp.url, '--project', 'demo', '--agent', agent, '--timeout-ms', '3000', '--approver-token-file', tokenFile];
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: proxyArgs(options, V2_SERVER),
      cwd: REPO_ROOT,
      env: proxyEnv({ PDP_DECIDE_TOKEN: pdp.decideToken }),
      stderr: 'inherit',
    }),
  );
  suite.onTestFinished(() => client.close());
  return { client, questions, listChanged: () => listChanged };
}

const textOf = (result: { content?: unknown }) => (result.content as { text: string }[])[0]?.text;

describe.each([
  ['2026-07-28', true],
  ['2025-11-25', false],
])('idea-mcp-proxy with the v2 client on %s', (era, pinned) => {
  it('lists the allowed tools, runs an allowed call and reads a refusal as a tool result', { timeout: 120_000 }, async () => {
    const { client } = await connect('QA', pinned);
    expect(client.getNegotiatedProtocolVersion()).toBe(era);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    const allowed = await client.callTool({ name: 'idea_ticket_read', arguments: { issueRef: '#82' } });
    expect(textOf(allowed)).toBe('idea_ticket_read ran with {"issueRef":"#82"}');
    const refused = await client.callTool({ name: 'idea_memory_write', arguments: { text: 'x' } });
    expect(refused.isError).toBe(true);
    expect(refused._meta).toMatchObject({ 'io.ideai/decision': { reason: 'not_in_allowlist' } });
    // The text is the service's own message for that call, as every guard words it, in every era.
    const direct = await pdp.decider.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write', arguments: { text: 'x' } });
    expect(textOf(refused)).toBe(direct.message);
  });

  it('refuses the call when the user refuses in the form, and the server never sees it', { timeout: 120_000 }, async () => {
    const agent = `Deny${pinned ? 'Modern' : 'Legacy'}`;
    await pdp.admin.putAgent('demo', agent, [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const { client, questions } = await connect(agent, pinned, 'Refuser');
    const result = await client.callTool({ name: 'idea_memory_write', arguments: { text: 'no' } });
    expect(result.isError).toBe(true);
    expect(result._meta).toMatchObject({ 'io.ideai/decision': { reason: 'approval_denied' } });
    expect(textOf(result)).not.toContain('ran with');
    expect(questions).toHaveLength(1);
  });

  it('asks for an approval through the form, then runs the call once', { timeout: 120_000 }, async () => {
    const agent = `Form${pinned ? 'Modern' : 'Legacy'}`;
    await pdp.admin.putAgent('demo', agent, [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const { client, questions } = await connect(agent, pinned);
    const result = await client.callTool({ name: 'idea_memory_write', arguments: { text: 'approved' } });
    expect(textOf(result)).toBe('idea_memory_write ran with {"text":"approved"}');
    expect(questions).toHaveLength(1);
    expect(questions[0]).toContain(`L\u2019agent ${agent} demande à utiliser l\u2019outil`);
    const answered = (await pdp.admin.listApprovals('demo')).filter((approval) => approval.requester === agent);
    expect(answered.map((approval) => [approval.answer, approval.via])).toEqual([['once', 'elicitation']]);
  });

  it('tells the host its tool list changed after a policy change', { timeout: 120_000 }, async () => {
    const agent = `Changing${pinned ? 'Modern' : 'Legacy'}`;
    const { client, listChanged } = await connect(agent, pinned);
    if (pinned) await client.listen({ toolsListChanged: true });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    await pdp.admin.putAgent('demo', agent, ['idea_ticket_read', 'idea_memory_write']);
    await waitFor(() => listChanged() > 0, 'a tools/list_changed', 30_000);
    expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['idea_memory_write', 'idea_ticket_read']);
  });
});
