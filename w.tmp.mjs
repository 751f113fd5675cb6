import { WatcherThread } from '/work/main/dist/server/store/watcher-thread.js';
import { watchScopeOf } from '/work/main/dist/server/store/watch-scope.js';
import pino from 'pino';
const root = process.argv[2];
const t0 = performance.now();
const w = new WatcherThread(watchScopeOf(root, {}), pino({ level: 'silent' }));
await w.start();
console.log('watcher ready', Math.round(performance.now() - t0), 'ms');
await w.close();
