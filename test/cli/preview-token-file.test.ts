/**
 * `idea-pdp preview --server` reads PDP_DECIDE_TOKEN_FILE under the service's rules for that file
 * (docs/api.md#security): a file others may read, a link or a short token is a usage error naming the
 * file and the fix, before anything is sent.
 */
import { chmod, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { previewCommand } from '../../server/cli/preview-command.js';
import { UsageError } from '../../server/cli/usage.js';
import { tempFolder } from '../support/temp-folder.js';

const output = { out: () => undefined, err: () => undefined };
afterEach(() => {
  vi.unstubAllEnvs();
});

async function previewWith(tokenFile: string, policy: string): Promise<unknown> {
  vi.stubEnv('PDP_DECIDE_TOKEN_FILE', tokenFile);
  // Port 9 (discard): nothing answers there, so only a refusal before the request can end it with a UsageError.
  return previewCommand([policy], { server: 'http://127.0.0.1:9/', project: 'demo', json: false }, output).catch((error: unknown) => error);
}

describe('idea-pdp preview --server and PDP_DECIDE_TOKEN_FILE', () => {
  it('refuses a token file of mode 0644, a link to one, and one of 15 characters, naming the file and the fix', async () => {
    const folder = await tempFolder();
    const policy = path.join(folder, 'policy.json');
    await writeFile(policy, '{"version":1}');
    const open = path.join(folder, 'open-token');
    await writeFile(open, 'a-token-of-32-characters-0123456');
    await chmod(open, 0o644);
    const refusedOpen = await previewWith(open, policy);
    expect(refusedOpen).toBeInstanceOf(UsageError);
    expect((refusedOpen as Error).message).toBe(
      `PDP_DECIDE_TOKEN_FILE ${open} is readable or writable by group or others (mode 0644). Run: chmod 600 ${open}`,
    );
    const link = path.join(folder, 'link-token');
    await symlink(open, link);
    expect(String(await previewWith(link, policy))).toContain(`PDP_DECIDE_TOKEN_FILE ${link} is a symbolic link`);
    const short = path.join(folder, 'short-token');
    await writeFile(short, 'y'.repeat(15), { mode: 0o600 });
    expect(String(await previewWith(short, policy))).toContain(`PDP_DECIDE_TOKEN_FILE ${short} holds 15 characters, fewer than 16`);
    // A safe file is read: the command gets as far as the request, which fails on the closed port.
    const safe = path.join(folder, 'safe-token');
    await writeFile(safe, 'a-token-of-32-characters-0123456\n', { mode: 0o600 });
    const sent = await previewWith(safe, policy);
    expect(sent).toBeInstanceOf(Error);
    expect(sent).not.toBeInstanceOf(UsageError);
  });
});
