/**
 * Builds the permissions panel into `dist/ui/`: one esbuild bundle (`app.js`) from the TypeScript
 * sources, plus `index.html` and `styles.css` copied as they are. No network, no CDN.
 * Run with `npm run build:ui` (or `tsx ui/build.ts`).
 */
import { build } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const uiDir = path.dirname(fileURLToPath(import.meta.url));
/** Where the built assets go; `server/ui-plugin.ts` serves this folder. */
export const UI_DIST_DIR = path.resolve(uiDir, '..', 'dist', 'ui');

/** Builds the UI into `outDir` (default `dist/ui/`) and returns that folder. */
export async function buildUi(outDir: string = UI_DIST_DIR): Promise<string> {
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  await build({
    entryPoints: [path.join(uiDir, 'src', 'main.ts')],
    outfile: path.join(outDir, 'app.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022'],
    minify: true,
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  await copyFile(path.join(uiDir, 'index.html'), path.join(outDir, 'index.html'));
  await copyFile(path.join(uiDir, 'styles.css'), path.join(outDir, 'styles.css'));
  return outDir;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = await buildUi();
  process.stdout.write(`UI built into ${path.relative(process.cwd(), outDir) || outDir}\n`);
}
