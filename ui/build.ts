/**
 * Builds the permissions panel into `dist/ui/`: one esbuild bundle (`app.js`) from the TypeScript
 * sources, plus `index.html` and `styles.css` copied as they are. No network, no CDN.
 * Run with `npm run build:ui` (or `tsx ui/build.ts`).
 */
import { build } from 'esbuild';
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const uiDir = path.dirname(fileURLToPath(import.meta.url));
/** Where the built assets go; `server/http/ui-plugin.ts` serves this folder. */
export const UI_DIST_DIR = path.resolve(uiDir, '..', 'dist', 'ui');

/**
 * Builds the UI into `outDir` (default `dist/ui/`) and returns that folder. Each file is written
 * to a temp name and renamed over the old one, so a service serving the folder (or a second build
 * running at the same time, e.g. two test files) never sees a half-written file.
 */
export async function buildUi(outDir: string = UI_DIST_DIR): Promise<string> {
  await mkdir(outDir, { recursive: true });
  const result = await build({
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
    write: false,
  });
  const files = result.outputFiles.map((file) => ({ target: file.path, contents: file.contents }));
  for (const name of ['index.html', 'styles.css']) {
    files.push({ target: path.join(outDir, name), contents: await readFile(path.join(uiDir, name)) });
  }
  for (const { target, contents } of files) {
    const temp = `${target}.${process.pid}.${randomUUID()}.tmp`;
    await writeFile(temp, contents);
    await rename(temp, target);
  }
  return outDir;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = await buildUi();
  // stdout stays for the service's JSON log lines when `npm start` runs this first (docs/operations.md).
  process.stderr.write(`UI built into ${path.relative(process.cwd(), outDir) || outDir}\n`);
}
