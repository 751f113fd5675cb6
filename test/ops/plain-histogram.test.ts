import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { DECISION_BUCKETS } from '../../server/ops/metrics.js';
import { PlainHistogram } from '../../server/ops/plain-histogram.js';

const NAME = 'pdp_test_duration_seconds';
const HELP = 'A test histogram.';

/** The text both registries export after the same observations (prom-client's Histogram as the reference). */
async function expositions(values: readonly number[]): Promise<{ plain: string; reference: string }> {
  const plainRegistry = new Registry();
  const plain = new PlainHistogram(NAME, HELP, DECISION_BUCKETS, plainRegistry);
  const referenceRegistry = new Registry();
  const reference = new Histogram({ name: NAME, help: HELP, buckets: DECISION_BUCKETS, registers: [referenceRegistry] });
  for (const value of values) {
    plain.observe(value);
    reference.observe(value);
  }
  return { plain: await plainRegistry.metrics(), reference: await referenceRegistry.metrics() };
}

describe('PlainHistogram', () => {
  it("exports exactly prom-client's Histogram text for the same observations", async () => {
    // Bounds themselves, values between and beyond them, and zero.
    const edges = [0, ...DECISION_BUCKETS, ...DECISION_BUCKETS.map((bound) => bound * 1.5), 0.02, 7];
    const { plain, reference } = await expositions(edges);
    expect(plain).toBe(reference);
    expect(plain).toContain(`${NAME}_bucket{le="+Inf"} ${edges.length}`);
  });

  it('matches the reference on any sequence of durations', async () => {
    const duration = fc.oneof(
      fc.double({ min: 0, max: 0.02, noNaN: true }),
      fc.constantFrom(...DECISION_BUCKETS),
      fc.double({ min: 0, max: 1e6, noNaN: true }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(duration, { maxLength: 50 }), async (values) => {
        const { plain, reference } = await expositions(values);
        expect(plain).toBe(reference);
      }),
      { numRuns: 200 },
    );
  });

  it('ignores NaN, infinite and negative durations, which prom-client refuses', async () => {
    const registry = new Registry();
    const histogram = new PlainHistogram(NAME, HELP, DECISION_BUCKETS, registry);
    for (const value of [Number.NaN, Infinity, -Infinity, -1]) histogram.observe(value);
    histogram.observe(0.000004);
    const text = await registry.metrics();
    expect(text).toContain(`${NAME}_count 1`);
    expect(text).toContain(`${NAME}_sum 0.000004`);
  });

  it('starts again from zero after a registry reset', async () => {
    const registry = new Registry();
    const histogram = new PlainHistogram(NAME, HELP, DECISION_BUCKETS, registry);
    histogram.observe(0.001);
    registry.resetMetrics();
    const { reference } = await expositions([]);
    expect(await registry.metrics()).toBe(reference);
  });
});
