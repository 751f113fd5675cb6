/**
 * `idea-pdp serve` run inside a policy repository, as docs/policy-as-code.md shows it, writes nothing
 * into it (docs/api.md#security): its state folder, admin token included, defaults to
 * `$XDG_STATE_HOME/idea-pdp`, else `~/.local/state/idea-pdp`. The command from the sources, a real
 * git repository, a real port, HOME pointed at a temp folder.
 */
import { spawn } from 'node:child_process';
import { lstat, mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runProcess } from '../support/cli.js';
import { POLICY_FILE, policyText } from '../support/files.js';
import { REPO_ROOT, freePort } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { waitFor } from '../support/wait.js';

const TSX_LOADER = pathToFileURL(path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href;
const SOURCE_BIN = path.join(REPO_ROOT, 'server', 'cli', 'idea-pdp.ts');

async function git(cwd: string, args: string[]): Promise<string> {
  const run = await runProcess('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], cwd);
  if (run.code !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  return run.stdout;
}

/** Runs `idea-pdp serve` in `cwd` until /readyz answers 200, then stops it; resolves with its stderr. */
async function serveOnce(cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', TSX_LOADER, SOURCE_BIN, 'serve'], {
    cwd,
    env: { ...env, PDP_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      'serve ready',
      45_000,
      50,
    );
    // A write through the API, so that grants and recent decisions have something to keep.
    await fetch(`http://127.0.0.1:${port}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project: 'policies', requester: 'QA', tool: 'idea_memory_write' }),
    });
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
  return output;
}

describe('idea-pdp serve inside a policy repository', () => {
  it('writes nothing into it: the admin token and the rest of its state go to ~/.local/state/idea-pdp', async () => {
    const outer = await tempFolder('pdp-serve-state-');
    const repo = path.join(outer, 'policies');
    const home = path.join(outer, 'home');
    await mkdir(path.join(repo, '.ideai'), { recursive: true });
    await mkdir(home);
    await writeFile(path.join(repo, '.ideai', POLICY_FILE), policyText(['idea_memory_read'], {}));
    await git(repo, ['init', '-q']);
    await git(repo, ['add', '-A']);
    await git(repo, ['commit', '-q', '-m', 'policies']);
    const env = cleanEnv();
    delete env.XDG_STATE_HOME;
    const output = await serveOnce(repo, { ...env, HOME: home, PDP_PROJECTS: `policies=${repo}` });

    // Untracked and ignored files both: a `.gitignore` would not make a token in the repository safe.
    expect(await git(repo, ['status', '--porcelain', '--ignored', '--untracked-files=all'])).toBe('');
    expect((await readdir(repo)).sort()).toEqual(['.git', '.ideai']);
    const state = path.join(home, '.local', 'state', 'idea-pdp');
    expect((await lstat(path.join(state, 'admin-token'))).mode & 0o777).toBe(0o600);
    expect((await lstat(state)).mode & 0o777).toBe(0o700);
    expect(output).toContain(`state (admin token, grants, recent decisions) in ${state}`);
    expect(output).not.toContain('.gitignore');
  }, 90_000);

  it('copies the demo projects into $XDG_STATE_HOME/idea-pdp when no project is given, not into the current folder', async () => {
    const outer = await tempFolder('pdp-serve-demo-');
    const repo = path.join(outer, 'repo');
    const xdg = path.join(outer, 'xdg');
    await mkdir(repo);
    await git(repo, ['init', '-q']);
    await serveOnce(repo, { ...cleanEnv(), HOME: path.join(outer, 'home'), XDG_STATE_HOME: xdg });
    expect(await readdir(repo)).toEqual(['.git']);
    expect((await readdir(path.join(xdg, 'idea-pdp'))).sort()).toEqual(expect.arrayContaining(['admin-token', 'demo-projects']));
    await expect(lstat(path.join(outer, 'home'))).rejects.toMatchObject({ code: 'ENOENT' });
  }, 90_000);
});
