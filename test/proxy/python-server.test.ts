/**
 * `idea-mcp-proxy` in front of a server that is not TypeScript (a Python one, standard library
 * only), driven by the MCP SDK's own `Client` over stdio, decided by the real service: the list is
 * filtered, an allowed call reaches the server with its arguments, a refused call never does and
 * reads as the in-process guard's and the OpenAI guard's refusal, the host hears of a policy change,
 * and a service that stops answers `pdp_unavailable`.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { guardOpenAiToolCalls } from '../../client/openai.js';
import { DECISION_META_KEY } from '../../client/mcp.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { connectThroughProxy } from '../support/proxy-process.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

const CallsSchema = z.object({ calls: z.array(z.object({ name: z.string(), arguments: z.unknown() })) });
type Host = Awaited<ReturnType<typeof connectThroughProxy>>;
const receivedCalls = async (host: Host) => (await host.client.request({ method: 'fixture/calls' }, CallsSchema)).calls;
const textOf = (result: object) => ((result as { content?: { text: string }[] }).content ?? [])[0]?.text;

async function connect(agent = 'QA', extra: string[] = []) {
  const host = await connectThroughProxy(['--pdp', pdp.url, '--project', 'demo', '--agent', agent, '--timeout-ms', '3000', ...extra], {
    PDP_DECIDE_TOKEN: pdp.decideToken,
  });
  suite.onTestFinished(host.close);
  return host;
}

describe('idea-mcp-proxy around a Python MCP server, real SDK client over stdio, real service', () => {
  it('filters tools/list, runs an allowed call with its arguments, refuses another without the server seeing it', async () => {
    const host = await connect();
    expect(host.client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
    expect(host.client.getServerVersion()).toEqual({ name: 'python-fixture', version: '1.0.0' });
    expect((await host.client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);

    const read = await host.client.callTool({ name: 'idea_ticket_read', arguments: { issueRef: '#82', tags: ['a', 1] } });
    expect(read.isError).toBeUndefined();
    expect(textOf(read)).toBe('idea_ticket_read ran with {"issueRef": "#82", "tags": ["a", 1]}');

    const write = await host.client.callTool({ name: 'idea_memory_write', arguments: { text: 'secret' } });
    expect(write.isError).toBe(true);
    // The service adds where to grant it when it serves the panel.
    expect(textOf(write)).toMatch(/^Tool idea_memory_write is denied for agent QA in project demo \(policy: builtin-read-only\)\./);
    const meta = (write._meta as Record<string, { reason: string; decisionId: string }>)[DECISION_META_KEY];
    expect(meta?.reason).toBe('not_in_allowlist');
    expect(meta?.decisionId).toMatch(/\S/);
    expect(await receivedCalls(host)).toEqual([{ name: 'idea_ticket_read', arguments: { issueRef: '#82', tags: ['a', 1] } }]);
    expect(host.stderr()).not.toContain(pdp.decideToken);
  });

  it('refuses with the same text and decision as guardMcpServer and the OpenAI guard', async () => {
    const host = await connect();
    const call = { name: 'idea_ticket_update_carnet', arguments: { issueRef: '#9', text: 'x' } };
    const throughProxy = await host.client.callTool(call);
    const inProcess = await connectGuardedIdeaServer({ client: pdp.decider, project: 'demo', requester: 'QA' });
    const throughGuard = await inProcess.client.callTool(call);
    await inProcess.close();
    const openai = await guardOpenAiToolCalls(
      [{ id: 'c1', type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }],
      { client: pdp.decider, project: 'demo', requester: 'QA', invoke: () => 'ran' },
    );
    const reasonOf = (result: { _meta?: unknown }) => (result._meta as Record<string, { reason: string }>)[DECISION_META_KEY]?.reason;
    expect(throughProxy.isError).toBe(true);
    expect(throughGuard.isError).toBe(true);
    expect(textOf(throughProxy)).toBe(textOf(throughGuard));
    expect(openai.outputs[0]?.content).toBe(textOf(throughProxy));
    expect(reasonOf(throughProxy)).toBe('not_in_allowlist');
    expect(reasonOf(throughGuard)).toBe('not_in_allowlist');
    expect(openai.decisions[0]?.reason).toBe('not_in_allowlist');
    expect(await receivedCalls(host)).toEqual([]);
  });

  it('tells the host its list changed after an API write, and lists the new tool', async () => {
    const host = await connect('Tester');
    expect((await host.client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
    await pdp.admin.putAgent('demo', 'Tester', ['idea_ticket_read', 'idea_memory_write']);
    await waitFor(() => host.listChanged() >= 1, 'notifications/tools/list_changed');
    expect((await host.client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read', 'idea_memory_write']);
    const write = await host.client.callTool({ name: 'idea_memory_write', arguments: { text: 'now allowed' } });
    expect(textOf(write)).toBe('idea_memory_write ran with {"text": "now allowed"}');
  });

  it('refuses every call with pdp_unavailable while the service is stopped, and lists nothing', async () => {
    const host = await connect();
    await pdp.stopService();
    try {
      const read = await host.client.callTool({ name: 'idea_ticket_read', arguments: {} });
      expect(read.isError).toBe(true);
      expect(textOf(read)).toMatch(/^Tool idea_ticket_read \(agent QA, project demo\) denied: policy service unreachable \(/);
      expect((read._meta as Record<string, { reason: string }>)[DECISION_META_KEY]?.reason).toBe('pdp_unavailable');
      expect((await host.client.listTools()).tools).toEqual([]);
      expect(await receivedCalls(host)).toEqual([]);
    } finally {
      await pdp.startService();
    }
    expect(textOf(await host.client.callTool({ name: 'idea_ticket_read', arguments: {} }))).toBe('idea_ticket_read ran with {}');
  });

  it('with --no-filter lists every tool and declares what the server declared, yet still decides every call', async () => {
    const host = await connect('QA', ['--no-filter']);
    expect(host.client.getServerCapabilities()?.tools).toEqual({});
    expect((await host.client.listTools()).tools.map((tool) => tool.name)).toEqual([
      'idea_ticket_read',
      'idea_memory_write',
      'idea_ticket_update_carnet',
    ]);
    expect((await host.client.callTool({ name: 'idea_memory_write', arguments: {} })).isError).toBe(true);
    expect(await receivedCalls(host)).toEqual([]);
  });
});
