/**
 * A command line `idea-mcp-proxy` cannot run with ends it at start with code 2 and a message that
 * says what to fix, before any call: never a crash at the first call that needs the option.
 */
import { execFileSync } from 'node:child_process';
import { chmod, chown, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommand, UsageError } from '../../client/proxy/options.js';
import { AS_ROOT, NOBODY } from '../support/hostile-socket.js';
import { tempFolder } from '../support/temp-folder.js';
import { spawnProxy } from '../support/proxy-process.js';

const GOOD = 'a-decide-token-of-32-characters0';

/** The token `--token-file file` (and `--approver-token-file file`) reads, or the refusal's message. */
function tokenFrom(file: string, option = '--token-file'): string {
  try {
    const command = parseCommand(['--project', 'demo', option, file, '--', 'server'], {});
    return (option === '--token-file' ? command?.token : command?.approverToken) ?? '(none)';
  } catch (error) {
    if (error instanceof UsageError) return `refused: ${error.message}`;
    throw error;
  }
}

async function refused(options: readonly string[]): Promise<string> {
  const proxy = spawnProxy(['--project', 'demo', ...options], {});
  const exited = await Promise.race([proxy.exited, new Promise((resolve) => setTimeout(resolve, 15_000, 'still running'))]);
  if (exited === 'still running') proxy.child.kill('SIGKILL');
  expect(exited).toEqual({ code: 2, signal: null });
  return proxy.stderr().split('\n')[0] ?? '';
}

describe('idea-mcp-proxy command line', () => {
  it('refuses an approval wait longer than the guards accept (a day)', async () => {
    expect(await refused(['--approval-wait-ms', '86400001'])).toBe(
      'idea-mcp-proxy: --approval-wait-ms must be at most 86400000 ms (got 86400001)',
    );
  });

  it('refuses what its client of the service would refuse: a URL that is not http(s), a zero deadline', async () => {
    expect(await refused(['--pdp', 'ftp://127.0.0.1:8787'])).toContain(
      'idea-mcp-proxy: PdpClient: baseUrl must be an absolute http:// or https:// URL',
    );
    expect(await refused(['--timeout-ms', '0'])).toContain(
      'idea-mcp-proxy: PdpClient: timeoutMs must be a number of milliseconds greater than 0',
    );
  });

  it("reads a token file under the service's rules: not a link, owner only, 16 characters or more", async () => {
    const folder = await tempFolder();
    const good = path.join(folder, 'token');
    await writeFile(good, `  ${GOOD}\n`, { mode: 0o600 });
    for (const option of ['--token-file', '--approver-token-file']) {
      expect(tokenFrom(good, option)).toBe(GOOD);
      const link = path.join(folder, `link${option}`);
      await symlink(good, link);
      expect(tokenFrom(link, option)).toBe(
        `refused: ${option} ${link} is a symbolic link: refusing to start. Point ${option} at the file itself, not at a link to it.`,
      );
    }
    for (const mode of [0o644, 0o640, 0o660, 0o604, 0o602]) {
      const file = path.join(folder, `mode-${mode.toString(8)}`);
      await writeFile(file, GOOD);
      await chmod(file, mode);
      expect(tokenFrom(file)).toBe(
        `refused: --token-file ${file} is readable or writable by group or others (mode 0${mode.toString(8)}): refusing to start. Run: chmod 600 ${file}`,
      );
    }
    for (const text of ['x', 'y'.repeat(15), '  \n']) {
      const file = path.join(folder, `short-${String(text.length)}`);
      await writeFile(file, text, { mode: 0o600 });
      expect(tokenFrom(file)).toMatch(
        new RegExp(`^refused: --token-file ${file} holds \\d+ characters, fewer than 16: refusing to start\\. .*openssl rand`),
      );
    }
    const fifo = path.join(folder, 'fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    expect(tokenFrom(fifo)).toBe(
      `refused: --token-file ${fifo} is not a regular file: refusing to start. Point --token-file at a regular file holding the token.`,
    );
    const sub = path.join(folder, 'sub');
    await mkdir(sub, { mode: 0o700 });
    expect(tokenFrom(sub)).toContain(`--token-file ${sub} is not a regular file`);
    expect(tokenFrom(path.join(folder, 'absent'))).toContain(`--token-file ${path.join(folder, 'absent')} cannot be opened (ENOENT)`);
  });

  it.skipIf(!AS_ROOT)('refuses a token file of another user, even of mode 0600', async () => {
    const file = path.join(await tempFolder(), 'token');
    await writeFile(file, GOOD, { mode: 0o600 });
    await chown(file, NOBODY, NOBODY);
    expect(tokenFrom(file)).toBe(
      `refused: --token-file ${file} belongs to uid ${String(NOBODY)}, neither this user's (uid 0) nor root: refusing to start. Run: chown 0 ${file}`,
    );
  });

  it('refuses an unsafe token file at start, naming the file and the fix', async () => {
    const file = path.join(await tempFolder(), 'token');
    await writeFile(file, GOOD);
    await chmod(file, 0o644);
    expect(await refused(['--token-file', file])).toBe(
      `idea-mcp-proxy: --token-file ${file} is readable or writable by group or others (mode 0644): refusing to start. Run: chmod 600 ${file}`,
    );
  });
});
