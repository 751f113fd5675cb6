/** The long-poll of an approval request (docs/api.md#approvals-and-temporary-grants, `GET .../approvals/:id?waitSeconds=`), with real timers. */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SYSTEM_CLOCK } from '../../server/clock.js';
import { ApiError } from '../../server/errors.js';
import { open } from '../support/clocked-approvals.js';

afterEach(() => {
  vi.useRealTimers();
});

/** The pending request of QA for idea_memory_write, in a service on the real clock. */
function pendingRequest(options: Parameters<typeof open>[0] = {}) {
  const harness = open({ clock: SYSTEM_CLOCK, ...options });
  const outcome = harness.requests.request('demo', 'QA', 'idea_memory_write', undefined, SYSTEM_CLOCK.monotonic());
  if (outcome.kind !== 'pending') throw new Error('expected a pending request');
  return { ...harness, id: outcome.approval.id };
}

describe('ApprovalRequests.wait', () => {
  it('answers at once for a request that is no longer pending', async () => {
    const { requests, id } = pendingRequest();
    await requests.answer('demo', id, 'deny', undefined, SYSTEM_CLOCK.monotonic());
    const started = performance.now();
    expect(await requests.wait('demo', id, 30_000)).toMatchObject({ id, status: 'denied' });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('answers as soon as the request is answered, long before the timeout', async () => {
    const { requests, id } = pendingRequest();
    const started = performance.now();
    const waiting = requests.wait('demo', id, 30_000); // registers its waiter before it returns
    await requests.answer('demo', id, 'once', undefined, SYSTEM_CLOCK.monotonic());
    expect(await waiting).toMatchObject({ id, status: 'approved', answer: 'once' });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('wakes every waiter of the request', async () => {
    const { requests, id } = pendingRequest();
    const waiting = Array.from({ length: 5 }, () => requests.wait('demo', id, 30_000));
    await requests.answer('demo', id, 'deny', undefined, SYSTEM_CLOCK.monotonic());
    expect((await Promise.all(waiting)).map((approval) => approval.status)).toEqual(Array(5).fill('denied'));
  });

  it('answers with the current state after the timeout', async () => {
    const { requests, id } = pendingRequest();
    const started = performance.now();
    expect(await requests.wait('demo', id, 80)).toMatchObject({ id, status: 'pending' });
    expect(performance.now() - started).toBeGreaterThanOrEqual(75);
  });

  it('leaves neither its timer nor its abort listener behind, however it ends', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { requests, id } = pendingRequest();
    const before = vi.getTimerCount();
    const controller = new AbortController();
    const endings = [
      async () => {
        const waiting = requests.wait('demo', id, 1000, controller.signal);
        await vi.advanceTimersByTimeAsync(1000);
        return waiting;
      },
      async () => {
        const aborted = new AbortController();
        const waiting = requests.wait('demo', id, 1000, aborted.signal);
        aborted.abort();
        expect(getEventListeners(aborted.signal, 'abort')).toHaveLength(0);
        return waiting;
      },
    ];
    for (const end of endings) {
      const approval = await end();
      expect(approval.status).toBe('pending');
      expect(vi.getTimerCount()).toBe(before);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    }
    const answered = requests.wait('demo', id, 1000, controller.signal);
    expect(vi.getTimerCount()).toBe(before + 1);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    await requests.answer('demo', id, 'deny', undefined, SYSTEM_CLOCK.monotonic());
    expect((await answered).status).toBe('denied');
    expect(vi.getTimerCount()).toBe(before);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('ends when the signal aborts', async () => {
    const { requests, id } = pendingRequest();
    const controller = new AbortController();
    const started = performance.now();
    const waiting = requests.wait('demo', id, 30_000, controller.signal); // listens to the signal before it returns
    controller.abort();
    expect(await waiting).toMatchObject({ status: 'pending' });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(await requests.wait('demo', id, 30_000, controller.signal)).toMatchObject({ status: 'pending' });
  });

  it('reports the expiry of a request that times out while waited for', async () => {
    const harness = open({ clock: SYSTEM_CLOCK, approvalTtlSeconds: 0.05 });
    harness.requests.close(); // no periodic sweep: only the wait's own timer can notice the expiry
    const outcome = harness.requests.request('demo', 'QA', 'idea_memory_write', undefined, SYSTEM_CLOCK.monotonic());
    if (outcome.kind !== 'pending') throw new Error('expected a pending request');
    const { requests, changes } = harness;
    const started = performance.now();
    expect(await requests.wait('demo', outcome.approval.id, 10_000)).toMatchObject({ status: 'expired' });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(changes.map((change) => change.status)).toEqual(['pending', 'expired']);
  });

  it('waits at most 60 s, whatever it is asked', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval'] });
    const { requests, id } = pendingRequest();
    let settled = false;
    const waiting = requests.wait('demo', id, 3_600_000).then((approval) => {
      settled = true;
      return approval;
    });
    await vi.advanceTimersByTimeAsync(59_999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await waiting).toMatchObject({ status: 'pending' });
  });

  it('rejects with not_found for an unknown request, and releases waiters when the project is dropped or the service closes', async () => {
    const pending = pendingRequest();
    const { requests, id } = pending;
    await expect(requests.wait('demo', 'nope', 1000)).rejects.toBeInstanceOf(ApiError);
    await expect(requests.wait('other', id, 1000)).rejects.toMatchObject({ code: 'not_found' });
    const dropped = requests.wait('demo', id, 30_000);
    requests.dropProject('demo');
    expect(await dropped).toMatchObject({ id, status: 'pending' });
    const again = open({ clock: SYSTEM_CLOCK });
    const outcome = again.requests.request('demo', 'QA', 'idea_memory_write', undefined, SYSTEM_CLOCK.monotonic());
    if (outcome.kind !== 'pending') throw new Error('expected a pending request');
    const closing = again.requests.wait('demo', outcome.approval.id, 30_000);
    again.close();
    expect(await closing).toMatchObject({ status: 'pending' });
    pending.close();
  });
});
