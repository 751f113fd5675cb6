/**
 * The standalone file's stand-in for server/projects/spawn-worker.ts (scripts/build-standalone.mjs swaps it
 * in): that file holds every module, so the parse worker of a policy file over 64 KiB is the file itself,
 * started with a role in `workerData` that its entry (standalone.ts) reads.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

export const PARSE_WORKER_ROLE = 'idea-pdp-parse-worker';

/** `moduleUrl` names the worker the caller wants; the parse worker is the only one the offline commands start. */
export function spawnWorker(moduleUrl: URL, options: WorkerOptions = {}): Worker {
  if (!moduleUrl.pathname.endsWith('/parse-worker.js')) throw new Error(`the standalone file holds no worker ${moduleUrl.pathname}`);
  return new Worker(new URL(import.meta.url), { ...options, workerData: { role: PARSE_WORKER_ROLE } });
}
