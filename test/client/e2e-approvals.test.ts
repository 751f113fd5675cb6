/**
 * Approvals end to end (docs/api.md#the-client-sdk, docs/api.md#approvals-and-temporary-grants), real service: an agent has a write tool on ask; a
 * guarded call with `approval: { waitMs }` waits, the test answers "once" through the API with the
 * admin token, the handler runs exactly once, and the next call asks again (answered "deny" here,
 * so it is refused without running). Through the real MCP SDK `Client` over stdio, and through the
 * real `openai` client against a local Chat Completions endpoint. Prints the answer-to-run latency.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Approval, ApprovalAnswer } from '../../client/index.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { runAgentLoop } from '../../examples/openai-invoker/agent-loop.js';
import { sendJson, startFakeHttp, type FakeServer } from './fake-pdp.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';

const WRITE_TOOL = 'idea_memory_write';
const WAIT_MS = 20_000;

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

async function putOnAsk(agent: string): Promise<void> {
  await pdp.admin.putAgent('demo', agent, [...READ_ONLY_DEFAULT], { askTools: [WRITE_TOOL] });
}

/** Waits for the pending request of `agent` (other than `skip`), then answers it; resolves with its id. */
async function answerWhenPending(agent: string, answer: ApprovalAnswer, skip?: string, beforeAnswer?: () => Promise<void>) {
  let pending: Approval | undefined;
  await waitFor(
    async () => {
      const approvals = await pdp.admin.listApprovals('demo', 'pending');
      pending = approvals.find((approval) => approval.requester === agent && approval.tool === WRITE_TOOL && approval.id !== skip);
      return pending !== undefined;
    },
    `a pending approval for ${agent}`,
    10_000,
    20,
  );
  if (pending === undefined) throw new Error(`no pending approval for ${agent}`);
  // The guarded call is still waiting: nothing has answered it yet.
  await beforeAnswer?.();
  const answered = await pdp.admin.answerApproval('demo', pending.id, answer);
  expect(answered.approval).toMatchObject({ id: pending.id, status: answer === 'deny' ? 'denied' : 'approved', answer });
  return { id: pending.id };
}

