/**
 * The panel's live stream without a browser: the SSE parser on awkward chunkings, and
 * {@link LiveStream} against a real HTTP server (token header, reconnection with backoff, a
 * refused token, a silent connection, a proxy's HTML page, restart and stop), and the pure parts
 * of the approvals (event parsing, remaining times, the French of the answers).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { remainingText } from '../../ui/src/dom/countdown.js';
import { approvalEventOf, eventsNeedReload, policyEventOf, type ShownPolicy } from '../../ui/src/controllers/live-sync.js';
import { GRANT_DURATIONS, answeredText, closedText } from '../../ui/src/model/requests-model.js';
import type { Approval } from '../../schemas/approvals.js';
import { LiveStream, type LiveState } from '../../ui/src/api/live-stream.js';
import { MAX_SSE_LINE, SseParser, type SseMessage } from '../../schemas/server-sent-events.js';
import { defined } from '../support/typed.js';
import { elapse, waitFor } from '../support/wait.js';

describe('SseParser', () => {
  const all = (chunks: string[]): SseMessage[] => {
    const parser = new SseParser();
    return chunks.flatMap((chunk) => parser.push(chunk));
  };

  it('reads the frames of GET /events, ignoring comments, whatever the chunking', () => {
    const text = ': connected\n\nevent: policy\ndata: {"project":"demo"}\n\n: ping\n\nevent: approval\ndata: {"id":"a1"}\n\n';
    const expected = [
      { event: 'policy', data: '{"project":"demo"}' },
      { event: 'approval', data: '{"id":"a1"}' },
    ];
    expect(all([text])).toEqual(expected);
    expect(all(Array.from(text))).toEqual(expected); // one character at a time
    for (let cut = 1; cut < text.length; cut += 1) expect(all([text.slice(0, cut), text.slice(cut)])).toEqual(expected);
  });

  it('accepts CRLF and CR line breaks, even a CRLF split between two chunks', () => {
    expect(all(['event: policy\r\ndata: 1\r\n\r\n'])).toEqual([{ event: 'policy', data: '1' }]);
    expect(all(['event: policy\rdata: 1\r\r'])).toEqual([{ event: 'policy', data: '1' }]);
    expect(all(['event: policy\r', '\ndata: 1\r', '\n\r', '\n'])).toEqual([{ event: 'policy', data: '1' }]);
  });

  it('joins data lines, defaults the event to "message", keeps only one leading space and drops frames without data', () => {
    expect(all(['data: a\ndata:b\ndata:  c\n\n'])).toEqual([{ event: 'message', data: 'a\nb\n c' }]);
    expect(all(['event: policy\n\ndata: x\n\n'])).toEqual([{ event: 'message', data: 'x' }]);
    expect(all(['event: policy\ndata\n\n'])).toEqual([{ event: 'policy', data: '' }]);
    expect(all(['event: policy\ndata: unfinished'])).toEqual([]);
  });

  it('refuses a line longer than any event the service sends', () => {
    const parser = new SseParser();
    expect(() => parser.push('data: ' + 'x'.repeat(MAX_SSE_LINE))).toThrow(/longer than/);
  });
});

describe('eventsNeedReload', () => {
  const shown: ShownPolicy = {
    projectId: 'demo',
    revision: 'r1',
    status: 'ok',
    projects: [
      { id: 'demo', status: 'ok' },
      { id: 'sandbox', status: 'ok' },
    ],
  };

  it('reloads for another revision or status of the open project, and for projects added, removed, broken or repaired', () => {
    expect(eventsNeedReload(shown, [{ project: 'demo', revision: 'r1', status: 'ok' }])).toBe(false);
    expect(eventsNeedReload(shown, [{ project: 'sandbox', revision: 'x', status: 'ok' }])).toBe(false);
    expect(eventsNeedReload(shown, [{ project: 'demo', revision: 'r2', status: 'ok' }])).toBe(true);
    expect(eventsNeedReload(shown, [{ project: 'demo', revision: 'r1', status: 'invalid' }])).toBe(true);
    expect(eventsNeedReload(shown, [{ project: 'sandbox', revision: 'x', status: 'invalid' }])).toBe(true);
    expect(eventsNeedReload(shown, [{ project: 'new', revision: 'builtin', status: 'ok' }])).toBe(true);
    expect(eventsNeedReload(shown, [{ project: 'sandbox', revision: 'x', status: 'removed' }])).toBe(true);
    expect(eventsNeedReload(shown, [{ project: 'gone', revision: 'x', status: 'removed' }])).toBe(false);
    expect(eventsNeedReload({ ...shown, status: 'invalid' }, [{ project: 'demo', revision: 'r1', status: 'ok' }])).toBe(true);
  });

  it('parses policy events and ignores anything else', () => {
    expect(policyEventOf('{"project":"demo","revision":"r1","status":"ok"}')).toEqual({ project: 'demo', revision: 'r1', status: 'ok' });
    expect(policyEventOf('{"project":"demo","revision":"r1","status":"weird"}')).toBeNull();
    expect(policyEventOf('{"project":1}')).toBeNull();
    expect(policyEventOf('not json')).toBeNull();
  });
});

interface Attempt {
  at: number;
  authorization: string | undefined;
  response: http.ServerResponse;
}

describe('LiveStream (real HTTP server)', () => {
  let server: http.Server | undefined;
  let stream: LiveStream | undefined;

  afterEach(async () => {
    stream?.stop();
    const closing = server;
    if (closing !== undefined) {
      closing.closeAllConnections();
      await new Promise((resolve) => {
        closing.close(resolve);
      });
    }
    server = undefined;
    stream = undefined;
  });

  /** A server whose answer to each attempt is chosen by `answer`; resolves with its URL and the attempts. */
  async function serve(answer: (attempt: Attempt, index: number) => void): Promise<{ url: string; attempts: Attempt[] }> {
    const attempts: Attempt[] = [];
    server = http.createServer((request, response) => {
      const attempt = { at: Date.now(), authorization: request.headers.authorization, response };
      attempts.push(attempt);
      answer(attempt, attempts.length - 1);
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`, attempts };
  }

  const sse = (response: http.ServerResponse): void => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
  };

  function open(url: string, token: () => string | null, options: { minDelayMs?: number; maxDelayMs?: number; idleMs?: number } = {}) {
    const messages: SseMessage[] = [];
    const states: LiveState[] = [];
    const opens: boolean[] = [];
    stream = new LiveStream({
      url,
      token,
      onOpen: (reconnection) => opens.push(reconnection),
      onMessage: (message) => messages.push(message),
      onState: (state) => states.push(state),
      minDelayMs: 20,
      maxDelayMs: 400,
      ...options,
    });
    stream.restart();
    return { messages, states, opens };
  }

  const until = async (check: () => boolean, timeoutMs = 3000): Promise<void> => {
    await waitFor(check, 'the stream to get there', timeoutMs, 5);
  };

  it('sends the token, delivers the frames, and reconnects quickly after the stream ends (a resync)', async () => {
    const { url, attempts } = await serve((attempt, index) => {
      sse(attempt.response);
      attempt.response.write(`: connected\n\nevent: policy\ndata: {"n":${index}}\n\n`);
      if (index === 0) setTimeout(() => attempt.response.end(), 30);
    });
    const { messages, opens, states } = open(url, () => 'secret');
    await until(() => messages.length >= 2);
    expect(attempts.map((attempt) => attempt.authorization)).toEqual(['Bearer secret', 'Bearer secret']);
    expect(messages).toEqual([
      { event: 'policy', data: '{"n":0}' },
      { event: 'policy', data: '{"n":1}' },
    ]);
    expect(opens).toEqual([false, true]);
    expect(states).toEqual(['connecting', 'open', 'retrying', 'connecting', 'open']);
    expect(defined(attempts[1], 'attempt 1').at - defined(attempts[0], 'attempt 0').at).toBeLessThan(1000);
  });

  it('backs off while the token is refused, says so, and connects at once on restart with a new token', async () => {
    let token = 'wrong';
    const { url, attempts } = await serve((attempt) => {
      if (attempt.authorization !== 'Bearer right') {
        attempt.response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":{"code":"unauthorized"}}');
        return;
      }
      sse(attempt.response);
      attempt.response.write('event: policy\ndata: {}\n\n');
    });
    const { states, messages } = open(url, () => token, { minDelayMs: 150, maxDelayMs: 10_000 });
    await until(() => attempts.length >= 4);
    expect(states).toContain('refused');
    expect(states).not.toContain('open');
    // Waits of 150, 300, 600 ms (plus jitter): a timer never fires early, so these bounds hold on a loaded machine.
    expect(defined(attempts[1], 'attempt 1').at - defined(attempts[0], 'attempt 0').at).toBeGreaterThanOrEqual(145);
    expect(defined(attempts[2], 'attempt 2').at - defined(attempts[1], 'attempt 1').at).toBeGreaterThanOrEqual(295);
    expect(defined(attempts[3], 'attempt 3').at - defined(attempts[2], 'attempt 2').at).toBeGreaterThanOrEqual(595);
    token = 'right';
    const before = Date.now();
    defined(stream, 'the stream').restart();
    await until(() => messages.length === 1);
    expect(Date.now() - before).toBeLessThan(1000); // the next backoff wait would have been 1,200 ms or more
    expect(states.at(-1)).toBe('open');
  });

  it('takes a silent connection for dead and connects again, whether it went silent before or after the headers', async () => {
    const { url, attempts } = await serve((attempt, index) => {
      if (index === 0) return; // never answers
      sse(attempt.response);
      attempt.response.flushHeaders(); // headers, then nothing
    });
    const { states } = open(url, () => null, { idleMs: 100 });
    await until(() => attempts.length >= 3);
    expect(defined(attempts[0], 'attempt 0').authorization).toBeUndefined();
    expect(states.slice(0, 6)).toEqual(['connecting', 'retrying', 'connecting', 'open', 'retrying', 'connecting']);
  });

  it('does not take a 200 that is not an event stream (a proxy page) for an open stream', async () => {
    const { url, attempts } = await serve((attempt) => {
      attempt.response.writeHead(200, { 'content-type': 'text/html' }).end('event: policy\ndata: {}\n\n');
    });
    const { states, messages, opens } = open(url, () => null);
    await until(() => attempts.length >= 2);
    expect(opens).toEqual([]);
    expect(messages).toEqual([]);
    expect(states).not.toContain('open');
  });

  it('stops for good on stop()', async () => {
    const { url, attempts } = await serve((attempt) => attempt.response.writeHead(503).end());
    const { states } = open(url, () => null);
    await until(() => attempts.length >= 1);
    defined(stream, 'the stream').stop();
    const count = attempts.length;
    await elapse(200); // a window in which no attempt may come
    expect(attempts.length).toBe(count);
    expect(states.at(-1)).toBe('stopped');
  });

  it('computes a delay that doubles up to the ceiling, with at most 25 % of jitter', () => {
    const bare = new LiveStream({
      url: 'http://127.0.0.1:9/events',
      token: () => null,
      onOpen: () => undefined,
      onMessage: () => undefined,
      onState: () => undefined,
    });
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => bare.delayFor(n, 0))).toEqual([500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]);
    expect(bare.delayFor(1, 1)).toBe(625);
  });
});

describe('approvals in the panel: events, remaining times, answers in French', () => {
  it('parses approval events and ignores anything else', () => {
    expect(approvalEventOf('{"project":"demo","id":"a1","status":"pending"}')).toEqual({ project: 'demo', id: 'a1', status: 'pending' });
    expect(approvalEventOf('{"project":"demo","id":1,"status":"pending"}')).toBeNull();
    expect(approvalEventOf('[')).toBeNull();
  });

  it('words remaining times and answers', () => {
    expect(remainingText(0)).toBe('0 s');
    expect(remainingText(-5000)).toBe('0 s');
    expect(remainingText(12_000)).toBe('12 s');
    expect(remainingText(288_000)).toBe('4 min 48 s');
    expect(remainingText(3_900_000)).toBe('1 h 05 min');
    expect(remainingText(1)).toBe('1 s'); // never "0 s" before it is over
    expect(answeredText('QA', 'idea_memory_write', 'once')).toBe('Demande de QA pour idea_memory_write autorisée une fois.');
    expect(answeredText('QA', 'idea_memory_write', 'for', 3600)).toBe('Demande de QA pour idea_memory_write autorisée pendant 1 heure.');
    expect(answeredText('QA', 'idea_memory_write', 'always')).toContain('ajouté aux tools autorisés de QA');
    expect(answeredText('QA', 'idea_memory_write', 'deny')).toBe('Demande de QA pour idea_memory_write refusée.');
    expect(GRANT_DURATIONS.map((duration) => duration.seconds)).toEqual([900, 3600, 28_800]);
  });

  it('says how a request closed without this page', () => {
    const base: Approval = {
      id: 'a1',
      requester: 'QA',
      tool: 'idea_memory_write',
      status: 'approved',
      createdAt: '2026-12-01T10:00:00.000Z',
      expiresAt: '2026-12-01T10:05:00.000Z',
    };
    const said = (change: Partial<Approval>): string => closedText('QA', { ...base, ...change });
    expect(said({ answer: 'once', answeredBy: 'approver', via: 'elicitation' })).toBe(
      'Demande de QA pour idea_memory_write autorisée une fois dans la fenêtre de l\u2019agent.',
    );
    expect(said({ answer: 'for', answeredBy: 'approver' })).toBe(
      'Demande de QA pour idea_memory_write autorisée pour un temps (voir les accords temporaires) avec le jeton d\u2019approbation.',
    );
    expect(said({ answer: 'always', answeredBy: 'admin' })).toBe(
      'Demande de QA pour idea_memory_write autorisée pour toujours ailleurs (un autre onglet ou l\u2019API).',
    );
    expect(said({ status: 'denied', answer: 'deny', answeredBy: 'admin' })).toBe(
      'Demande de QA pour idea_memory_write refusée ailleurs (un autre onglet ou l\u2019API).',
    );
    expect(said({ status: 'expired' })).toBe('Demande de QA pour idea_memory_write expirée sans réponse.');
    expect(said({ status: 'expired', details: { cause: 'policy_changed' } })).toBe(
      'Demande de QA pour idea_memory_write fermée : ce tool n\u2019est plus « Sur demande » pour QA.',
    );
    expect(said({ status: 'expired', details: { cause: 'displaced' } })).toContain('fait place à un agent déclaré');
  });
});
