/** The OpenAI guard: one batch round trip, only allowed calls invoked, one output per call in order. */
import { afterEach, describe, expect, it } from 'vitest';
import { PdpClient } from '../../client/index.js';
import { guardOpenAiToolCalls, type ChatCompletionToolCall, type ResponsesFunctionCall } from '../../client/openai.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { startPolicyTablePdp } from './policy-table-pdp.js';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function setup() {
  const pdp = await startPolicyTablePdp({ QA: [...READ_ONLY_DEFAULT] });
  cleanups.push(pdp.close);
  const client = new PdpClient({ baseUrl: pdp.url, timeoutMs: 1000 });
  cleanups.push(() => client.close());
  const invoked: { name: string; args: Record<string, unknown> }[] = [];
  const invoke = (name: string, args: Record<string, unknown>) => {
    invoked.push({ name, args });
    return `${name} ok`;
  };
  return { pdp, client, invoked, invoke };
}

const chat = (id: string, name: string, args: string): ChatCompletionToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

describe('guardOpenAiToolCalls', () => {
  it('decides Chat Completions calls in one round trip and invokes only the allowed ones', async () => {
    const { pdp, client, invoked, invoke } = await setup();
    const { outputs } = await guardOpenAiToolCalls(
      [
        chat('c1', 'idea_ticket_read', '{"issueRef":"#82"}'),
        chat('c2', 'idea_memory_write', '{"text":"hi"}'),
        chat('c3', 'idea_ticket_list', 'not json'),
        chat('c4', 'idea_ticket_list', '[1,2]'),
        chat('c5', 'idea_delete_everything', '{}'),
        chat('c6', 'idea_sprint_list', '{}'),
      ],
      { client, project: 'demo', requester: 'QA', invoke },
    );
    expect(pdp.requests.map((request) => request.url)).toEqual(['/decide/batch']);
    expect((pdp.requests[0]?.body as { queries: unknown[] }).queries).toEqual([
      { project: 'demo', requester: 'QA', tool: 'idea_ticket_read', arguments: { issueRef: '#82' } },
      { project: 'demo', requester: 'QA', tool: 'idea_memory_write', arguments: { text: 'hi' } },
      { project: 'demo', requester: 'QA', tool: 'idea_delete_everything', arguments: {} },
      { project: 'demo', requester: 'QA', tool: 'idea_sprint_list', arguments: {} },
    ]);
    expect(invoked).toEqual([
      { name: 'idea_ticket_read', args: { issueRef: '#82' } },
      { name: 'idea_sprint_list', args: {} },
    ]);
    expect(outputs).toEqual([
      { role: 'tool', tool_call_id: 'c1', content: 'idea_ticket_read ok' },
      {
        role: 'tool',
        tool_call_id: 'c2',
        content: 'Tool idea_memory_write is denied for agent QA in project demo (policy: agent-override).',
      },
      {
        role: 'tool',
        tool_call_id: 'c3',
        content: 'Tool idea_ticket_list (agent QA, project demo) denied: the arguments are not valid JSON',
      },
      {
        role: 'tool',
        tool_call_id: 'c4',
        content: 'Tool idea_ticket_list (agent QA, project demo) denied: the arguments are not a JSON object',
      },
      {
        role: 'tool',
        tool_call_id: 'c5',
        content: 'Tool idea_delete_everything is denied for agent QA in project demo (policy: agent-override).',
      },
      { role: 'tool', tool_call_id: 'c6', content: 'idea_sprint_list ok' },
    ]);
  });

  it('answers Responses API function_call items with function_call_output items', async () => {
    const { client, invoked, invoke } = await setup();
    const items: ResponsesFunctionCall[] = [
      { type: 'function_call', call_id: 'r1', name: 'idea_ticket_create', arguments: '{}', id: 'fc_1', status: 'completed' },
      { type: 'function_call', call_id: 'r2', name: 'idea_list_agents', arguments: '{}' },
    ];
    const { outputs } = await guardOpenAiToolCalls(items, { client, project: 'demo', requester: 'QA', invoke });
    expect(outputs).toEqual([
      {
        type: 'function_call_output',
        call_id: 'r1',
        output: 'Tool idea_ticket_create is denied for agent QA in project demo (policy: agent-override).',
      },
      { type: 'function_call_output', call_id: 'r2', output: 'idea_list_agents ok' },
    ]);
    expect(invoked.map((call) => call.name)).toEqual(['idea_list_agents']);
  });

  it('a throwing invoke gives an error output for that call only; non-string results are JSON', async () => {
    const { client } = await setup();
    const { outputs } = await guardOpenAiToolCalls([chat('c1', 'idea_ticket_read', '{}'), chat('c2', 'idea_ticket_list', '{}')], {
      client,
      project: 'demo',
      requester: 'QA',
      invoke: (name) => {
        if (name === 'idea_ticket_read') throw new Error('ticket store offline');
        return { tickets: [82] };
      },
    });
    expect(outputs.map((output) => output.content)).toEqual(['Tool idea_ticket_read failed: ticket store offline', '{"tickets":[82]}']);
  });

  it('chunks more than 100 calls into batches of 100, keeping the order', async () => {
    const { pdp, client, invoked, invoke } = await setup();
    const calls = Array.from({ length: 150 }, (_v, index) =>
      chat(`c${index}`, index % 2 === 0 ? 'idea_ticket_read' : 'idea_memory_write', `{"n":${index}}`),
    );
    const { outputs } = await guardOpenAiToolCalls(calls, { client, project: 'demo', requester: 'QA', invoke });
    expect(pdp.requests.map((request) => (request.body as { queries: unknown[] }).queries.length).sort()).toEqual([100, 50]);
    expect(outputs.map((output) => output.tool_call_id)).toEqual(calls.map((call) => call.id));
    expect(invoked.map((call) => call.args.n)).toEqual(calls.filter((_c, index) => index % 2 === 0).map((_c, index) => index * 2));
  });

  it('an unresolvable requester refuses everything without asking', async () => {
    const { pdp, client, invoked, invoke } = await setup();
    const { outputs } = await guardOpenAiToolCalls([chat('c1', 'idea_ticket_read', '{}')], {
      client,
      project: 'demo',
      requester: () => Promise.reject(new Error('no agent bound to this loop')),
      invoke,
    });
    expect(outputs[0]?.content).toBe(
      'Tool idea_ticket_read (unidentified requester, project demo) denied: the requester of the session could not be determined (no agent bound to this loop)',
    );
    expect(invoked).toEqual([]);
    expect(pdp.requests).toEqual([]);
  });

  it('decides a Chat Completions call that comes without `type`, and refuses a call of no known shape without throwing', async () => {
    const { pdp, client, invoked, invoke } = await setup();
    // Some OpenAI-compatible servers leave out `type: "function"`; a call with neither function nor custom is malformed.
    const untyped = { id: 'u1', function: { name: 'idea_ticket_read', arguments: '{}' } } as unknown as ChatCompletionToolCall;
    const shapeless = { id: 'u2', name: 'idea_ticket_list' } as unknown as ChatCompletionToolCall;
    const objectArguments = {
      id: 'u4',
      function: { name: 'idea_ticket_read', arguments: { issueRef: '#82' } },
    } as unknown as ChatCompletionToolCall;
    const { outputs } = await guardOpenAiToolCalls([untyped, shapeless, chat('u3', 'idea_memory_write', '{}'), objectArguments], {
      client,
      project: 'demo',
      requester: 'QA',
      invoke,
    });
    expect(outputs).toEqual([
      { role: 'tool', tool_call_id: 'u1', content: 'idea_ticket_read ok' },
      {
        role: 'tool',
        tool_call_id: 'u2',
        content: 'Tool idea_ticket_list (agent QA, project demo) denied: the tool call is neither a function call nor a custom tool call',
      },
      {
        role: 'tool',
        tool_call_id: 'u3',
        content: 'Tool idea_memory_write is denied for agent QA in project demo (policy: agent-override).',
      },
      {
        role: 'tool',
        tool_call_id: 'u4',
        content: 'Tool idea_ticket_read (agent QA, project demo) denied: the arguments are not a JSON string',
      },
    ]);
    expect(invoked.map((call) => call.name)).toEqual(['idea_ticket_read']);
    expect((pdp.requests[0]?.body as { queries: { tool: string }[] }).queries.map((one) => one.tool)).toEqual([
      'idea_ticket_read',
      'idea_memory_write',
    ]);
  });

  it('refuses free-text custom tool calls and asks nothing for an empty turn', async () => {
    const { pdp, client, invoked, invoke } = await setup();
    expect(await guardOpenAiToolCalls([], { client, project: 'demo', requester: 'QA', invoke })).toEqual({ outputs: [], decisions: [] });
    const { outputs } = await guardOpenAiToolCalls([{ id: 'x1', type: 'custom', custom: { name: 'idea_ticket_read', input: '#82' } }], {
      client,
      project: 'demo',
      requester: 'QA',
      invoke,
    });
    expect(outputs[0]?.content).toBe(
      'Tool idea_ticket_read (agent QA, project demo) denied: free-text (custom) tool calls are not supported',
    );
    expect(invoked).toEqual([]);
    expect(pdp.requests).toEqual([]);
  });
});