describe('approvals end to end, real service', () => {
  it('MCP over stdio: the call waits, "once" lets it run exactly once, the next call asks again', async () => {
    const agent = 'QA';
    await putOnAsk(agent);
    const folder = await mkdtemp(join(tmpdir(), 'mcp-approval-'));
    const toolLog = join(folder, 'runs.jsonl');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ['--import', 'tsx', 'examples/mcp-server/main.ts'],
      cwd: fileURLToPath(new URL('../../', import.meta.url)),
      env: {
        PATH: process.env.PATH ?? '',
        PDP_URL: pdp.url,
        PDP_PROJECT: 'demo',
        IDEA_AGENT_ID: agent,
        PDP_DECIDE_TOKEN: pdp.decideToken,
        PDP_FILTER_TOOLS_LIST: '1',
        PDP_APPROVAL_WAIT_MS: String(WAIT_MS),
        // A loaded 2-core machine can hold one decision past the default 500 ms.
        PDP_TIMEOUT_MS: '5000',
        IDEA_TOOL_LOG: toolLog,
      },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-host', version: '0.0.0' });
    const runs = async () =>
      (await readFile(toolLog, 'utf8').catch(() => ''))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as { tool: string; at: string });
    const call = async () => {
      const result = await client.callTool({ name: WRITE_TOOL, arguments: { text: 'note' } }, undefined, { timeout: WAIT_MS + 10_000 });
      return { isError: result.isError === true, text: (result.content as { text: string }[])[0]?.text ?? '' };
    };
    try {
      await client.connect(transport);
      // A tool on ask is listed: the model must be able to call it for anyone to approve it.
      expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(WRITE_TOOL);

      const first = call();
      // It waits for the answer: nothing ran while the request was pending (the run may follow the answer at once).
      const once = await answerWhenPending(agent, 'once', undefined, async () => {
        expect(await runs()).toEqual([]);
      });
      const result = await first;
      expect(result).toMatchObject({ isError: false, text: `${WRITE_TOOL} done` });
      const ran = await runs();
      expect(ran.map((run) => run.tool)).toEqual([WRITE_TOOL]);

      const second = call();
      const denied = await answerWhenPending(agent, 'deny', once.id);
      expect(denied.id).not.toBe(once.id); // a new request: "once" was used up
      const refused = await second;
      expect(refused.isError).toBe(true);
      expect(refused.text).toMatch(new RegExp(`${WRITE_TOOL}.*${agent}.*demo`));
      expect((await runs()).length).toBe(1);
    } finally {
      await client.close();
      await rm(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('OpenAI client: the call waits, "once" lets it run exactly once, the next call asks again', async () => {
    const agent = 'Main';
    await putOnAsk(agent);
    const model = await startWritingModel();
    const openai = new OpenAI({ apiKey: 'test', baseURL: `${model.url}/v1`, maxRetries: 0 });
    const invoked: number[] = [];
    const loop = () =>
      runAgentLoop({
        openai,
        model: 'fake-model',
        pdp: pdp.decider,
        project: 'demo',
        requester: agent,
        prompt: 'Take a note',
        approvalWaitMs: WAIT_MS,
        invoke: (name) => {
          invoked.push(performance.now());
          return `${name} done`;
        },
      });
    try {
      const first = loop();
      const once = await answerWhenPending(agent, 'once');
      expect(invoked).toEqual([]);
      expect((await first).answer).toBe(`tool said: ${WRITE_TOOL} done`);
      expect(invoked.length).toBe(1);

      const second = loop();
      const denied = await answerWhenPending(agent, 'deny', once.id);
      expect(denied.id).not.toBe(once.id);
      const refused = (await second).answer ?? '';
      expect(refused).toMatch(new RegExp(`tool said: .*${WRITE_TOOL}.*${agent}.*demo`));
      expect(invoked.length).toBe(1);
    } finally {
      await model.close();
    }
  }, 60_000);

  it('without an answer the call waits waitMs, then is refused with the service message; nothing runs', async () => {
    const agent = 'DevFrontend';
    await putOnAsk(agent);
    const model = await startWritingModel();
    const openai = new OpenAI({ apiKey: 'test', baseURL: `${model.url}/v1`, maxRetries: 0 });
    let invoked = 0;
    try {
      const started = performance.now();
      const result = await runAgentLoop({
        openai,
        model: 'fake-model',
        pdp: pdp.decider,
        project: 'demo',
        requester: agent,
        prompt: 'Take a note',
        approvalWaitMs: 400,
        invoke: () => (invoked += 1),
      });
      const elapsed = performance.now() - started;
      expect(invoked).toBe(0);
      expect(elapsed).toBeGreaterThanOrEqual(390);
      expect(result.answer).toMatch(/approval/i);
      const pending = await pdp.admin.listApprovals('demo', 'pending');
      expect(pending.filter((approval) => approval.requester === agent)).toHaveLength(1); // reused, not one per decision
    } finally {
      await model.close();
    }
  });
});

/** A Chat Completions endpoint that asks for one memory write, then answers with the tool's output. */
async function startWritingModel(): Promise<FakeServer> {
  return startFakeHttp((request, response, body) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      sendJson(response, 404, { error: { message: 'not found' } });
      return;
    }
    const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
    const toolMessage = messages.find((message) => message.role === 'tool');
    const message =
      toolMessage === undefined
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'call_write', type: 'function', function: { name: WRITE_TOOL, arguments: '{"text":"note"}' } }],
          }
        : { role: 'assistant', content: `tool said: ${String(toolMessage.content)}` };
    sendJson(response, 200, {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 0,
      model: 'fake-model',
      choices: [{ index: 0, finish_reason: toolMessage === undefined ? 'tool_calls' : 'stop', message, logprobs: null }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  });
}
