/**
 * `PdpClient.watchEvents()` against fake services: the stream format as the service writes it
 * (comments, CRLF, several data lines), events that are not valid ignored, a refused stream
 * reported and retried, and nothing left running once closed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PdpClient, type PolicyEvent } from '../../client/index.js';
import { sendJson, startFakeHttp } from './fake-pdp.js';
import { elapse, waitFor } from '../support/wait.js';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

describe('PdpClient.watchEvents', () => {
  it('reads policy and approval events, skipping comments and anything that is not a valid event', async () => {
    const fake = await startFakeHttp((request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(': connected\r\n\r\n');
      response.write('event: policy\r\ndata: {"project":"demo","revision":"r1","status":"ok"}\r\n\r\n');
      response.write('event: policy\ndata: not json\n\n');
      response.write('event: policy\ndata: {"project":"demo"}\n\n');
      // One event split across writes and data lines.
      response.write('event: policy\ndata: {"project":"demo",\n');
      response.write('data: "revision":"r2","status":"invalid"}\n\n');
      response.write('event: approval\ndata: {"project":"demo","id":"a1","status":"pending"}\n\n');
      response.write(`: ping ${request.headers.authorization ?? 'no token'}\n\n`);
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: `${fake.url}/prefix`, token: 'decide-token' });
    cleanups.push(() => client.close());
    const policies: PolicyEvent[] = [];
    const approvals: unknown[] = [];
    let connects = 0;
    client.watchEvents({
      project: 'demo',
      onConnect: () => (connects += 1),
      onPolicy: (event) => policies.push(event),
      onApproval: (event) => approvals.push(event),
    });
    await waitFor(() => approvals.length === 1, 'the approval event');
    expect(connects).toBe(1);
    expect(policies).toEqual([
      { project: 'demo', revision: 'r1', status: 'ok' },
      { project: 'demo', revision: 'r2', status: 'invalid' },
    ]);
    expect(approvals).toEqual([{ project: 'demo', id: 'a1', status: 'pending' }]);
    expect(fake.requests[0]?.url).toBe('/prefix/events?project=demo');
    expect(fake.requests[0]?.headers.authorization).toBe('Bearer decide-token');
    expect(fake.requests[0]?.headers.accept).toBe('text/event-stream');
  });

  it('reads fields as the SSE standard says: one space after the colon, a CRLF split across chunks', async () => {
    const policy = (revision: string) => `{"project":"demo","revision":"${revision}","status":"ok"}`;
    const fake = await startFakeHttp((_r, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // Only one space after the colon goes: these event types are " policy" and "\tpolicy".
      response.write(`event:  policy\ndata: ${policy('two-spaces')}\n\n`);
      response.write(`event:\tpolicy\ndata: ${policy('tab')}\n\n`);
      response.write(`event:policy\ndata:${policy('no-space')}\n\n`);
      // The CR of a CRLF ends one write and its LF starts the next: one line end, not a blank line.
      response.write('event: policy\r');
      setTimeout(() => {
        response.write(`\ndata: ${policy('split-crlf')}\r\n\r\n`);
        response.write('event: approval\ndata: {"project":"demo","id":"a1","status":"pending"}\n\n');
      }, 50).unref();
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url });
    cleanups.push(() => client.close());
    const revisions: string[] = [];
    let approvals = 0;
    client.watchEvents({ onPolicy: (event) => revisions.push(event.revision), onApproval: () => (approvals += 1) });
    await waitFor(() => approvals === 1, 'the approval event');
    expect(revisions).toEqual(['no-space', 'split-crlf']);
  });

  it('a refused stream is reported with its cause and retried; close() stops it for good', async () => {
    const fake = await startFakeHttp((_r, response) => {
      sendJson(response, 401, { error: { code: 'unauthorized', message: 'token' } });
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url, token: 'wrong' });
    cleanups.push(() => client.close());
    const causes: string[] = [];
    const subscription = client.watchEvents({ onDisconnect: (cause) => causes.push(cause) });
    await waitFor(() => causes.length >= 2, 'two attempts');
    expect(causes[0]).toBe('rejected (401 unauthorized: decide token missing or wrong)');
    subscription.close();
    const seen = fake.requests.length;
    await elapse(1_000); // a window in which no attempt may come
    expect(fake.requests.length).toBe(seen);
  });

  it('a stream the service ends is opened again; closing the client ends it', async () => {
    let opened = 0;
    const fake = await startFakeHttp((_r, response) => {
      opened += 1;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(`event: policy\ndata: {"project":"demo","revision":"r${String(opened)}","status":"ok"}\n\n`);
    });
    cleanups.push(fake.close);
    const client = new PdpClient({ baseUrl: fake.url });
    const revisions: string[] = [];
    const causes: string[] = [];
    client.watchEvents({ onPolicy: (event) => revisions.push(event.revision), onDisconnect: (cause) => causes.push(cause) });
    await waitFor(() => revisions.length >= 2, 'a second stream');
    expect(revisions.slice(0, 2)).toEqual(['r1', 'r2']);
    expect(causes[0]).toBe('the service ended the stream');
    await client.close();
    const seen = opened;
    await elapse(1_000); // a window in which no stream may be opened
    expect(opened).toBe(seen);
    const late = client.watchEvents({});
    expect(() => {
      late.close();
    }).not.toThrow();
  });
});
