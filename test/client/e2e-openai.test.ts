/**
 * End to end with the real policy service: the real `openai` client talks to a local fake Chat
 * Completions endpoint that asks for tool calls; the guarded loop invokes only the allowed ones.
 * (Parity of the two guards: guard-parity.test.ts.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import { runAgentLoop } from '../../examples/openai-invoker/agent-loop.js';
import { sendJson, startFakeHttp, type FakeServer } from './fake-pdp.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
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
      sendJson(response, 404, { error: { message: 'not found' } });
      return;
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
