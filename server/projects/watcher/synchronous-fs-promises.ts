/**
 * For the watcher thread only: makes `node:fs/promises`' `stat`, `lstat`, `readdir` and `realpath`
 * do their system call synchronously, in the calling thread, and return a settled promise.
 *
 * Why: chokidar's first walk makes ~4 of these calls per watched path (4,000 paths at 1,000
 * projects). Each asynchronous call hops to the libuv pool, which this process shares with the main
 * thread, and back: on a 2-vCPU VM that costs tens of µs of wake-ups per call, and the walk took
 * ~960 ms alone; with synchronous calls, ~640 ms (measured on the same tree, same machine). The
 * walk is on the critical path to ready (SPEC §5: ready once every project is loaded and watched).
 *
 * Why it is safe here: nothing else runs on the watcher thread, so blocking it blocks only the
 * watcher, and a file system that hangs then holds this one thread instead of the shared pool
 * (which the main thread needs for its reloads and writes). The builtin module objects are per
 * thread, so the main thread's `node:fs/promises` is untouched. `syncBuiltinESMExports()` is
 * Node's documented way to make ES module imports of a builtin (`import { stat } from
 * 'node:fs/promises'`, as chokidar and readdirp do) see properties assigned to it; it must run
 * before chokidar is loaded, which copies `stat` and `lstat` into an object as it is evaluated.
 */
import fs from 'node:fs';
import fsPromises from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';

const settled =
  <A extends unknown[], R>(call: (...args: A) => R) =>
  async (...args: A): Promise<R> =>
    call(...args);

export function runFsPromisesSynchronously(): void {
  Object.assign(fsPromises, {
    stat: settled(fs.statSync),
    lstat: settled(fs.lstatSync),
    readdir: settled(fs.readdirSync),
    // The native realpath(3), as fs/promises' own (fs.realpathSync is a slower walk in JavaScript).
    realpath: settled(fs.realpathSync.native),
  });
  syncBuiltinESMExports();
}
