/**
 * The guards' `approval: { waitMs }` (docs/api.md#the-client-sdk, docs/api.md#approvals-and-temporary-grants) with the real service and the real MCP
 * SDK client in memory: a waiting call never holds a decision slot, a cancelled call stops waiting
 * and never runs, a wrong waitMs throws, tools on ask are listed, and approval events re-check the
 * lists without a spurious list_changed.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { PdpClient, PdpError } from '../../client/index.js';
import { guardOpenAiToolCalls } from '../../client/openai.js';
import { guardMcpServer } from '../../client/mcp.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { createIdeaToolsServer, ToolRunRecorder } from '../../examples/mcp-server/idea-tools.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { handlerReached } from '../support/app.js';
import { elapse, waitFor } from '../support/wait.js';

const WRITE_TOOL = 'idea_memory_write';
const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

async function onAsk(agent: string): Promise<void> {
  await pdp.admin.putAgent('demo', agent, [...READ_ONLY_DEFAULT], { askTools: [WRITE_TOOL] });
}

describe('guards waiting for an approval', () => {
  it('a waiting call holds no decision slot: a one-connection client keeps deciding at once', async () => {
    await onAsk('Waiter');
    const client = new PdpClient({ baseUrl: pdp.url, token: pdp.decideToken, timeoutMs: 2_000, connections: 1 });
    try {
      const polling = handlerReached((url) => url.includes('/approvals/') && url.includes('waitSeconds='), 'the long-poll');
      const waiting = guardOpenAiToolCalls([{ id: 'w', type: 'function', function: { name: WRITE_TOOL, arguments: '{}' } }], {
        client,
        project: 'demo',
        requester: 'Waiter',
        approval: { waitMs: 20_000 },
        invoke: () => 'ran',
      });
      await polling; // the long-poll is on the wire
      const started = performance.now();
      const other = await client.decide({ project: 'demo', requester: 'Waiter', tool: 'idea_ticket_read' });
      expect(other.allow).toBe(true);
      expect(performance.now() - started).toBeLessThan(1_500);
      const [request] = await pdp.admin.listApprovals('demo', 'pending');
      await pdp.admin.answerApproval('demo', request?.id ?? '', 'once');
      expect((await waiting).outputs[0]?.content).toBe('ran');
    } finally {
      await client.close();
    }
  });

  it('a cancelled MCP call stops waiting at once and its handler never runs', async () => {
    await onAsk('Canceller');
    const mcp = await connectGuardedIdeaServer({
      client: pdp.decider,
      project: 'demo',
      requester: 'Canceller',
      approval: { waitMs: 20_000 },
    });
    try {
      const abort = new AbortController();
      const started = performance.now();
      const call = mcp.client.callTool({ name: WRITE_TOOL, arguments: {} }, undefined, { signal: abort.signal });
      await waitFor(async () => (await pdp.admin.listApprovals('demo', 'pending')).some((a) => a.requester === 'Canceller'), 'the request');
      abort.abort();
      await expect(call).rejects.toThrow();
      expect(performance.now() - started).toBeLessThan(10_000);
      // The answer that comes after the cancel finds nobody waiting: nothing runs.
      const [request] = (await pdp.admin.listApprovals('demo', 'pending')).filter((a) => a.requester === 'Canceller');
      await pdp.admin.answerApproval('demo', request?.id ?? '', 'once');
      await elapse(300); // a window in which the handler must not run
      expect(mcp.recorder.runs).toEqual([]);
    } finally {
      await mcp.close();
    }
  });

  it('an abandoned OpenAI turn stops waiting at once and invokes nothing', async () => {
    await onAsk('Quitter');
    const abort = new AbortController();
    let invoked = 0;
    const turn = guardOpenAiToolCalls([{ id: 'q', type: 'function', function: { name: WRITE_TOOL, arguments: '{}' } }], {
      client: pdp.decider,
      project: 'demo',
      requester: 'Quitter',
      approval: { waitMs: 20_000 },
      signal: abort.signal,
      invoke: () => (invoked += 1),
    });
    await waitFor(async () => (await pdp.admin.listApprovals('demo', 'pending')).some((a) => a.requester === 'Quitter'), 'the request');
    const started = performance.now();
    abort.abort();
    const { decisions } = await turn;
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(decisions[0]).toMatchObject({ allow: false });
    expect(invoked).toBe(0);
  });

  it('throws at once for a waitMs that is not a number of milliseconds', async () => {
    for (const waitMs of [-1, Number.NaN, Infinity, '100' as unknown as number]) {
      expect(() =>
        guardMcpServer(createIdeaToolsServer(new ToolRunRecorder()), {
          client: pdp.decider,
          project: 'demo',
          requester: 'QA',
          approval: { waitMs },
        }),
      ).toThrow(RangeError);
      await expect(
        guardOpenAiToolCalls([], { client: pdp.decider, project: 'demo', requester: 'QA', approval: { waitMs }, invoke: () => '' }),
      ).rejects.toThrow(RangeError);
    }
  });
});

describe('tools/list with tools on ask', () => {
  it('lists the tools on ask, and re-checks the list on approval events without a spurious list_changed', async () => {
    await onAsk('Lister');
    let lookups = 0;
    const client = new Proxy(pdp.decider, {
      get(target, property, receiver) {
        if (property === 'effective') {
          return (...args: Parameters<PdpClient['effective']>) => {
            lookups += 1;
            return target.effective(...args);
          };
        }
        const value: unknown = Reflect.get(target, property, receiver);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const following = handlerReached((url) => url.startsWith('/events'), 'the guard following the events');
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'Lister', filterToolsList: true });
    try {
      let changed = 0;
      mcp.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed += 1;
      });
      const listed = (await mcp.client.listTools()).tools.map((tool) => tool.name);
      expect(listed.sort()).toEqual([...READ_ONLY_DEFAULT, WRITE_TOOL].sort());
      await following; // the events stream is open
      const before = lookups;
      const decision = await pdp.decider.decide({ project: 'demo', requester: 'Lister', tool: WRITE_TOOL });
      await pdp.admin.answerApproval('demo', decision.approval?.id ?? '', 'once');
      await waitFor(() => lookups > before, 'a lookup after the approval event');
      await elapse(300); // a window in which no list_changed may come
      expect(changed).toBe(0); // the tool was listed already
    } finally {
      await mcp.close();
    }
  });
});

describe('PdpClient approvals and grants, real service', () => {
  it('lists, long-polls and answers approvals; creates, lists and revokes grants; typed errors', async () => {
    await onAsk('Admin1');
    const decision = await pdp.decider.decide({ project: 'demo', requester: 'Admin1', tool: WRITE_TOOL, arguments: { issueRef: '#7' } });
    const id = decision.approval?.id ?? '';
    const pending = await pdp.decider.listApprovals('demo', 'pending');
    expect(pending.find((approval) => approval.id === id)).toMatchObject({ requester: 'Admin1', tool: WRITE_TOOL, issueRef: '#7' });

    const started = performance.now();
    const polling = handlerReached((url) => url.endsWith(`/approvals/${id}?waitSeconds=10`), 'the long-poll');
    const polled = pdp.decider.getApproval('demo', id, { waitSeconds: 10 });
    await polling;
    const answered = await pdp.admin.answerApproval('demo', id, 'for', 120);
    expect(answered.grant).toMatchObject({ requester: 'Admin1', tools: [WRITE_TOOL] });
    expect(await polled).toMatchObject({ id, status: 'approved', answer: 'for' });
    expect(performance.now() - started).toBeLessThan(5_000);

    const closed = await pdp.admin.answerApproval('demo', id, 'once').catch((error: unknown) => error);
    expect(closed).toBeInstanceOf(PdpError);
    expect(closed).toMatchObject({ code: 'approval_closed', status: 409 });
    // The decide token can read approvals but never answer them.
    expect(await pdp.decider.answerApproval('demo', id, 'once').catch((error: unknown) => error)).toMatchObject({
      code: 'unauthorized',
      status: 401,
    });
    await expect(pdp.decider.getApproval('demo', id, { waitSeconds: 61 })).rejects.toThrow(RangeError);

    const grant = await pdp.admin.createGrant('demo', { requester: 'Admin1', tools: ['idea_ticket_create'], ttlSeconds: 60 });
    expect((await pdp.decider.listGrants('demo')).map((item) => item.id)).toContain(grant.id);
    expect((await pdp.decider.decide({ project: 'demo', requester: 'Admin1', tool: 'idea_ticket_create' })).source).toBe('grant');
    expect((await pdp.admin.revokeGrant('demo', grant.id)).id).toBe(grant.id);
    expect((await pdp.decider.decide({ project: 'demo', requester: 'Admin1', tool: 'idea_ticket_create' })).allow).toBe(false);
    expect(await pdp.admin.revokeGrant('demo', grant.id).catch((error: unknown) => error)).toMatchObject({
      code: 'not_found',
      status: 404,
    });
    expect(
      await pdp.admin.createGrant('demo', { requester: 'Admin1', tools: ['idea_nope'], ttlSeconds: 60 }).catch((e: unknown) => e),
    ).toMatchObject({
      code: 'invalid_tools',
      status: 400,
    });
  });
});
