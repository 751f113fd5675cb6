/**
 * The entry of `dist/idea-pdp-standalone.mjs` (scripts/build-standalone.mjs): `idea-pdp` without `serve`,
 * in one file that needs nothing but Node. In a worker thread started by standalone-worker.ts the same
 * file is the parse worker instead.
 */
import { isMainThread, workerData } from 'node:worker_threads';
import { PARSE_WORKER_ROLE } from './standalone-worker.js';

/** The package's version, written in by the build (the file has no package.json beside it to read). */
declare const IDEA_PDP_VERSION: string | undefined;

const role = isMainThread ? undefined : (workerData as { role?: unknown } | null)?.role;
const first = process.argv[2];
if (role === PARSE_WORKER_ROLE) await import('../projects/parse-worker.js');
else if (first === '--version' || first === '-v')
  process.stdout.write(`${typeof IDEA_PDP_VERSION === 'string' ? IDEA_PDP_VERSION : 'unknown'}\n`);
else await import('./idea-pdp.js');
