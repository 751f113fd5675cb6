/**
 * The guards' options as integrators use them: `project` as a function, the anonymous-requester
 * warning, `sendToolListChanged`, cancellation through the MCP request's signal, and the OpenAI
 * guard's bounded concurrency with its decisions.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerResponse } from 'node:http';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { GUARD_WARNING_TYPE, PdpClient } from '../../client/index.js';
import { guardMcpServer } from '../../client/mcp.js';
import { guardOpenAiToolCalls, type ChatCompletionToolCall } from '../../client/openai.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { cannedDecision, sendJson, startFakeHttp } from './fake-pdp.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { startPolicyTablePdp } from './policy-table-pdp.js';
import { elapse, waitFor } from '../support/wait.js';

const table = { QA: [...READ_ONLY_DEFAULT], Main: [...READ_ONLY_DEFAULT, 'idea_memory_write'], mcp: [...READ_ONLY_DEFAULT] };
let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function setup() {
  const pdp = await startPolicyTablePdp(table);
  cleanups.push(pdp.close);
  const client = new PdpClient({ baseUrl: pdp.url, timeoutMs: 1000 });
  cleanups.push(() => client.close());
  return { pdp, client };
}

/** Records the warnings about the requester (the fake service has no /events: the follower warns about that too). */
function recordingLogger() {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const warn = (fields: Record<string, unknown>, message: string) => {
    if (message.includes('the requester')) warnings.push({ fields, message });
  };
  return { warnings, logger: { warn } };
}

const chat = (id: string, name: string, args = '{}'): ChatCompletionToolCall => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

describe('MCP guard options', () => {
  it('project may be a function of the request: each call is decided for the project it names', async () => {
    const { pdp, client } = await setup();
    let current = 'alpha';
    const mcp = await connectGuardedIdeaServer({ client, project: () => current, requester: 'QA' });
    cleanups.push(mcp.close);
    await mcp.call('idea_ticket_read');
    current = 'beta';
    await mcp.call('idea_ticket_read');
    expect(pdp.requests.map((request) => (request.body as { project: string }).project)).toEqual(['alpha', 'beta']);
  });

  it('a project function that throws denies without asking and without running', async () => {
    const { pdp, client } = await setup();
    const mcp = await connectGuardedIdeaServer({
      client,
      project: async () => Promise.reject(new Error('no project for this session')),
      requester: 'QA',
    });
    cleanups.push(mcp.close);
    const result = await mcp.call('idea_ticket_read');
    expect(result).toEqual({
      isError: true,
      text: 'Tool idea_ticket_read (agent QA, project (unresolved)) denied: the project of the session could not be determined (no project for this session)',
    });
    expect(pdp.requests).toEqual([]);
    expect(mcp.recorder.runs).toEqual([]);
  });

  it('an anonymous requester is logged once as a warning, an invalid one once too', async () => {
    const { client } = await setup();
    const { warnings, logger } = recordingLogger();
    let requester = 'mcp';
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: () => requester, logger, filterToolsList: true });
    cleanups.push(mcp.close);
    await mcp.call('idea_ticket_read');
    await mcp.call('idea_memory_write');
    await mcp.client.listTools();
    requester = '';
    await mcp.call('idea_ticket_read');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.message).toMatch(/anonymous .*agent id of this session.*stdio launchers may not pass environment variables/);
    expect(warnings[0]?.fields).toEqual({ project: 'demo', requester: 'mcp' });
    requester = 'QA:x';
    await mcp.call('idea_ticket_read');
    await mcp.call('idea_ticket_read');
    requester = 'QA';
    await mcp.call('idea_ticket_read');
    expect(warnings.map((warning) => warning.message)).toHaveLength(2);
    expect(warnings[1]?.message).toMatch(/not a valid agent id.*invalid_requester/);
  });

  it('without a logger, the warnings are process warnings (stderr), not silence', async () => {
    const { client } = await setup();
    const seen: Error[] = [];
    const collect = (warning: Error) => {
      if (warning.name === GUARD_WARNING_TYPE) seen.push(warning);
    };
    process.on('warning', collect);
    cleanups.push(() => {
      process.off('warning', collect);
      return Promise.resolve();
    });
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: '' });
    cleanups.push(mcp.close);
    await mcp.call('idea_ticket_read');
    await mcp.call('idea_ticket_read');
    // Node emits the event on the next tick.
    await waitFor(() => seen.length > 0, 'a process warning');
    expect(seen).toHaveLength(1);
    expect(seen[0]?.message).toMatch(/^the requester is anonymous .*agent id of this session.* \{"project":"demo","requester":""\}$/);

    // The OpenAI guard too: an invocation that throws is a warning.
    await guardOpenAiToolCalls([chat('c1', 'idea_ticket_read')], {
      client,
      project: 'demo',
      requester: 'QA',
      invoke: () => {
        throw new Error('disk full');
      },
    });
    await waitFor(() => seen.length > 1, 'a second process warning');
    expect(seen[1]?.message).toMatch(/^tool invocation failed .*"tool":"idea_ticket_read".*disk full/);
  });

  it('sendToolListChanged tells the connected client its tool list changed, and is harmless unconnected', async () => {
    const { client } = await setup();
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'QA', filterToolsList: true });
    cleanups.push(mcp.close);
    let notified = 0;
    mcp.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      notified += 1;
    });
    const guard = guardMcpServer(mcp.server, { client, project: 'demo', requester: 'QA', filterToolsList: true });
    await guard.sendToolListChanged();
    await waitFor(() => notified > 0, 'list_changed', 2000);
    expect(notified).toBe(1);
    await mcp.close();
    await expect(guard.sendToolListChanged()).resolves.toBeUndefined();
  });

  it('a tools/call the host cancels frees its place in the client at once', async () => {
    // The service hangs the first request; with one connection, only a cancelled call that gives
    // its connection back lets the second call be decided before the first one's 5 s deadline.
    const hung: ServerResponse[] = [];
    const fake = await startFakeHttp((_r, response, body) => {
      if (hung.length === 0) hung.push(response);
      else sendJson(response, 200, cannedDecision(body as { project: string; requester: string; tool: string }, true));
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url, timeoutMs: 5000, connections: 1 });
    cleanups.push(() => client.close());
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'QA' });
    cleanups.push(mcp.close);
    const controller = new AbortController();
    const cancelled = mcp.client.callTool({ name: 'idea_ticket_read', arguments: {} }, undefined, { signal: controller.signal });
    await waitFor(() => hung.length > 0, 'the first request at the service', 10_000, 5);
    controller.abort();
    await expect(cancelled).rejects.toThrow();
    const started = performance.now();
    expect(await mcp.call('idea_ticket_list')).toEqual({ isError: false, text: 'idea_ticket_list done' });
    expect(performance.now() - started).toBeLessThan(2000);
    expect(mcp.recorder.runs.map((run) => run.tool)).toEqual(['idea_ticket_list']);
  });
});

