/**
 * Bundles the offline commands of `idea-pdp` into `dist/server/cli/offline-commands.js` (over
 * tsc's output), so `idea-pdp check` loads one file instead of ~250
 * (bench/README.md#idea-pdp-check-start-up). Run by `npm run build` after tsc.
 */
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

await build({
  entryPoints: [path.join(root, 'server', 'cli', 'offline-commands.ts')],
  outfile: path.join(root, 'dist', 'server', 'cli', 'offline-commands.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: ['node20'],
  // TypeBox is bundled with the code; nothing else from node_modules is reached by these commands.
  packages: 'bundle',
  minify: true,
  logLevel: 'warning',
});
