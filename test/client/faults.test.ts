/**
 * Fail-closed: whatever goes wrong between the SDK and the service, the call is denied within
 * about the timeout and the tool never runs, through both guards.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PdpClient, type ClientDecision } from '../../client/index.js';
import { guardOpenAiToolCalls } from '../../client/openai.js';
import { cannedDecision, closedPortUrl, sendJson, startBlackHole, startFakeHttp, type FakeServer } from './fake-pdp.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { waitFor } from '../support/wait.js';

const TIMEOUT_MS = 250;
const MARGIN_MS = 750; // two busy cores shared with other suites: generous, and still far from the 10 s backstops
const query = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' } as const;

const queriesOf = (body: unknown) => (body as { queries: (typeof query)[] }).queries;

/** A service that allows every query, but answers about a changed query (another tool, another requester). */
const allowAbout = (change: { tool?: string; requester?: string }) =>
  startFakeHttp((_r, response, body) => {
    const other = (one: { project: string; requester: string; tool: string }) => cannedDecision({ ...one, ...change }, true);
    const isBatch = (body as { queries?: unknown }).queries !== undefined;
    sendJson(response, 200, isBatch ? { decisions: queriesOf(body).map(other) } : other(body as typeof query));
  });

/** Each fault: how to start it. `null` answer = nothing listens. */
const faults: Record<string, { start: () => Promise<FakeServer | string>; cause: RegExp }> = {
  'service down (closed port)': { start: closedPortUrl, cause: /connection refused/ },
  'accepts the connection, never answers': { start: startBlackHole, cause: /timeout after 250 ms/ },
  'reads the request, never answers': { start: () => startFakeHttp(() => undefined), cause: /timeout after 250 ms/ },
  'answers after the timeout': {
    start: () =>
      startFakeHttp((_request, response, body) => {
        const isBatch = (body as { queries?: unknown }).queries !== undefined;
        const answer = isBatch
          ? { decisions: queriesOf(body).map((one) => cannedDecision(one, true)) }
          : cannedDecision(body as typeof query, true);
        setTimeout(() => {
          sendJson(response, 200, answer);
        }, TIMEOUT_MS + 400).unref();
      }),
    cause: /timeout after 250 ms/,
  },
  'sends headers, then the body too slowly': {
    start: () =>
      startFakeHttp((_request, response, body) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"allow": true, ');
        const rest = JSON.stringify(cannedDecision(body as typeof query, true)).slice(1);
        setTimeout(() => response.end(rest), TIMEOUT_MS + 400).unref();
      }),
    cause: /timeout after 250 ms/,
  },
  'HTTP 500': {
    start: () =>
      startFakeHttp((_r, response) => {
        sendJson(response, 500, { error: { code: 'internal_error', message: 'boom' } });
      }),
    cause: /HTTP 500: internal_error/,
  },
  'HTML body': {
    start: () =>
      startFakeHttp((_r, response) => {
        response.writeHead(200, { 'content-type': 'text/html' });
        response.end('<html><body>Welcome to nginx</body></html>');
      }),
    cause: /invalid JSON/,
  },
  '{"allow": true} without the other fields': {
    start: () =>
      startFakeHttp((_r, response, body) => {
        const isBatch = (body as { queries?: unknown }).queries !== undefined;
        sendJson(response, 200, isBatch ? { decisions: queriesOf(body).map(() => ({ allow: true })) } : { allow: true });
      }),
    cause: /invalid answer/,
  },
  'an allow about another tool': { start: () => allowAbout({ tool: 'idea_ticket_read' }), cause: /not the call asked about/ },
  'an allow about another requester': {
    start: () => allowAbout({ requester: 'Main' }),
    cause: /for requester "Main" in project demo, not the call asked about/,
  },
};

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function clientFor(fault: (typeof faults)[string]): Promise<PdpClient> {
  const started = await fault.start();
  const url = typeof started === 'string' ? started : started.url;
  if (typeof started !== 'string') cleanups.push(() => started.close());
  const client = new PdpClient({ baseUrl: url, timeoutMs: TIMEOUT_MS });
  cleanups.push(() => client.close());
  return client;
}

function expectUnavailable(decision: ClientDecision | undefined, cause: RegExp, tool: string = query.tool): void {
  expect(decision?.allow).toBe(false);
  expect(decision?.reason).toBe('pdp_unavailable');
  expect(decision?.message).toContain(`Tool ${tool} (agent QA, project demo) denied: policy service unreachable (`);
  expect(decision?.message).toMatch(cause);
}

