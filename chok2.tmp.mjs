import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
const [root, mode] = process.argv.slice(2);
if (mode === 'sync') {
  const wrap = (fn) => async (...args) => fn(...args);
  fsp.stat = wrap(fs.statSync); fsp.lstat = wrap(fs.lstatSync); fsp.readdir = wrap(fs.readdirSync); fsp.realpath = wrap(fs.realpathSync);
  syncBuiltinESMExports();
}
const { watch } = await import('chokidar');
const t0 = performance.now();
const files = new Set(['mcp-tool-permissions.json', 'agents.json']);
const ignored = (f) => {
  if (f === root) return false;
  const parent = path.dirname(f);
  if (parent === root) return false;
  const name = path.basename(f);
  if (name === '.ideai') return false;
  return !(files.has(name) && path.basename(parent) === '.ideai');
};
const w = watch([root], { ignoreInitial: true, depth: 2, atomic: false, ignored });
w.on('ready', async () => { console.log(mode, 'ready', Math.round(performance.now() - t0), 'ms', Object.values(w.getWatched()).flat().length); await w.close(); });
