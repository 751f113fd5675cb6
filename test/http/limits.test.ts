/**
 * What a flood of connections or bytes cannot do over a real socket: take more than
 * `maxConnections` sockets, hold one open without sending a request, or make `/decide` parse a
 * huge body.
 */
import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { DECIDE_BODY_LIMIT } from '../../schemas/api.js';
import { startTestServer, type TestAppOptions, type TestScope } from '../support/app.js';
import { makeTree } from '../support/files.js';
import { START_DEADLINE_MS, runUntilExit, startService } from '../support/service-process.js';
import { waitFor } from '../support/wait.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function listening(t: TestScope, options: TestAppOptions = {}): Promise<{ app: FastifyInstance; port: number }> {
  const { app, baseUrl } = await startTestServer(t, { demo: {} }, { rescanMs: 0, ...options });
  return { app, port: Number(new URL(baseUrl).port) };
}

/** A raw socket: what it received, and whether the server closed it. */
interface RawSocket {
  readonly socket: net.Socket;
  received(): string;
  readonly closed: Promise<void>;
}

async function connect(port: number): Promise<RawSocket> {
  const socket = net.connect(port, '127.0.0.1');
  let text = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    text += chunk;
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) =>
    socket.once('close', () => {
      resolve();
    }),
  );
  cleanup.push(async () => {
    socket.destroy();
    await closed;
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  return { socket, received: () => text, closed };
}

/** Sends a keep-alive GET /healthz on the socket and waits for the whole answer. */
async function healthz(raw: RawSocket): Promise<void> {
  const before = raw.received().length;
  raw.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  await waitFor(() => raw.received().slice(before).includes('{"status":"ok"}'), 'the answer to GET /healthz on the socket');
}

const within = <T>(promise: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([
    promise,
    new Promise<T>((_, reject) =>
      setTimeout(() => {
        reject(new Error(`${what}: not within ${ms} ms`));
      }, ms),
    ),
  ]);

describe('connections', () => {
  it('closes a connection beyond maxConnections at once while the open ones keep being answered', async (t) => {
    const { port } = await listening(t, { maxConnections: 4 });
    const open = [];
    for (let i = 0; i < 4; i++) {
      const raw = await connect(port);
      await healthz(raw);
      open.push(raw);
    }
    const extra = await connect(port);
    extra.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await within(extra.closed, 5_000, 'the fifth connection closed');
    expect(extra.received()).toBe('');
    for (const raw of open) await healthz(raw);

    open[0]?.socket.destroy();
    await open[0]?.closed;
    // Once a place is free, a new connection is served again (the server counts it closed asynchronously).
    const deadline = Date.now() + 10_000;
    for (;;) {
      const again = await connect(port);
      try {
        await within(healthz(again), 2_000, 'an answer on a freed place');
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
      }
    }
  });

  it('closes a connection that does not finish its headers within headersTimeoutMs, and an idle one after keepAliveTimeoutMs', async (t) => {
    const { port } = await listening(t, { headersTimeoutMs: 300, keepAliveTimeoutMs: 300 });
    const slow = await connect(port);
    slow.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const idle = await connect(port);
    await healthz(idle);
    const started = Date.now();
    await within(Promise.all([slow.closed, idle.closed]), 5_000, 'both connections closed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(slow.received()).not.toContain('{"status":"ok"}');
  });

  it('defaults to 1024 connections', async (t) => {
    const { app } = await listening(t);
    expect(app.server.maxConnections).toBe(1024);
  });

  it(
    'takes PDP_MAX_CONNECTIONS from the environment, and refuses to start on a value that is not a positive integer',
    async () => {
      const tree = await makeTree({ demo: null });
      cleanup.push(() => tree.remove());
      const env = { PDP_PROJECTS_ROOT: tree.root, PDP_ADMIN_TOKEN: 'limits-admin-token', PDP_STATE_DIR: `${tree.outer}/state` };
      const values = ['0', '1.5', 'many'];
      const runs = await Promise.all(values.map((value) => runUntilExit({ ...env, PDP_MAX_CONNECTIONS: value })));
      runs.forEach((run, index) => {
        expect(run.code, run.output).toBe(1);
        expect(run.output).toContain(`PDP_MAX_CONNECTIONS: not a positive integer: ${values[index] ?? ''}`);
      });
      const service = await startService({ ...env, PDP_MAX_CONNECTIONS: '2' });
      cleanup.push(() => service.stop(2_000));
      // The readiness probe may still hold a connection: of three more, at least one is refused.
      const port = Number(new URL(service.baseUrl).port);
      const sockets = [await connect(port), await connect(port), await connect(port)];
      const outcomes = await Promise.all(
        sockets.map(async (raw) => {
          raw.socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
          await waitFor(() => raw.received().includes('{"status":"ok"}') || raw.socket.destroyed, 'an answer or a close', 10_000);
          return raw.received().includes('{"status":"ok"}') ? 'answered' : 'refused';
        }),
      );
      expect(outcomes).toContain('answered');
      expect(outcomes).toContain('refused');
    },
    4 * START_DEADLINE_MS,
  );
});

describe('connections that hold a place without a request to answer', () => {
  const EVENTS = 'GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';

  it('closes the connection of a refused /events stream (429) right after the answer, so refused streams cannot fill maxConnections', async (t) => {
    const { port } = await listening(t, { maxConnections: 8, maxEventStreamsPerClient: 2 });
    const streams = [await connect(port), await connect(port)];
    for (const stream of streams) stream.socket.write(EVENTS);
    await waitFor(() => streams.every((stream) => stream.received().startsWith('HTTP/1.1 200')), 'two streams open');
    const refused = [];
    for (let i = 0; i < 6; i++) {
      const raw = await connect(port);
      raw.socket.write(EVENTS);
      refused.push(raw);
    }
    // Before, each held its place for the 10 s keep-alive: the service took no new connection.
    await within(Promise.all(refused.map((raw) => raw.closed)), 3_000, 'the refused connections closed');
    for (const raw of refused) expect(raw.received()).toMatch(/^HTTP\/1\.1 429 [^]*too_many_streams/);
    const fresh = await connect(port);
    await within(healthz(fresh), 3_000, 'an answer on a new connection');
  });

  it('closes, by default within 9 s, a connection that sends nothing or never finishes its headers', async (t) => {
    const { port } = await listening(t);
    const silent = await connect(port);
    const partial = await connect(port);
    partial.socket.write('POST /decide HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    const started = Date.now();
    // The default headers timeout (5 s), checked every second; it was 10 s checked every 10 s (up to 20 s).
    await within(Promise.all([silent.closed, partial.closed]), 9_000, 'both connections closed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
  }, 15_000);

  it('closes, by default within 14 s, a connection that sends its headers but never its whole body', async (t) => {
    const { port } = await listening(t);
    const raw = await connect(port);
    raw.socket.write('POST /decide HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"project"');
    const started = Date.now();
    await within(raw.closed, 14_000, 'the connection closed');
    expect(Date.now() - started).toBeGreaterThanOrEqual(8_000);
    expect(raw.received()).not.toContain('"allow"');
  }, 20_000);
});

describe('decision bodies', () => {
  /** `{"project":...,"arguments":{"a":[[[...]]]}}` of about `bytes` bytes, nested as deep as it goes. */
  const nestedQuery = (bytes: number): string => {
    const depth = Math.floor((bytes - 100) / 2);
    return `{"project":"demo","requester":"QA","tool":"idea_ticket_read","arguments":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
  };

  it('refuses a 977 KiB nested body on /decide and /decide/batch with 413 before parsing it, and keeps deciding', async (t) => {
    const { port } = await listening(t);
    const base = `http://127.0.0.1:${port}`;
    const body = nestedQuery(977 * 1024);
    for (const [url, payload] of [
      ['/decide', body],
      ['/decide/batch', `{"queries":[${body}]}`],
    ] as const) {
      const started = performance.now();
      const refused = await request(`${base}${url}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
      const elapsed = performance.now() - started;
      expect(refused.statusCode, url).toBe(413);
      expect(await refused.body.json()).toMatchObject({ error: { code: 'payload_too_large' } });
      expect(elapsed, `${url} answered in ${elapsed.toFixed(0)} ms`).toBeLessThan(1_000);
    }
    const justOver = await request(`${base}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        project: 'demo',
        requester: 'QA',
        tool: 'idea_ticket_read',
        arguments: { pad: 'a'.repeat(DECIDE_BODY_LIMIT) },
      }),
    });
    expect(justOver.statusCode).toBe(413);
    await justOver.body.dump();
    const decided = await request(`${base}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project: 'demo', requester: 'QA', tool: 'idea_ticket_read', arguments: { issueRef: '#1' } }),
    });
    expect(decided.statusCode).toBe(200);
    expect(await decided.body.json()).toMatchObject({ allow: true, reason: 'allowed' });
  });
});
