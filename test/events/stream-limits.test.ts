/**
 * `/events` streams cannot take the service's connections (docs/api.md#live-changes-get-events): at most a quarter of
 * `PDP_MAX_CONNECTIONS` in all and 32 per client address by default, past which a stream is refused
 * with `429 too_many_streams`, and `/decide` keeps answering while streams that never read are held.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestServer } from '../support/app.js';
import { waitFor } from '../support/wait.js';

interface HeldStream {
  readonly socket: net.Socket;
  /** The status line of the answer, once it came. */
  status(): string | undefined;
}

/** Opens `GET /events` on a raw socket from `localAddress` and never reads the stream's body. */
function holdStream(port: number, localAddress: string): HeldStream {
  const socket = net.connect({ port, host: '127.0.0.1', localAddress });
  let head = '';
  socket.on('data', (chunk: Buffer) => {
    if (head.length < 200) head += chunk.toString('latin1');
    // Read the status line only, then stop reading: a reader that never takes its events.
    socket.pause();
  });
  socket.on('error', () => undefined);
  socket.write('GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return { socket, status: () => (head.includes('\r\n') ? head.slice(0, head.indexOf('\r\n')) : undefined) };
}

async function decideStatus(base: string): Promise<number> {
  const response = await fetch(`${base}/decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ project: 'demo', requester: 'QA', tool: 'idea_ticket_read' }),
    signal: AbortSignal.timeout(2_000),
  });
  return response.status;
}

describe('/events stream limits', () => {
  it('refuses streams past the total and per-client limits (429 too_many_streams) and /decide keeps its room', async (t) => {
    const { baseUrl: base } = await startTestServer(t, { demo: {} }, { maxConnections: 40, maxEventStreamsPerClient: 4 });
    const held: HeldStream[] = [];
    try {
      const port = Number(new URL(base).port);
      // 40 streams from 10 addresses: as many as the service takes connections.
      for (let index = 0; index < 40; index += 1) held.push(holdStream(port, `127.0.0.${2 + (index % 10)}`));
      await waitFor(() => held.every((stream) => stream.status() !== undefined || stream.socket.destroyed), 'every stream answered');
      const statuses = held.map((stream) => stream.status());
      expect(statuses.filter((status) => status === 'HTTP/1.1 200 OK')).toHaveLength(10);
      expect(statuses.filter((status) => status === 'HTTP/1.1 429 Too Many Requests')).toHaveLength(30);
      for (const stream of held) if (stream.status() !== 'HTTP/1.1 200 OK') stream.socket.destroy();
      await waitFor(
        () =>
          decideStatus(base).then(
            (status) => status === 200,
            () => false,
          ),
        '/decide answering',
        8_000,
      );

      // One address alone gets 4, the others none: the total is reached.
      const refused = await fetch(`${base}/events`);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toMatchObject({ error: { code: 'too_many_streams', details: { limit: 'total', max: 10 } } });
      for (const stream of held.splice(0)) stream.socket.destroy();
      await waitFor(
        async () =>
          (await fetch(`${base}/events`).then((response) => {
            void response.body?.cancel();
            return response.status;
          })) === 200,
        'streams freed',
      );
      const own = Array.from({ length: 5 }, () => holdStream(port, '127.0.0.20'));
      held.push(...own);
      await waitFor(() => own.every((stream) => stream.status() !== undefined), 'the streams of one address answered');
      expect(own.map((stream) => stream.status()).filter((status) => status?.startsWith('HTTP/1.1 429'))).toHaveLength(1);
    } finally {
      for (const stream of held) stream.socket.destroy();
    }
  });
});
