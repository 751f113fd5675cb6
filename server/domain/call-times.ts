/**
 * The times of one requester's counted calls of one tool (docs/design.md#usage-limits): a ring of
 * monotonic milliseconds, oldest first, holding at most the last `max` calls of the limit in force
 * when each was counted. 8 bytes a counted call; the ring grows by doubling up to `max`. Pure data:
 * the service's counts (server/limits/usage-counts.ts) and a preview's replay both keep their calls in it.
 */
import type { LimitsPort, ToolLimit } from './limits.js';

/** The smallest ring: most limits are a few calls, and a ring is made on the first one. */
const FIRST_CAPACITY = 4;

export class CallTimes {
  private times: Float64Array;
  private head = 0;
  private size = 0;
  /** The window of the limit last counted with: the times older than it no longer count for it. */
  windowMs: number;

  constructor(windowMs: number, capacity = FIRST_CAPACITY) {
    this.times = new Float64Array(capacity);
    this.windowMs = windowMs;
  }

  /** Bytes held by the ring's storage. */
  get bytes(): number {
    return this.times.byteLength;
  }

  /** The calls kept, counted or not in a window. */
  get length(): number {
    return this.size;
  }

  /** The `index`-th oldest time kept. */
  at(index: number): number {
    return this.times[(this.head + index) % this.times.length] ?? 0;
  }

  /** The index of the oldest kept time later than `after` (= length when none is). */
  private firstAfter(after: number): number {
    let low = 0;
    let high = this.size;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.at(middle) > after) high = middle;
      else low = middle + 1;
    }
    return low;
  }

  /** How many kept calls are in the window of `windowMs` ending at `now`. */
  inWindow(now: number, windowMs: number): number {
    return this.size - this.firstAfter(now - windowMs);
  }

  /**
   * Milliseconds until fewer than `max` kept calls are in the window (when a call may be allowed
   * again), or 0 when there are already fewer.
   */
  waitMs(now: number, max: number, windowMs: number): number {
    const first = this.firstAfter(now - windowMs);
    const inWindow = this.size - first;
    if (inWindow < max) return 0;
    // Once the (inWindow - max + 1) oldest calls of the window have left it, max - 1 remain.
    return this.at(first + inWindow - max) + windowMs - now;
  }

  /** Seconds until a call may be allowed again under `limit` (at least 1), or undefined when one may be now. */
  retryAfterSeconds(now: number, limit: ToolLimit): number | undefined {
    const wait = this.waitMs(now, limit.max, limit.windowMs);
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : undefined;
  }

  /** Counts a call at `now` (never earlier than the last one), keeping at most the last `max`, and only those still in the window. */
  push(now: number, max: number): void {
    while (this.size > 0 && (this.size >= max || this.at(0) <= now - this.windowMs)) this.dropOldest();
    if (this.size === this.times.length) this.grow(max);
    const last = this.size === 0 ? Number.NEGATIVE_INFINITY : this.at(this.size - 1);
    this.times[(this.head + this.size) % this.times.length] = Math.max(now, last);
    this.size++;
  }

  /** Forgets the calls no window of `windowMs` ending at `now` or later can count; true when none is left. */
  prune(now: number, windowMs: number): boolean {
    const first = this.firstAfter(now - windowMs);
    for (let index = 0; index < first; index++) this.dropOldest();
    return this.size === 0;
  }

  private dropOldest(): void {
    this.head = (this.head + 1) % this.times.length;
    this.size--;
  }

  private grow(max: number): void {
    const capacity = Math.min(Math.max(this.times.length * 2, FIRST_CAPACITY), Math.max(max, this.size + 1));
    const grown = new Float64Array(capacity);
    for (let index = 0; index < this.size; index++) grown[index] = this.at(index);
    this.times = grown;
    this.head = 0;
  }
}

/**
 * Counts without bounds on the time `now` gives: a preview's replay, which counts at most the ring's
 * 1,000 calls of one project, far below the service's bounds (server/limits/usage-counts.ts).
 */
export class WindowCounts implements LimitsPort {
  private readonly calls = new Map<string, CallTimes>();

  constructor(private readonly now: () => number) {}

  retryAfter(project: string, requester: string, tool: string, limit: ToolLimit): number | undefined {
    return this.calls.get(JSON.stringify([project, requester, tool]))?.retryAfterSeconds(this.now(), limit);
  }

  count(project: string, requester: string, tool: string, limit: ToolLimit): void {
    const key = JSON.stringify([project, requester, tool]);
    let calls = this.calls.get(key);
    if (calls === undefined) this.calls.set(key, (calls = new CallTimes(limit.windowMs)));
    calls.windowMs = limit.windowMs;
    calls.push(this.now(), limit.max);
  }
}
