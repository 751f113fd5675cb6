/**
 * The client's one `text/event-stream` reader, on the cases the HTML standard spells out: exactly
 * one space after the colon is dropped, line ends of three kinds (split across chunks too), comments,
 * a field without a colon, events without data, a byte order mark, and a cap on one event's size.
 */
import { describe, expect, it } from 'vitest';
import { readServerSentEvents, type ServerSentEvent } from '../../client/events/server-sent-events.js';

async function read(chunks: readonly string[], maxEventChars = 1024): Promise<{ events: ServerSentEvent[]; stopped: string | undefined }> {
  const events: ServerSentEvent[] = [];
  // eslint-disable-next-line @typescript-eslint/require-await -- a fake response body: the reader takes an async iterable; these chunks are in memory
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const chunk of chunks) yield Buffer.from(chunk, 'utf8');
  }
  const stopped = await readServerSentEvents(body(), (event) => events.push(event), maxEventChars);
  return { events, stopped };
}

describe('readServerSentEvents', () => {
  it('drops one space after the colon and keeps a second one, or a tab', async () => {
    const { events } = await read(['data:  two spaces\n\n', 'data:\ttab\n\n', 'data: one\n\n', 'data:none\n\n', 'data: trailing \n\n']);
    expect(events.map((event) => event.data)).toEqual([' two spaces', '\ttab', 'one', 'none', 'trailing ']);
  });

  it('reads the event type the same way, and types an event without one as message', async () => {
    const { events } = await read(['event:  policy\ndata: a\n\n', 'event:policy\ndata: b\n\n', 'data: c\n\n']);
    expect(events).toEqual([
      { type: ' policy', data: 'a' },
      { type: 'policy', data: 'b' },
      { type: 'message', data: 'c' },
    ]);
  });

  it('joins data lines with LF; ends lines on CRLF, LF or CR, even split across chunks', async () => {
    const { events } = await read(['data: a\r', '\ndata: b\rdata: c\n', 'data\r\n', '\r', '\n']);
    expect(events).toEqual([{ type: 'message', data: 'a\nb\nc\n' }]);
  });

  it('skips comments and unknown fields, dispatches no event without data, strips a byte order mark', async () => {
    const { events, stopped } = await read(['\uFEFFevent: policy\n: ping\nid: 7\nretry: 10\nfoo: bar\n\n', 'event: approval\ndata: x\n\n']);
    expect(events).toEqual([{ type: 'approval', data: 'x' }]);
    expect(stopped).toBeUndefined();
  });

  it('stops at an event larger than the cap, and drops an event the stream did not finish', async () => {
    expect((await read(['data: ', 'x'.repeat(2000)])).stopped).toBe('an event larger than 1 KiB');
    expect(await read(['data: a\n\n', 'data: b\n'])).toEqual({ events: [{ type: 'message', data: 'a' }], stopped: undefined });
  });
});
