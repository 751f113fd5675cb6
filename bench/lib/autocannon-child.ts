/**
 * Fallback load generator: runs autocannon in its own process (argv[2] = JSON LoadOptions) and
 * prints one JSON LoadResult line. Used only when wrk cannot be had.
 */
import type { LoadOptions, LoadResult } from './load.js';

interface AutocannonResult {
  requests: { average: number };
  latency: { average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
  requestsTotal?: number;
}
type Autocannon = (options: object) => Promise<AutocannonResult>;

const options = JSON.parse(process.argv[2] ?? '{}') as LoadOptions;
// autocannon ships no type declarations; the shape used here is its documented result object.
const autocannon = ((await import('autocannon' as string)) as { default: Autocannon }).default;
const result = await autocannon({
  url: `${options.origin}/decide`,
  connections: options.connections,
  duration: options.durationSec,
  requests: options.bodies.map((body) => ({
    method: 'POST',
    path: '/decide',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })),
});
const output: LoadResult = {
  requestsPerSec: result.requests.average,
  requests: result.requestsTotal ?? Math.round(result.requests.average * options.durationSec),
  errors: result.non2xx + result.errors + result.timeouts,
  latencyAvgMs: result.latency.average,
};
process.stdout.write(`${JSON.stringify(output)}\n`);
