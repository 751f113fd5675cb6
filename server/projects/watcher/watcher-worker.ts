/**
 * Entry point of the watcher thread: chokidar runs here, in its own V8 isolate, and forwards its
 * events to the main thread. Why a thread: thousands of watched folders make chokidar keep a
 * large, pointer-rich state, and in the isolate that answers `/decide` that state made every
 * young-generation GC slower and kept a fifth of the request garbage alive until a full GC
 * (measured: 1,000 projects served at ~0.7× the throughput of one). Here it costs nothing while
 * no file changes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runFsPromisesSynchronously } from './synchronous-fs-promises.js';
import { isRelevant, type WatchScope, type WatcherMessage } from './watch-scope.js';

// Before chokidar is loaded: its handler copies `stat` and `lstat` into an object when it is
// evaluated (`statMethods`), which a later change of the live bindings would not reach.
runFsPromisesSynchronously();
const { watch } = await import('chokidar');

const port = parentPort;
if (!port) throw new Error('watcher-worker must run as a worker thread');
const scope = workerData as WatchScope;
const post = (message: WatcherMessage): void => port.postMessage(message);

const paths = [...(scope.root === undefined ? [] : [scope.root]), ...scope.explicitRoots];
const watcher = watch(paths, {
  ignoreInitial: true,
  depth: 2,
  atomic: false, // the rename itself, not chokidar's 100 ms unlink/add coalescing
  ignored: (file) => !isRelevant(scope, file),
});
watcher.on('all', (event, file) => post({ type: 'all', event, file }));
// chokidar throttles and de-duplicates per-file 'change' events, and loses some of a quick series
// of rename-overs (it re-watches the new inode late). The raw inotify events of the watched
// folders are complete, so they are forwarded too.
watcher.on('raw', (_event, rawPath, details) => {
  const watched = (details as { watchedPath?: unknown } | undefined)?.watchedPath;
  post({
    type: 'raw',
    rawPath: typeof rawPath === 'string' ? rawPath : undefined,
    watchedPath: typeof watched === 'string' ? watched : undefined,
  });
});
watcher.on('error', (error) => post({ type: 'error', message: error instanceof Error ? error.message : String(error) }));
watcher.once('ready', () => post({ type: 'ready' }));
port.on('message', (message: { type?: string }) => {
  if (message.type === 'close') void watcher.close().finally(() => port.close());
});
