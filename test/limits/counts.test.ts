/** docs/design.md#usage-limits: the counts' sliding window and their bounded memory. */
import { describe, expect, it } from 'vitest';
import type { ToolLimit } from '../../server/domain/limits.js';
import { CallTimes } from '../../server/domain/call-times.js';
import { UsageCounts } from '../../server/limits/usage-counts.js';
import { measure } from '../../bench/limits-memory.js';

const limit = (max: number, seconds: number): ToolLimit => ({ max, per: `${seconds}s`, windowMs: seconds * 1000 });

describe('call times', () => {
  it('waits until the oldest call of a full window leaves it, and a lower cap counts the calls already kept', () => {
    const times = new CallTimes(10_000);
    for (const at of [0, 1_000, 2_000, 3_000, 4_000]) times.push(at, 5);
    expect(times.waitMs(5_000, 5, 10_000)).toBe(5_000);
    // A call leaves the window exactly `per` after it was made.
    expect(times.waitMs(9_999, 5, 10_000)).toBe(1);
    expect(times.waitMs(10_000, 5, 10_000)).toBe(0);
    // Lowered to 2: the 4th oldest of the window must leave first.
    expect(times.waitMs(5_000, 2, 10_000)).toBe(8_000);
    // Raised: room at once.
    expect(times.waitMs(5_000, 6, 10_000)).toBe(0);
    // Never more than max kept.
    times.push(5_000, 3);
    expect(times.length).toBe(3);
    expect(times.at(0)).toBe(3_000);
  });
});

describe('bounded memory', () => {
  it('a pair holds 8 bytes for each call of its cap and no more, however many calls it is asked', () => {
    let now = 0;
    const counts = new UsageCounts({ clock: { monotonic: () => now, wall: () => now } });
    const cap = limit(20, 60);
    for (let call = 0; call < 1_000; call++) {
      now += 100;
      if (counts.retryAfter('p', 'QA', 'idea_ask_agent', cap) === undefined) counts.count('p', 'QA', 'idea_ask_agent', cap);
    }
    expect(counts.bytes).toBe(20 * 8);
  });

  it('100 projects × 50 agents × 5 limited tools at their caps of 20 hold exactly 8 bytes a counted call in their rings (bench/limits-memory.ts: 1,000 projects)', () => {
    // The heap figure (23.6 B a counted call at 1,000 projects) is measured by the script alone: a shared test process's heap is too noisy to assert.
    const { calls, rings } = measure(100, 50);
    expect(calls).toBe(500_000);
    expect(rings).toBe(500_000 * 8);
  });
});