describe('OpenAI guard options', () => {
  const slowInvoke = () => {
    let running = 0;
    const state = { most: 0 };
    const invoke = async (name: string) => {
      running += 1;
      state.most = Math.max(state.most, running);
      await elapse(300); // a tool that takes 300 ms (the scenario)
      running -= 1;
      return `${name} ok`;
    };
    return { invoke, state };
  };
  const calls = [
    chat('a', 'idea_ticket_read'),
    chat('b', 'idea_memory_write'),
    chat('c', 'idea_ticket_list'),
    chat('d', 'idea_sprint_list'),
  ];

  it('runs allowed calls with bounded concurrency, keeping the outputs in the calls order, and returns the decisions', async () => {
    const { client } = await setup();
    const { invoke, state } = slowInvoke();
    const started = performance.now();
    const { outputs, decisions } = await guardOpenAiToolCalls(calls, { client, project: 'demo', requester: 'QA', invoke, concurrency: 3 });
    const elapsed = performance.now() - started;
    expect(state.most).toBe(3);
    expect(elapsed).toBeLessThan(850); // three 300 ms calls at once, not one after the other
    expect(outputs.map((output) => output.tool_call_id)).toEqual(['a', 'b', 'c', 'd']);
    expect(outputs.map((output) => output.content)).toEqual([
      'idea_ticket_read ok',
      decisions[1]?.message,
      'idea_ticket_list ok',
      'idea_sprint_list ok',
    ]);
    expect(decisions.map((decision) => [decision.tool.name, decision.allow])).toEqual([
      ['idea_ticket_read', true],
      ['idea_memory_write', false],
      ['idea_ticket_list', true],
      ['idea_sprint_list', true],
    ]);
  });

  it('runs one call at a time by default', async () => {
    const { client } = await setup();
    const { invoke, state } = slowInvoke();
    const started = performance.now();
    await guardOpenAiToolCalls(calls, { client, project: 'demo', requester: 'QA', invoke });
    expect(state.most).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(890);
  });

  it('takes project and requester as functions; a bad concurrency is a programming error', async () => {
    const { pdp, client } = await setup();
    const { outputs } = await guardOpenAiToolCalls([chat('a', 'idea_memory_write')], {
      client,
      project: () => Promise.resolve('gamma'),
      requester: () => 'Main',
      invoke: () => 'written',
    });
    expect(outputs[0]?.content).toBe('written');
    expect((pdp.requests[0]?.body as { queries: unknown[] }).queries).toEqual([
      { project: 'gamma', requester: 'Main', tool: 'idea_memory_write', arguments: {} },
    ]);
    for (const concurrency of [0, -1, 1.5, Number.NaN]) {
      await expect(guardOpenAiToolCalls([], { client, project: 'demo', requester: 'QA', invoke: () => '', concurrency })).rejects.toThrow(
        RangeError,
      );
    }
  });
});
