/**
 * End to end with the real policy service: the real `openai` client talks to a local fake Chat
 * Completions endpoint that asks for tool calls; the guarded loop invokes only the allowed ones.
 * Then parity: the same calls through the MCP guard and the OpenAI guard get the same decisions
 * and the same refusal texts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import type { ClientDecision } from '../../client/index.js';
import { guardOpenAiToolCalls } from '../../client/openai.js';
import { runAgentLoop } from '../../examples/openai-invoker/agent-loop.js';
import { sendJson, startFakeHttp, type FakeServer } from './fake-pdp.js';
import { connectGuardedIdeaServer } from './mcp-harness.js';
import { startRealPdp, type RealPdp } from './real-pdp.js';

let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
});
afterAll(async () => {
  await pdp?.close();
});

const toolCall = (id: string, name: string, args: unknown) => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
});

/** A Chat Completions endpoint that asks for three tool calls, then answers with what it got back. */
async function startFakeModel(): Promise<FakeServer> {
  return startFakeHttp((request, response, body) => {
    if (request.method !== 'POST' || request.url !== '/v1/chat/completions') {
      return sendJson(response, 404, { error: { message: 'not found' } });
    }
    const messages = (body as { messages: { role: string; content: unknown }[] }).messages;
    const toolMessages = messages.filter((message) => message.role === 'tool');
    const message =
      toolMessages.length === 0
        ? {
            role: 'assistant',
            content: null,
            tool_calls: [
              toolCall('call_read', 'idea_ticket_read', { issueRef: '#82' }),
              toolCall('call_write', 'idea_memory_write', { text: 'note' }),
              toolCall('call_create', 'idea_ticket_create', { title: 'bug' }),
            ],
          }
        : { role: 'assistant', content: `got ${toolMessages.length} tool results` };
    sendJson(response, 200, {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 0,
      model: 'fake-model',
      choices: [{ index: 0, finish_reason: toolMessages.length === 0 ? 'tool_calls' : 'stop', message, logprobs: null }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    });
  });
}

describe('guarded OpenAI agent loop, real service', () => {
  it('invokes only the allowed tool calls and returns the refusals to the model', async () => {
    const model = await startFakeModel();
    try {
      const openai = new OpenAI({ apiKey: 'test', baseURL: `${model.url}/v1`, maxRetries: 0 });
      const invoked: string[] = [];
      const result = await runAgentLoop({
        openai,
        model: 'fake-model',
        pdp: pdp.decider,
        project: 'demo',
        requester: 'QA',
        prompt: 'Read ticket 82 and take notes',
        invoke: (name) => {
          invoked.push(name);
          return `${name} done`;
        },
      });
      expect(invoked).toEqual(['idea_ticket_read']);
      expect(result.answer).toBe('got 3 tool results');
      const secondRequest = model.requests[1]?.body as { messages: { role: string; tool_call_id?: string; content: string }[] };
      const toolMessages = secondRequest.messages.filter((message) => message.role === 'tool');
      expect(toolMessages.map((message) => message.tool_call_id)).toEqual(['call_read', 'call_write', 'call_create']);
      expect(toolMessages[0]?.content).toBe('idea_ticket_read done');
      expect(toolMessages[1]?.content).toMatch(/idea_memory_write.*QA.*demo/);
      expect(toolMessages[2]?.content).toMatch(/idea_ticket_create.*QA.*demo/);
    } finally {
      await model.close();
    }
  });
});

describe('parity of the two guards, real service', () => {
  const cases: { project: string; requester: string; tool: string; args: Record<string, unknown> }[] = [
    { project: 'demo', requester: 'QA', tool: 'idea_memory_write', args: { text: 'x' } },
    { project: 'demo', requester: 'QA', tool: 'idea_ticket_read', args: { issueRef: '#1' } },
    { project: 'demo', requester: 'QA', tool: 'idea_does_not_exist', args: {} },
    { project: 'demo', requester: 'mcp', tool: 'idea_ticket_create', args: {} },
    { project: 'demo', requester: 'DevFrontend', tool: 'idea_ticket_update_carnet', args: { issueRef: '#9' } },
    { project: 'demo', requester: 'ticket-assistant:demo:82', tool: 'idea_ticket_update', args: { issueRef: '#83' } },
    { project: 'demo', requester: 'ticket-assistant:other:82', tool: 'idea_ticket_read', args: {} },
    { project: 'ghost', requester: 'QA', tool: 'idea_ticket_read', args: {} },
  ];

  it('gives the same decision and the same refusal text for the same call', async () => {
    await pdp.admin.putEphemeral('demo', 'ticket-assistant:demo:82', {
      allowedTools: ['idea_ticket_update'],
      boundIssue: '#82',
    });
    const strip = (decision: ClientDecision | undefined) => {
      const { decisionId: _ignored, ...rest } = decision ?? ({} as ClientDecision);
      return rest;
    };
    const reasons: string[] = [];
    for (const call of cases) {
      let mcpDecision: ClientDecision | undefined;
      const mcp = await connectGuardedIdeaServer({
        client: pdp.decider,
        project: call.project,
        requester: call.requester,
        onDecision: (decision) => (mcpDecision = decision),
      });
      const mcpResult = await mcp.call(call.tool, call.args);
      await mcp.close();

      let openAiDecision: ClientDecision | undefined;
      const {
        outputs: [output],
      } = await guardOpenAiToolCalls([{ id: 'c', type: 'function', function: { name: call.tool, arguments: JSON.stringify(call.args) } }], {
        client: pdp.decider,
        project: call.project,
        requester: call.requester,
        invoke: (name) => `${name} done`,
        onDecision: (decision) => (openAiDecision = decision),
      });
      expect(strip(openAiDecision)).toEqual(strip(mcpDecision));
      expect(mcpResult.isError).toBe(!mcpDecision?.allow);
      // A refusal is the same text; an allowed call gets the identical "<tool> done" of both stubs.
      expect(output?.content).toBe(mcpResult.text);
      reasons.push(mcpDecision?.reason ?? 'none');
    }
    // The cases cover allows and every kind of denial the service gives.
    expect(reasons).toEqual([
      'not_in_allowlist',
      'allowed',
      'unknown_tool',
      'not_in_allowlist',
      'allowed',
      'issue_out_of_bounds',
      'requester_project_mismatch',
      'unknown_project',
    ]);
  });
});
