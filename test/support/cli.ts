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

/** Runs `command args` in `cwd` and resolves whatever its exit code. */
export function runProcess(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs = 60_000,
  env: NodeJS.ProcessEnv = process.env,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    execFile(command, [...args], { cwd, env, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        reject(new Error(`${command} did not run: ${error.message}\n${stderr}`));
        return;
      }
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr });
    });
  });
}

/** `idea-pdp args` from the sources (the packed command is tested by test/cli/package.test.ts). */
export function runSourceCli(args: readonly string[], cwd: string): Promise<CliRun> {
  return runProcess(process.execPath, ['--import', TSX_LOADER, SOURCE_BIN, ...args], cwd);
}
