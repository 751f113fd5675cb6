/** Runs `idea-pdp` as a user would: a child process in a folder of its own, its exit code and its output. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from './service-process.js';

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** tsx's loader by path: the child's folder has no node_modules to resolve `tsx` from. */
const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
const SOURCE_BIN = path.join(REPO_ROOT, 'server', 'cli', 'idea-pdp.ts');

/** Runs `command args` in `cwd` and resolves whatever its exit code; `stdin` is written to its standard input, else it gets none. */
export function runProcess(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 60_000,
  env: NodeJS.ProcessEnv = process.env,
  stdin?: string | Buffer,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, [...args], { cwd, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        reject(new Error(`${command} did not run: ${error.message}\n${stderr}`));
        return;
      }
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
    });
    // A child that stops reading early (a refusal) closes the pipe: that is its answer, not the test's error.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(stdin);
  });
}

/** The command line that runs `idea-pdp` from the sources, for a shell (process substitution, pipes). */
export const SOURCE_CLI_COMMAND: readonly string[] = [process.execPath, '--import', TSX_LOADER, SOURCE_BIN];

/** `idea-pdp args` from the sources (the packed command is tested by test/cli/package.test.ts). */
export function runSourceCli(args: readonly string[], cwd: string, stdin?: string | Buffer): Promise<CliRun> {
  return runProcess(process.execPath, [...SOURCE_CLI_COMMAND.slice(1), ...args], cwd, 60_000, process.env, stdin);
}

/** The environment of a nested npm or of the installed command: none of the npm_* or PDP_* variables of the test run. */
export function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.toLowerCase().startsWith('npm_') && !key.startsWith('PDP_')) env[key] = value;
  return env;
}

export async function npm(cwd: string, args: string[]): Promise<string> {
  const result = await runProcess('npm', args, cwd, 600_000, cleanEnv());
  if (result.code !== 0) throw new Error(`npm ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

export interface InstalledPackage {
  /** The folder the package is installed in (its node_modules/.bin/idea-pdp). */
  readonly app: string;
  /** The paths the tarball holds, sorted. */
  readonly files: readonly string[];
  /** Runs the installed `idea-pdp` in `cwd` (default: the app folder). */
  idea(args: readonly string[], cwd?: string, env?: NodeJS.ProcessEnv): Promise<CliRun>;
}

/** `npm run build`, `npm pack` at the repository root and `npm install` of the tarball in `folder/app`, as a user does. */
export async function installPackage(folder: string): Promise<InstalledPackage> {
  const { mkdir, writeFile } = await import('node:fs/promises');
  // What prepack runs, run first so that `npm pack --json` prints only its JSON.
  await npm(REPO_ROOT, ['run', 'build', '--silent']);
  const packed = JSON.parse(await npm(REPO_ROOT, ['pack', '--ignore-scripts', '--json', '--pack-destination', folder])) as {
    filename: string;
    files: { path: string }[];
  }[];
  const tarball = path.join(folder, packed[0]?.filename ?? 'missing.tgz');
  const app = path.join(folder, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'policies', version: '1.0.0', private: true }));
  await npm(app, ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']);
  const bin = path.join(app, 'node_modules', '.bin', 'idea-pdp');
  return {
    app,
    files: (packed[0]?.files ?? []).map((file) => file.path).sort(),
    idea: (args, cwd = app, env = cleanEnv()) => runProcess(bin, args, cwd, 60_000, env),
  };
}
