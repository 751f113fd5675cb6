/**
 * The stdio processes of a conformance run bundled once into plain JavaScript: 2025-11-25 opens a
 * session, hence one or two processes, per scenario, and tsx's start-up per process made a run
 * through the proxy outlast five minutes on a 2-core machine.
 */
import path from 'node:path';
import { build } from 'esbuild';
import { REPO_ROOT } from '../support/service-process.js';

export async function bundle(entry: string, folder: string): Promise<string> {
  const outfile = path.join(folder, `${path.basename(entry, '.ts')}.mjs`);
  await build({
    entryPoints: [path.join(REPO_ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
    // CommonJS dependencies call require().
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  return outfile;
}
