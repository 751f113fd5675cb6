/**
 * Starts a worker thread from a module next to the caller, whether the service runs from its
 * TypeScript sources (tsx, vitest: the worker needs tsx's loader) or from compiled JavaScript.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** `moduleUrl`: the worker module's URL as the caller resolved it (`new URL('./x.js', import.meta.url)`). */
export function spawnWorker(moduleUrl: URL, options: WorkerOptions = {}): Worker {
  const fromSources = import.meta.url.endsWith('.ts');
  const url = fromSources ? new URL(moduleUrl.href.replace(/\.js$/, '.ts')) : moduleUrl;
  if (!fromSources) return new Worker(url, options);
  // tsx's ESM API (its `require` entry cannot register the ESM loader); tsx is pinned in devDependencies.
  const tsxApi = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(boot, { ...options, eval: true });
}
