/**
 * Token files (docs/api.md#security): a `*_TOKEN_FILE` that is a link, readable or writable by group or
 * others, or holding fewer than 16 characters is refused at start, by a message that names the file
 * and the fix; a safe one is read. The same holds for the service as a real process.
 */
import { chmod, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.js';
import { runUntilExit, START_DEADLINE_MS } from '../support/service-process.js';

const GOOD = 'a-token-of-32-characters-0123456';
const VARIABLES = ['PDP_ADMIN_TOKEN_FILE', 'PDP_DECIDE_TOKEN_FILE', 'PDP_APPROVER_TOKEN_FILE'] as const;

describe('token files', () => {
  let folder: string;
  beforeEach(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'pdp-token-files-'));
  });
  afterEach(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  /** The environment that reads `variable` from `file` and the other tokens directly. */
  const envWith = (variable: (typeof VARIABLES)[number], file: string): NodeJS.ProcessEnv => ({
    PDP_PROJECTS: 'p=/nonexistent',
    PDP_STATE_DIR: path.join(folder, 'state'),
    ...(variable === 'PDP_ADMIN_TOKEN_FILE' ? {} : { PDP_ADMIN_TOKEN: 'admin-token-given-directly-0000' }),
    [variable]: file,
  });

  it('reads a 0600 regular file of 16 or more characters', async () => {
    const file = path.join(folder, 'token');
    await writeFile(file, `  ${GOOD}\n`, { mode: 0o600 });
    expect((await loadConfig(envWith('PDP_APPROVER_TOKEN_FILE', file))).approverToken).toBe(GOOD);
    expect((await loadConfig(envWith('PDP_ADMIN_TOKEN_FILE', file))).adminToken).toBe(GOOD);
    await writeFile(file, 'x'.repeat(16), { mode: 0o600 });
    expect((await loadConfig(envWith('PDP_DECIDE_TOKEN_FILE', file))).decideToken).toBe('x'.repeat(16));
  });

  for (const variable of VARIABLES) {
    it(`refuses ${variable} through a link, of mode 0644, 0660 or 0666, or of 1 or 15 characters, naming the file and the fix`, async () => {
      const real = path.join(folder, 'real-token');
      await writeFile(real, GOOD, { mode: 0o600 });
      const link = path.join(folder, 'link-token');
      await symlink(real, link);
      await expect(loadConfig(envWith(variable, link))).rejects.toThrow(
        new RegExp(`${variable} ${link} is a symbolic link: refusing to start\\. Point ${variable} at the file itself`),
      );
      for (const mode of [0o644, 0o660, 0o666, 0o604]) {
        const file = path.join(folder, `mode-${mode.toString(8)}`);
        await writeFile(file, GOOD);
        await chmod(file, mode);
        const refused = loadConfig(envWith(variable, file));
        await expect(refused).rejects.toBeInstanceOf(ConfigError);
        await expect(refused).rejects.toThrow(`${variable} ${file} is readable or writable by group or others (mode 0${mode.toString(8)})`);
        await expect(refused).rejects.toThrow(`Run: chmod 600 ${file}`);
      }
      for (const text of ['x', 'y'.repeat(15), '  \n', '']) {
        const file = path.join(folder, `short-${text.length}`);
        await writeFile(file, text, { mode: 0o600 });
        await expect(loadConfig(envWith(variable, file))).rejects.toThrow(
          new RegExp(`${variable} ${file} holds \\d+ characters, fewer than 16: refusing to start\\. .*openssl rand`),
        );
      }
    });
  }

  it(
    'keeps the real service from starting on an unsafe token file, with the message in its log',
    { timeout: START_DEADLINE_MS + 5000 },
    async () => {
      const file = path.join(folder, 'approver-token');
      await writeFile(file, GOOD);
      await chmod(file, 0o666);
      const { code, output } = await runUntilExit({
        PDP_PROJECTS: 'p=/nonexistent',
        PDP_PORT: '0',
        PDP_SOCKET: 'off',
        PDP_STATE_DIR: path.join(folder, 'state'),
        PDP_ADMIN_TOKEN: 'admin-token-given-directly-0000',
        PDP_APPROVER_TOKEN_FILE: file,
      });
      expect(code).toBe(1);
      expect(output).toContain(`PDP_APPROVER_TOKEN_FILE ${file} is readable or writable by group or others (mode 0666)`);
      expect(output).not.toContain(GOOD);
    },
  );
});
