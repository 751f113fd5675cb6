/**
 * The main-thread side of the watcher thread (see watcher-worker.ts): starts it, hands its events
 * to the registry, restarts it if it ever dies (the registry then re-checks every project, so a
 * change made meanwhile is not missed), and stops it on close.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { WatchScope, WatcherMessage } from './watch-scope.js';

export interface WatcherThreadEvents {
  onEvent(event: string, file: string): void;
  onRaw(rawPath: string | undefined, watchedPath: string): void;
  /** A restarted watcher is ready: whatever changed while none ran must be looked for. */
  onRestarted(): void;
}

const RESTART_DELAY_MS = 500;
const CLOSE_TIMEOUT_MS = 5_000;
const workerUrl = new URL(`./watcher-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/** The watcher thread allocates little once it has walked the folders: a small young generation keeps its memory small. */
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 4 };

/** From sources (tsx, vitest) the worker needs the TypeScript loader; from dist/ it is plain JS. */
function spawnWorker(scope: WatchScope): Worker {
  if (!workerUrl.pathname.endsWith('.ts')) return new Worker(workerUrl, { workerData: scope, resourceLimits: RESOURCE_LIMITS });
  // tsx's ESM API (its `require` entry cannot register the ESM loader); tsx is pinned in devDependencies.
  const tsxApi = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(workerUrl.href)}); })`;
  return new Worker(boot, { eval: true, workerData: scope, resourceLimits: RESOURCE_LIMITS });
}

export class WatcherThread {
  private worker: Worker | undefined;
  private closed = false;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly scope: WatchScope,
    private readonly events: WatcherThreadEvents,
    private readonly logger: Logger,
  ) {}

  /** Resolves once the first watcher has walked every watched folder; rejects if it cannot start. */
  start(): Promise<void> {
    return this.launch(false);
  }

  private launch(restart: boolean): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const worker = spawnWorker(this.scope);
      this.worker = worker;
      let ready = false;
      worker.on('message', (message: WatcherMessage) => {
        switch (message.type) {
          case 'all':
            this.events.onEvent(message.event, message.file);
            break;
          case 'raw':
            if (message.watchedPath !== undefined) this.events.onRaw(message.rawPath, message.watchedPath);
            break;
          case 'error':
            this.logger.warn({ error: message.message }, 'watcher error');
            break;
          case 'ready':
            ready = true;
            if (restart) this.events.onRestarted();
            resolve();
            break;
        }
      });
      worker.on('error', (error) => this.logger.error({ err: error }, 'watcher thread failed'));
      worker.on('exit', (code) => {
        if (this.worker === worker) this.worker = undefined;
        if (this.closed) return;
        if (!ready && !restart) {
          reject(new Error(`the file watcher thread exited (code ${code}) before it was ready`));
          return;
        }
        this.logger.error({ code }, 'watcher thread exited; restarting it');
        this.restartTimer = setTimeout(() => {
          if (!this.closed) this.launch(true).catch((error: unknown) => this.logger.error({ err: error }, 'watcher restart failed'));
        }, RESTART_DELAY_MS);
        this.restartTimer.unref();
        if (!ready) resolve();
      });
    });
  }

  /** For tests: the running worker (to simulate a crash). */
  get thread(): Worker | undefined {
    return this.worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' });
    const timeout = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
    await exited;
    clearTimeout(timeout);
  }
}
