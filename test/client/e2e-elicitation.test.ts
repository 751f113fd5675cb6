/**
 * Approving where the user already is (docs/client.md#asking-in-the-mcp-host-elicitation): the real service
 * on a real port, a guarded MCP server with `approval.elicit`, and the real SDK `Client` that
 * declares `elicitation` and answers the guard's form through `ElicitRequestSchema`. A form answer
 * is posted with the approver token and the call decided again; a declined form falls back to the
 * panel (here the admin API); a client without the capability is never asked.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { guardMcpServer, type McpGuardOptions } from '../../client/mcp.js';
import { createIdeaToolsServer, ToolRunRecorder } from '../../examples/mcp-server/idea-tools.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { waitFor } from '../support/wait.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';

const TOOL = 'idea_memory_write';
const SECRET_ARGUMENT = 'argument-text-that-must-not-reach-the-form';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});
let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

type Answer = (request: ElicitRequest, runsSoFar: number) => ElicitResult | Promise<ElicitResult>;

/** A guarded example server and an SDK client, in memory; `answers` are the user's, one per form, in order. */
async function connect(
  agent: string,
  answers: Answer[] | null,
  approval: NonNullable<McpGuardOptions['approval']>,
  logger?: McpGuardOptions['logger'],
) {
  await pdp.admin.putAgent('demo', agent, [...READ_ONLY_DEFAULT], { askTools: [TOOL] });
  const recorder = new ToolRunRecorder();
  const server = createIdeaToolsServer(recorder);
  guardMcpServer(server, { client: pdp.decider, project: 'demo', requester: agent, approval, logger });
  const client = new Client({ name: 'eliciting-host', version: '0.0.0' }, answers === null ? {} : { capabilities: { elicitation: {} } });
  const forms: ElicitRequest[] = [];
  if (answers !== null) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      forms.push(request);
      const answer = answers[forms.length - 1];
      if (answer === undefined) throw new Error('no answer scripted for this form');
      return answer(request, recorder.runs.length);
    });
  }
  const [clientTransport, serverTransport] = InMemoryTransport.createLinkedPair();
  // Every message the server sends to the client, to see that no form went out.
  const sent: JSONRPCMessage[] = [];
  const send = serverTransport.send.bind(serverTransport);
  serverTransport.send = async (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  await Promise.all([server.connect(serverTransport), client.connect(clientTransport)]);
  cleanups.push(async () => {
    await client.close();
    await server.close();
  });
  const call = async (args: Record<string, unknown> = { text: SECRET_ARGUMENT }) => {
    const result = await client.callTool({ name: TOOL, arguments: args }, undefined, { timeout: 30_000 });
    return { isError: result.isError === true, text: (result.content as { text: string }[])[0]?.text ?? '' };
  };
  return { forms, recorder, call, sent };
}

const choose =
  (label: string): Answer =>
  () => ({ action: 'accept', content: { reponse: label } });

