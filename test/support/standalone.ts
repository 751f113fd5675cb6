/** The one-file `idea-pdp` (`npm run build:standalone`): built as a team builds it, run with `node` and nothing else. */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { cleanEnv, npm, runProcess, type CliRun } from './cli.js';
import { REPO_ROOT } from './service-process.js';

/** `npm run build:standalone`, into `outfile` when given (else dist/idea-pdp-standalone.mjs); resolves to the file. */
export async function buildStandalone(outfile?: string): Promise<string> {
  await npm(REPO_ROOT, ['run', '-s', 'build:standalone', ...(outfile === undefined ? [] : ['--', '--outfile', outfile])]);
  return outfile ?? path.join(REPO_ROOT, 'dist', 'idea-pdp-standalone.mjs');
}

/** A child's environment without the test run's npm, PDP and module-resolution settings. */
export function bareEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = cleanEnv();
  delete env.NODE_PATH;
  delete env.NODE_OPTIONS;
  return { ...env, ...extra };
}

/** `node FILE args` in `cwd`. */
export function runStandalone(file: string, args: readonly string[], cwd: string, stdin?: string, env = bareEnv()): Promise<CliRun> {
  return runProcess(process.execPath, [file, ...args], cwd, 60_000, env, stdin);
}

/** The folders from `folder` up to `/` that hold a node_modules Node could resolve a package from. */
export async function nodeModulesAbove(folder: string): Promise<string[]> {
  const found: string[] = [];
  for (let dir = path.resolve(folder); ; dir = path.dirname(dir)) {
    if (
      await access(path.join(dir, 'node_modules')).then(
        () => true,
        () => false,
      )
    )
      found.push(dir);
    if (path.dirname(dir) === dir) return found;
  }
}
