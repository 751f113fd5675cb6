/**
 * A command line `idea-mcp-proxy` cannot run with ends it at start with code 2 and a message that
 * says what to fix, before any call: never a crash at the first call that needs the option.
 */
import { describe, expect, it } from 'vitest';
import { spawnProxy } from './proxy-process.js';

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
});