describe('approval.elicit with the real MCP SDK and the real service', () => {
  it('"Autoriser une fois" runs the call exactly once; the next call asks again, and "Refuser" never runs it', async () => {
    let runsWhenAsked = -1;
    const host = await connect(
      'QA',
      [
        (request, runs) => {
          runsWhenAsked = runs;
          return choose('Autoriser une fois')(request, runs);
        },
        choose('Refuser'),
      ],
      { waitMs: 0, elicit: { approverToken: pdp.approverToken } },
    );
    const first = await host.call();
    expect(first).toEqual({ isError: false, text: `${TOOL} done` });
    expect(runsWhenAsked).toBe(0); // asked before anything ran
    expect(host.recorder.runs.map((run) => run.tool)).toEqual([TOOL]);

    const form = host.forms[0]?.params as { message: string; requestedSchema: { properties: Record<string, { enum: string[] }> } };
    expect(form.message).toContain('L\u2019agent QA demande à utiliser l\u2019outil « Écrire la mémoire projet » (idea_memory_write)');
    expect(form.message).toContain('dans le projet demo');
    expect(form.requestedSchema.properties.reponse?.enum).toEqual(['Autoriser une fois', 'Autoriser pendant 1 h', 'Refuser']);
    expect(JSON.stringify(host.forms)).not.toContain(SECRET_ARGUMENT);

    const answered = (await pdp.admin.listApprovals('demo')).filter((approval) => approval.requester === 'QA');
    expect(answered[0]).toMatchObject({ status: 'approved', answer: 'once', answeredBy: 'approver', via: 'elicitation' });

    const second = await host.call();
    expect(host.forms).toHaveLength(2); // "once" was used up: the next call asks again
    expect(second.isError).toBe(true);
    expect(second.text).toMatch(/idea_memory_write.*QA.*demo/);
    expect(host.recorder.runs).toHaveLength(1);
    const denied = (await pdp.admin.listApprovals('demo')).filter((approval) => approval.requester === 'QA');
    expect(denied[0]).toMatchObject({ status: 'denied', answer: 'deny', answeredBy: 'approver', via: 'elicitation' });
  });

  it('a ticket written with bidirectional controls is quoted with them escaped: "\\u202e28\\u202c" never reads as #82', async () => {
    const host = await connect('Architect', [choose('Refuser')], { waitMs: 0, elicit: { approverToken: pdp.approverToken } });
    const refused = await host.call({ text: 'x', issueRef: '\u202e28\u202c' });
    expect(refused.isError).toBe(true);
    const form = host.forms[0]?.params as { message: string };
    expect(form.message).toContain('dans le projet demo, pour le ticket #\\u202e28\\u202c. ');
    expect(form.message).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  });

  it('"Autoriser pendant 1 h" grants the tool for an hour: the next calls run without asking', async () => {
    const host = await connect('Main', [choose('Autoriser pendant 1 h')], { elicit: { approverToken: pdp.approverToken } });
    expect((await host.call()).isError).toBe(false);
    expect((await host.call()).isError).toBe(false);
    expect(host.forms).toHaveLength(1);
    expect(host.recorder.runs).toHaveLength(2);
    const grant = (await pdp.admin.listGrants('demo')).find((live) => live.requester === 'Main');
    expect(grant?.tools).toEqual([TOOL]);
    const lasts = Date.parse(grant?.expiresAt ?? '') - Date.parse(grant?.createdAt ?? '');
    expect(lasts).toBe(3_600_000);
  });

  it('a declined form falls back to the panel: the call waits, an answer from the admin API runs it', async () => {
    const host = await connect('DevFrontend', [() => ({ action: 'decline' })], {
      waitMs: 20_000,
      elicit: { approverToken: pdp.approverToken },
    });
    const pending = host.call();
    await waitFor(() => host.forms.length === 1, 'the form');
    let id: string | undefined;
    await waitFor(async () => {
      const approvals = await pdp.admin.listApprovals('demo', 'pending');
      id = approvals.find((approval) => approval.requester === 'DevFrontend')?.id;
      return id !== undefined;
    }, 'the pending request');
    expect(host.recorder.runs).toEqual([]);
    await pdp.admin.answerApproval('demo', id ?? '', 'once');
    expect(await pending).toEqual({ isError: false, text: `${TOOL} done` });
    expect(host.recorder.runs).toHaveLength(1);
    const answered = (await pdp.admin.listApprovals('demo')).find((approval) => approval.id === id);
    expect(answered).toMatchObject({ answeredBy: 'admin', answer: 'once' });
    expect(answered?.via).toBeUndefined();
  });

  it('an answer the service refuses (a wrong approver token) falls back to the panel, with a warning', async () => {
    const warnings: string[] = [];
    const host = await connect(
      'QA2',
      [choose('Autoriser une fois')],
      {
        waitMs: 20_000,
        elicit: { approverToken: 'not-the-approver-token' },
      },
      { warn: (fields, message) => warnings.push(`${message} ${JSON.stringify(fields)}`) },
    );
    const pending = host.call();
    let id: string | undefined;
    await waitFor(async () => {
      const approvals = await pdp.admin.listApprovals('demo', 'pending');
      id = approvals.find((approval) => approval.requester === 'QA2')?.id;
      return id !== undefined && warnings.length > 0;
    }, 'the pending request and the warning');
    expect(warnings[0]).toMatch(/^approval elicitation failed: waiting for an answer from the panel .*"code":"unauthorized"/);
    expect(warnings[0]).not.toContain('not-the-approver-token');
    expect(host.recorder.runs).toEqual([]);
    await pdp.admin.answerApproval('demo', id ?? '', 'once');
    expect(await pending).toEqual({ isError: false, text: `${TOOL} done` });
  });

  it('a client without the elicitation capability is never sent a form: the call waits for the panel as before', async () => {
    const host = await connect('Git', null, { waitMs: 400, elicit: { approverToken: pdp.approverToken } });
    const started = performance.now();
    const result = await host.call();
    expect(performance.now() - started).toBeGreaterThanOrEqual(390);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(/approval/i);
    expect(host.recorder.runs).toEqual([]);
    expect(host.sent.some((message) => 'method' in message && message.method === 'elicitation/create')).toBe(false);
  });

  it('the example server over stdio (PDP_APPROVER_TOKEN) asks the host, and "Autoriser une fois" runs the call once', async () => {
    await pdp.admin.putAgent('demo', 'Stdio', [...READ_ONLY_DEFAULT], { askTools: [TOOL] });
    const folder = await mkdtemp(join(tmpdir(), 'mcp-elicit-'));
    const toolLog = join(folder, 'runs.jsonl');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'examples/mcp-server/main.ts'],
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      env: {
        PATH: process.env.PATH ?? '',
        PDP_URL: pdp.url,
        PDP_PROJECT: 'demo',
        IDEA_AGENT_ID: 'Stdio',
        PDP_DECIDE_TOKEN: pdp.decideToken,
        PDP_APPROVER_TOKEN: pdp.approverToken,
        PDP_APPROVAL_WAIT_MS: '20000',
        PDP_TIMEOUT_MS: '5000',
        IDEA_TOOL_LOG: toolLog,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-eliciting-host', version: '0.0.0' }, { capabilities: { elicitation: {} } });
    const messages: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      messages.push(request.params.message);
      return { action: 'accept', content: { reponse: 'Autoriser une fois' } };
    });
    try {
      await client.connect(transport);
      const result = await client.callTool({ name: TOOL, arguments: { text: SECRET_ARGUMENT } }, undefined, { timeout: 30_000 });
      expect(result.isError).not.toBe(true);
      expect(messages).toHaveLength(1);
      expect(messages[0]).toContain('L\u2019agent Stdio demande');
      const runs = (await readFile(toolLog, 'utf8')).split('\n').filter((line) => line !== '');
      expect(runs).toHaveLength(1);
    } finally {
      await client.close();
      await rm(folder, { recursive: true, force: true });
    }
  }, 60_000);
});
