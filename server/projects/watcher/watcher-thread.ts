/**
 * The main-thread side of the watcher thread (see watcher-worker.ts): starts it, hands its events
 * to the registry, restarts it if it ever dies (the registry then re-checks every project, so a
 * change made meanwhile is not missed), and stops it on close.
 *
 * It can be started before the registry exists (main.ts does, so that the first walk of the
 * folders, ~1 s at 1,000 projects, overlaps the loading of the app's modules): events that arrive
 * before {@link WatcherThread.attach} are dropped, which loses nothing because the registry reads
 * every project after attaching, then checks every project once more when the watcher is ready.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import type { WatchScope, WatcherMessage } from './watch-scope.js';

export interface WatcherThreadEvents {
  onEvent(event: string, file: string): void;
  onRaw(rawPath: string | undefined, watchedPath: string): void;
  /** The thread died: until {@link onRestarted}, no change is seen through it. */
  onDown(): void;
  /** A restarted watcher is ready: whatever changed while none ran must be looked for. */
  onRestarted(): void;
}

/** First restart delay; doubled after each restart, up to the maximum, until a thread stays up long enough. */
const RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 10_000;
const STABLE_AFTER_MS = 60_000;
/** The first walk of the folders must finish within this, or the service does not start. */
const START_TIMEOUT_MS = 60_000;
const CLOSE_TIMEOUT_MS = 5_000;
const workerUrl = new URL(`./watcher-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);

/**
 * The young generation of the watcher thread's heap. Nearly everything its first walk allocates is
 * chokidar's state, which survives: with 4 MB, 60 scavenges copied it over and over (~220 ms of GC
 * at 1,000 projects, `--trace-gc`); with 16 MB, 21 scavenges and ~140 ms, for ~5 MB more RSS. Once
 * the walk is done, the thread allocates little.
 */
const RESOURCE_LIMITS = { maxYoungGenerationSizeMb: 16 };

/** From sources (tsx, vitest) the worker needs the TypeScript loader; from dist/ it is plain JS. */
function spawnWorker(scope: WatchScope): Worker {
  if (!workerUrl.pathname.endsWith('.ts')) return new Worker(workerUrl, { workerData: scope, resourceLimits: RESOURCE_LIMITS });
  // tsx's ESM API (its `require` entry cannot register the ESM loader); tsx is pinned in devDependencies.
  const tsxApi = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then(({ register }) => { register(); return import(${JSON.stringify(workerUrl.href)}); })`;
  return new Worker(boot, { eval: true, workerData: scope, resourceLimits: RESOURCE_LIMITS });
}

const NO_EVENTS: WatcherThreadEvents = { onEvent() {}, onRaw() {}, onDown() {}, onRestarted() {} };

export class WatcherThread {
  private worker: Worker | undefined;
  private closed = false;
  private restartTimer: NodeJS.Timeout | undefined;
  private restartDelay = RESTART_DELAY_MS;
  private abortStart: ((error: Error) => void) | undefined;
  private readyAt = 0;
  private events: WatcherThreadEvents = NO_EVENTS;
  private starting: Promise<void> | undefined;
  /** A thread died and its replacement is not ready yet. */
  private down = false;

  constructor(
    readonly scope: WatchScope,
    private readonly logger: Logger,
  ) {}

  /** Where the events go from now on; told at once if the thread is down (between restarts). */
  attach(events: WatcherThreadEvents): void {
    this.events = events;
    if (this.down && !this.closed) events.onDown();
  }

  /**
   * Starts the thread on the first call (later calls return the same promise). Resolves once the
   * first watcher has walked every watched folder; rejects if it cannot start.
   */
  start(): Promise<void> {
    this.starting ??= this.closed ? Promise.reject(new Error('the file watcher was closed before it started')) : this.launchFirst();
    return this.starting;
  }

  private launchFirst(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const settle = (error?: Error): void => {
        clearTimeout(timer);
        this.abortStart = undefined;
        if (error) reject(error);
        else resolve();
      };
      this.abortStart = settle;
      const timer = setTimeout(() => {
        settle(new Error(`the file watcher was not ready within ${START_TIMEOUT_MS} ms`));
        void this.close();
      }, START_TIMEOUT_MS);
      try {
        this.launch({ ready: () => settle(), failed: settle });
      } catch (error) {
        settle(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  /**
   * Starts one thread. `first` is told when the very first thread is ready or dies before being
   * ready (the service then does not start); later threads are restarts.
   */
  private launch(first?: { ready(): void; failed(error: Error): void }): void {
    const worker = spawnWorker(this.scope);
    this.worker = worker;
    let ready = false;
    worker.on('message', (message: WatcherMessage) => {
      if (this.closed || this.worker !== worker) return;
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
          this.down = false;
          this.readyAt = performance.now();
          if (first) first.ready();
          else this.events.onRestarted();
          break;
      }
    });
    worker.on('error', (error) => this.logger.error({ err: error }, 'watcher thread failed'));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = undefined;
      if (this.closed) return;
      if (first && !ready) {
        first.failed(new Error(`the file watcher thread exited (code ${code}) before it was ready`));
        return;
      }
      this.down = true;
      this.events.onDown();
      this.scheduleRestart(code, ready && performance.now() - this.readyAt >= STABLE_AFTER_MS);
    });
  }

  /** Restarts after a delay that doubles while threads keep dying soon after they start. */
  private scheduleRestart(code: number | undefined, wasStable: boolean): void {
    if (wasStable) this.restartDelay = RESTART_DELAY_MS;
    const delay = this.restartDelay;
    this.restartDelay = Math.min(this.restartDelay * 2, MAX_RESTART_DELAY_MS);
    this.logger.error({ code, restartInMs: delay }, 'watcher thread exited; restarting it');
    this.restartTimer = setTimeout(() => {
      if (this.closed) return;
      try {
        this.launch();
      } catch (error) {
        // The thread could not even be created: keep trying (the rescan covers every project meanwhile).
        this.logger.error({ err: error }, 'watcher thread could not start');
        this.scheduleRestart(undefined, false);
      }
    }, delay);
    this.restartTimer.unref();
  }

  /** For tests: the running worker (to simulate a crash). */
  get thread(): Worker | undefined {
    return this.worker;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.abortStart?.(new Error('the file watcher was closed before it was ready'));
    const worker = this.worker;
    if (!worker) return;
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    worker.postMessage({ type: 'close' });
    const timeout = setTimeout(() => void worker.terminate(), CLOSE_TIMEOUT_MS);
    await exited;
    clearTimeout(timeout);
  }
}
