/**
 * The client's deadline is hard: a decision answer larger than 64 KiB is refused
 * before it is parsed, and an answer counts only if it was complete, parsed and checked before the
 * deadline. A service that sends a valid 15 MB allow, slowly or at once, gets a denial on time.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ServerResponse } from 'node:http';
import { MAX_DECISION_BYTES, PdpClient } from '../../client/index.js';
import { cannedDecision, sendJson, startFakeHttp, type FakeServer } from './fake-pdp.js';

const TIMEOUT_MS = 250;
// Two busy cores shared with other suites, and the fake service writes its 15 MB in this same
// process, which the client's clock sees too.
const MARGIN_MS = 1500;
const query = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' } as const;

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function serve(handler: Parameters<typeof startFakeHttp>[0]): Promise<{ fake: FakeServer; client: PdpClient }> {
  const fake = await startFakeHttp(handler);
  cleanups.push(fake.close);
  const client = new PdpClient({ baseUrl: fake.url, timeoutMs: TIMEOUT_MS });
  cleanups.push(() => client.close());
  return { fake, client };
}

/** A schema-valid allow for `body` whose message makes the JSON `bytes` long. */
function paddedAllow(body: unknown, bytes: number): string {
  const decision = cannedDecision(body as typeof query, true);
  const base = JSON.stringify({ ...decision, message: '' }).length;
  return JSON.stringify({ ...decision, message: 'a'.repeat(Math.max(0, bytes - base)) });
}

/** Writes `text` in chunks of `chunkBytes` every `everyMs`, without a content-length. */
function trickle(response: ServerResponse, text: string, chunkBytes: number, everyMs: number): void {
  response.writeHead(200, { 'content-type': 'application/json' });
  let offset = 0;
  const timer = setInterval(() => {
    if (response.destroyed) {
      clearInterval(timer);
      return;
    }
    response.write(text.slice(offset, offset + chunkBytes));
    offset += chunkBytes;
    if (offset >= text.length) {
      clearInterval(timer);
      response.end();
    }
  }, everyMs);
  timer.unref();
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

describe('a hard deadline on decision answers', () => {
  it('a valid 15 MB allow sent slowly: denied on time, without reading past 64 KiB', async () => {
    const huge = paddedAllow(query, 15 * 1024 * 1024); // built before the clock starts: the service's cost is not the client's
    const { client } = await serve((_r, response) => {
      trickle(response, huge, 256 * 1024, 10);
    });
    const { value, ms } = await timed(() => client.decide(query));
    expect(ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect(value).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
    expect(value.message).toMatch(/policy service unreachable \((answer larger than 64 KiB|timeout after 250 ms)\)$/);
  });

  it('a valid 15 MB allow sent at once with its length: refused from the header', async () => {
    const text = Buffer.from(paddedAllow(query, 15 * 1024 * 1024));
    const { client } = await serve((_r, response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    });
    const { value, ms } = await timed(() => client.decide(query));
    expect(ms).toBeLessThan(TIMEOUT_MS + MARGIN_MS);
    expect(value.allow).toBe(false);
    expect(value.message).toMatch(/policy service unreachable \(answer larger than 64 KiB\)$/);
  });

  it('a 70 KiB allow streamed quickly without a length is cut at 64 KiB', async () => {
    const { client } = await serve((_r, response, body) => {
      trickle(response, paddedAllow(body, 70 * 1024), 8 * 1024, 1);
    });
    const decision = await client.decide(query);
    expect(decision.allow).toBe(false);
    expect(decision.message).toMatch(/answer larger than 64 KiB/);
  });

  it('an allow just under the cap is used, so the cap is not what denies the others', async () => {
    const { client } = await serve((_r, response, body) => {
      const text = paddedAllow(body, MAX_DECISION_BYTES - 1024);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    });
    expect((await client.decide(query)).allow).toBe(true);
  });

  it('an allow whose last bytes arrive after the deadline is denied', async () => {
    const { client } = await serve((_r, response, body) => {
      const text = paddedAllow(body, 2048);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(text.slice(0, -1));
      setTimeout(() => response.end(text.slice(-1)), TIMEOUT_MS + 100).unref();
    });
    const decision = await client.decide(query);
    expect(decision).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
    expect(decision.message).toMatch(/timeout after 250 ms/);
  });

  it('an allow completed after the deadline, before the timer could run, is denied', async () => {
    // The clock jumps past the deadline while the answer is on its way: what a busy event loop
    // (a long parse, a GC pause) does; the timer has not fired, only the final check can catch it.
    const realNow = performance.now.bind(performance);
    let offset = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => realNow() + offset);
    const { client } = await serve((_r, response, body) => {
      offset = TIMEOUT_MS + 1;
      sendJson(response, 200, cannedDecision(body as typeof query, true));
    });
    const decision = await client.decide(query);
    expect(decision).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
    expect(decision.message).toMatch(/policy service unreachable \(timeout after 250 ms \(the answer came too late\)\)$/);
    offset = 0;
    const batch = await client.decideBatch([query]);
    expect(batch[0]?.allow).toBe(false);
  });

  it('a batch answer gets 64 KiB per query, no more', async () => {
    const { client } = await serve((_r, response, body) => {
      const queries = (body as { queries: (typeof query)[] }).queries;
      const text = JSON.stringify({ decisions: queries.map((one) => JSON.parse(paddedAllow(one, 70 * 1024)) as unknown) });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    });
    const decisions = await client.decideBatch([query, query]);
    expect(decisions.map((decision) => decision.allow)).toEqual([false, false]);
    expect(decisions[0]?.message).toMatch(/answer larger than 128 KiB/);
  });
});
