/** Small statistics helpers for the benchmark (no dependency, sorted copies, never mutate input). */

/** The q-quantile (0..1) of `values` by nearest rank; NaN for an empty list. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

/**
 * Ratio of two interleaved series: the median of the per-round ratios. Pairing each round's runs
 * cancels slow drift of the machine (thermal, noisy neighbours) better than a ratio of medians.
 */
export function pairedRatio(subject: readonly number[], baseline: readonly number[]): number {
  const ratios: number[] = [];
  for (let i = 0; i < Math.min(subject.length, baseline.length); i += 1) ratios.push(subject[i]! / baseline[i]!);
  return median(ratios);
}

/** Rounds for display: 3 significant digits for small numbers, integers for large ones. */
export function fmt(value: number, unit = ''): string {
  if (!Number.isFinite(value)) return 'n/a';
  const text = Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 10 ? value.toFixed(1) : value.toPrecision(3);
  return unit ? `${text} ${unit}` : text;
}