describe.each(Object.entries(faults))('fault: %s', (_name, fault) => {
  it('decide() denies within the timeout', async () => {
    const client = await clientFor(fault);
    const started = performance.now();
    const decision = await client.decide(query);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expectUnavailable(decision, fault.cause);
  });

  it('decideBatch() denies every query within the timeout', async () => {
    const client = await clientFor(fault);
    const started = performance.now();
    const decisions = await client.decideBatch([query, { ...query, tool: 'idea_ticket_create' }]);
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect(decisions).toHaveLength(2);
    expectUnavailable(decisions[0], fault.cause);
    expectUnavailable(decisions[1], fault.cause, 'idea_ticket_create');
  });

  it('neither guard runs the tool, and both give the same text', async () => {
    const client = await clientFor(fault);
    const invoked: string[] = [];
    const {
      outputs: [output],
    } = await guardOpenAiToolCalls([{ id: 'call_1', type: 'function', function: { name: query.tool, arguments: '{"text":"x"}' } }], {
      client,
      project: 'demo',
      requester: 'QA',
      invoke: (name) => invoked.push(name),
    });
    expect(invoked).toEqual([]);
    const mcp = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'QA' });
    cleanups.push(mcp.close);
    const started = performance.now();
    const result = await mcp.call(query.tool, { text: 'x' });
    expect(performance.now() - started).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect(mcp.recorder.runs).toEqual([]);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(fault.cause);
    expect(output?.content).toBe(result.text);
  });
});

describe('batch answers that cannot be trusted', () => {
  it('a batch answer with the wrong count denies every query', async () => {
    const fake = await startFakeHttp((_r, response, body) => {
      sendJson(response, 200, { decisions: [cannedDecision(queriesOf(body)[0] as typeof query, true)] });
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS });
    cleanups.push(() => client.close());
    const decisions = await client.decideBatch([query, { ...query, tool: 'idea_ticket_read' }]);
    expect(decisions.map((decision) => decision.allow)).toEqual([false, false]);
    expectUnavailable(decisions[0], /1 decisions for 2 queries/);
  });

  it('decide() denies, never throws, for a query a JavaScript caller got wrong', async () => {
    const client = new PdpClient({ baseUrl: await closedPortUrl(), timeoutMs: TIMEOUT_MS });
    cleanups.push(() => client.close());
    const malformed = { project: 'demo', tool: query.tool } as unknown as typeof query; // no requester
    const decision = await client.decide(malformed);
    expect(decision.allow).toBe(false);
    expect(decision.reason).toBe('pdp_unavailable');
    expect(decision.message).toContain(`Tool ${query.tool} (unidentified requester, project demo) denied: policy service unreachable (`);
    expect(decision.requester).toEqual({ id: '', kind: 'anonymous' });
    const unprintable = { project: Object.create(null) as object, requester: 'QA', tool: query.tool } as unknown as typeof query;
    expect(await client.decide(unprintable)).toMatchObject({ allow: false, reason: 'pdp_unavailable', project: '(unprintable)' });
    const [batched] = await client.decideBatch([malformed]);
    expect(batched?.allow).toBe(false);
  });

  it('an allow with a reason other than "allowed" is not trusted', async () => {
    const fake = await startFakeHttp((_r, response, body) => {
      sendJson(response, 200, { ...cannedDecision(body as typeof query, true), reason: 'policy_invalid' });
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS });
    cleanups.push(() => client.close());
    expectUnavailable(await client.decide(query), /allows with reason policy_invalid/);
  });

  it('a timed-out request is torn down, not left hanging on its socket', async () => {
    let closed = 0;
    const fake = await startFakeHttp((_r, response) => response.on('close', () => (closed += 1)));
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS });
    cleanups.push(() => client.close());
    expectUnavailable(await client.decide(query), /timeout after 250 ms/);
    await waitFor(() => closed > 0, 'the request torn down', 2000);
    expect(closed).toBe(1);
  });

  it('a socket the service drops is retried once for a decision, never for a write', async () => {
    let seen = 0;
    const fake = await startFakeHttp((request, response, body) => {
      seen += 1;
      if (seen % 2 === 1) {
        request.socket.destroy(); // every first attempt dies mid-request
        return;
      }
      if (request.method === 'POST') {
        sendJson(response, 200, cannedDecision(body as typeof query, true));
        return;
      }
      sendJson(response, 500, { error: { code: 'internal_error', message: 'unexpected' } });
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS });
    cleanups.push(() => client.close());
    expect((await client.decide(query)).allow).toBe(true);
    expect(seen).toBe(2);
    const write = await client.putAgent('demo', 'QA', []).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(write).toMatchObject({ code: 'pdp_unavailable' });
    expect(seen).toBe(3);
  });

  it('a closed client denies instead of throwing', async () => {
    const fake = await startFakeHttp((_r, response, body) => {
      sendJson(response, 200, cannedDecision(body as typeof query, true));
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS });
    expect((await client.decide(query)).allow).toBe(true);
    await client.close();
    expectUnavailable(await client.decide(query), /closed/);
  });
});
