/**
 * GET /events (docs/api.md#live-changes-get-events) on a real port: the state of every project when a stream opens,
 * then one `policy` event per change (API write, external edit, invalid file, repair, project
 * added or removed), never before the change is visible to /decide.
 */
import { mkdir, rm } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import pino from 'pino';
import { LiveEvents } from '../../server/events/live-events.js';
import { adminHeaders, agentUrl, call, decide, DECIDE_TOKEN, startTestServer } from '../support/app.js';
import { policyText, saveAtomically } from '../support/files.js';
import { openSse, type SseFrame } from '../support/sse.js';
import { READ_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

const isPolicy =
  (project: string, status?: string) =>
  (frame: SseFrame): boolean => {
    const data = frame.data as { project?: string; status?: string };
    return frame.event === 'policy' && data.project === project && (status === undefined || data.status === status);
  };

describe('GET /events', () => {
  it('sends every project once when the stream opens, and only the asked project with ?project=', async (t) => {
    const server = await startTestServer(t, { alpha: { policy: policyText(undefined) }, beta: {} });
    const base = server.baseUrl;
    const all = await openSse(`${base}/events`);
    expect(all.status).toBe(200);
    expect(all.headers['content-type']).toMatch(/^text\/event-stream/);
    const alpha = await all.next(isPolicy('alpha', 'ok'));
    await all.next(isPolicy('beta', 'ok'));
    const view = await call(server.app, 'GET', '/projects/alpha/mcp-tool-permissions');
    expect(alpha.data).toEqual({ project: 'alpha', revision: view.json<{ revision: string }>().revision, status: 'ok' });

    const one = await openSse(`${base}/events?project=beta`);
    await one.next(isPolicy('beta'));
    // A change of alpha, then one of beta: the stream keeps their order, so once beta's has come, alpha's would have too.
    const heard = one.frames.length;
    await call(server.app, 'PUT', agentUrl('alpha', 'QA'), { auth: true, body: { allowedTools: [...READ_TOOLS] } });
    await call(server.app, 'PUT', agentUrl('beta', 'QA'), { auth: true, body: { allowedTools: [...READ_TOOLS] } });
    await one.next(isPolicy('beta'), heard);
    expect(one.frames.every((frame) => (frame.data as { project: string }).project === 'beta')).toBe(true);
    all.close();
    one.close();

    const unknown = await call(server.app, 'GET', '/events?project=nope');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json<{ error: { code: string } }>().error.code).toBe('unknown_project');
  });

  it('sends a policy event after an API write, once /decide already answers from the new revision', async (t) => {
    const server = await startTestServer(t, { alpha: { policy: policyText(undefined) } });
    const base = server.baseUrl;
    const stream = await openSse(`${base}/events?project=alpha`);
    await stream.next(isPolicy('alpha'));
    const from = stream.frames.length;
    const write = await call(server.app, 'PUT', agentUrl('alpha', 'QA'), {
      auth: true,
      body: { allowedTools: [...READ_TOOLS, 'idea_memory_write'] },
    });
    expect(write.statusCode).toBe(200);
    const revision = write.json<{ revision: string }>().revision;
    const event = await stream.next(isPolicy('alpha'), from);
    expect(event.data).toEqual({ project: 'alpha', revision, status: 'ok' });
    const decision = await decide(server.app, { project: 'alpha', requester: 'QA', tool: 'idea_memory_write' });
    expect(decision).toMatchObject({ allow: true, revision });
    stream.close();
  });

  it('follows external edits: a revocation, a broken file, its repair, a project removed and added', async (t) => {
    const server = await startTestServer(t, { alpha: { policy: policyText(undefined, { QA: [...READ_TOOLS, 'idea_memory_write'] }) } });
    const base = server.baseUrl;
    const stream = await openSse(`${base}/events`);
    await stream.next(isPolicy('alpha', 'ok'));
    const file = server.policyPath('alpha');

    let from = stream.frames.length;
    await saveAtomically(file, policyText(undefined));
    const revoked = await stream.next(isPolicy('alpha', 'ok'), from);
    // Visible to /decide before the event was sent.
    const denied = await decide(server.app, { project: 'alpha', requester: 'QA', tool: 'idea_memory_write' });
    expect(denied.allow).toBe(false);
    expect(denied.revision).toBe((revoked.data as { revision: string }).revision);

    from = stream.frames.length;
    await saveAtomically(file, '{"version": 1, "agents": [');
    await stream.next(isPolicy('alpha', 'invalid'), from);
    expect((await decide(server.app, { project: 'alpha', requester: 'QA', tool: 'idea_ticket_read' })).reason).toBe('policy_invalid');

    from = stream.frames.length;
    await saveAtomically(file, policyText(undefined));
    await stream.next(isPolicy('alpha', 'ok'), from);

    from = stream.frames.length;
    await mkdir(path.join(server.root, 'gamma', '.ideai'), { recursive: true });
    await stream.next(isPolicy('gamma', 'ok'), from, 10_000);

    from = stream.frames.length;
    await rm(server.projectDir('gamma'), { recursive: true, force: true });
    const removed = await stream.next(isPolicy('gamma', 'removed'), from, 15_000);
    expect((removed.data as { revision: string }).revision).toEqual(expect.any(String));
    stream.close();
  });

  it('needs the decide token when one is set, and ends open streams cleanly on shutdown', async (t) => {
    const server = await startTestServer(t, { alpha: {} }, { decideToken: DECIDE_TOKEN });
    const base = server.baseUrl;
    const refused = await openSse(`${base}/events`);
    expect(refused.status).toBe(401);
    refused.close();
    const stream = await openSse(`${base}/events`, { authorization: `Bearer ${DECIDE_TOKEN}` });
    await stream.next(isPolicy('alpha'));
    const admin = await openSse(`${base}/events`, adminHeaders);
    await admin.next(isPolicy('alpha'));
    const started = Date.now();
    await server.app.close();
    await Promise.all([stream.ended, admin.ended]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});

describe('LiveEvents', () => {
  const logger = pino({ level: 'silent' });

  async function serve(events: LiveEvents): Promise<{ url: string; server: http.Server }> {
    const server = http.createServer((_request, response) => {
      events.open(response, undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address() as { port: number };
    return { url: `http://127.0.0.1:${address.port}/`, server };
  }

  it('sends a ping comment on its period, and nothing for a change that is what streams last heard', async () => {
    const events = new LiveEvents({ projects: { summaries: () => [] }, logger, pingMs: 40 });
    const { url, server } = await serve(events);
    const stream = await openSse(url);
    await waitFor(() => stream.comments.filter((comment) => comment === 'ping').length >= 2, 'two pings');
    events.policyChanged('p', { revision: 'r1', status: 'ok' });
    events.policyChanged('p', { revision: 'r1', status: 'ok' });
    events.policyChanged('p', { revision: 'r1', status: 'invalid' });
    events.policyChanged('p', undefined);
    await stream.next((frame) => (frame.data as { status: string }).status === 'removed');
    expect(stream.frames.map((frame) => frame.data)).toEqual([
      { project: 'p', revision: 'r1', status: 'ok' },
      { project: 'p', revision: 'r1', status: 'invalid' },
      { project: 'p', revision: 'r1', status: 'removed' },
    ]);
    stream.close();
    events.close();
    server.close();
  });

  it('drops a reader that does not read instead of buffering for it', async () => {
    const events = new LiveEvents({ projects: { summaries: () => [] }, logger, maxBufferedBytes: 64 * 1024 });
    const { url, server } = await serve(events);
    const slow = await openSse(url);
    const fast = await openSse(url);
    slow.pause();
    expect(events.size).toBe(2);
    // Far more than the kernel's socket buffers on loopback hold.
    for (let index = 0; index < 200_000 && events.size === 2; index++) {
      events.approvalChanged({ project: 'p', id: `a${index}`, status: 'pending' });
      // Yields to the event loop often enough for the reading client (in this process) to keep up.
      if (index % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(events.size).toBe(1);
    const heard = fast.frames.length;
    events.approvalChanged({ project: 'p', id: 'last', status: 'pending' });
    await fast.next((frame) => (frame.data as { id: string }).id === 'last', heard);
    fast.close();
    slow.close();
    events.close();
    server.close();
  });
});
