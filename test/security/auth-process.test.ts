/**
 * docs/api.md#security end to end through `server/main.ts` as a child process: the refusal to listen on a
 * non-loopback host without a decide token, the generated admin token file (0600, path logged,
 * token never logged), and tokens never appearing in logs or in 401 bodies.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../server/config.js';
import { makeTree, policyText, type TempTree } from '../support/files.js';
import { START_DEADLINE_MS, runUntilExit, startService, type ServiceProcess } from '../support/service-process.js';
import { READ_TOOLS } from '../support/tools.js';

const TIMEOUT = 2 * START_DEADLINE_MS + 20_000;
const trees: TempTree[] = [];
const services: ServiceProcess[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((service) => service.stop(2_000)));
  await Promise.all(trees.splice(0).map((tree) => tree.remove()));
});

async function tree(): Promise<TempTree> {
  const made = await makeTree({ demo: policyText(undefined, { QA: [...READ_TOOLS] }), broken: null });
  trees.push(made);
  // `.ideai` of "broken" is replaced by a file: any write there fails (500 write_failed), a logged error path.
  const ideai = path.join(made.root, 'broken', '.ideai');
  await rm(ideai, { recursive: true });
  await writeFile(ideai, 'not a folder');
  return made;
}

describe('refusal to listen on a non-loopback host without PDP_DECIDE_TOKEN', () => {
  it('exits non-zero with a clear message, before creating any state', { timeout: TIMEOUT }, async () => {
    const made = await tree();
    const adminToken = `admin-${randomBytes(16).toString('hex')}`;
    const base = { PDP_PORT: '0', PDP_PROJECTS_ROOT: made.root, PDP_ADMIN_TOKEN: adminToken };
    const runs = await Promise.all([
      runUntilExit({ ...base, PDP_HOST: '0.0.0.0', PDP_STATE_DIR: path.join(made.outer, 'state-a') }),
      // Empty means unset (docs/api.md#security), and the admin token does not replace the decide token.
      runUntilExit({ ...base, PDP_HOST: '0.0.0.0', PDP_DECIDE_TOKEN: '', PDP_STATE_DIR: path.join(made.outer, 'state-b') }),
    ]);
    for (const run of runs) {
      expect(run.code, run.output).not.toBe(0);
      expect(run.code, run.output).not.toBeNull();
      expect(run.output).toMatch(/Refusing to listen on 0\.0\.0\.0 without PDP_DECIDE_TOKEN/);
      expect(run.output).not.toContain('Server listening');
      expect(run.output).not.toContain(adminToken);
    }
    await expect(stat(path.join(made.outer, 'state-a'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(path.join(made.outer, 'state-b'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('classifies hosts: only loopback names and addresses are accepted without a decide token', async () => {
    const env = (host: string): NodeJS.ProcessEnv => ({ PDP_HOST: host, PDP_ADMIN_TOKEN: 'x', PDP_PROJECTS: 'p=/nonexistent' });
    for (const host of ['0.0.0.0', '::', '192.168.1.10', '10.0.0.1', 'example.com', '127.0.0.1.nip.io', '::ffff:127.0.0.1', ' 127.0.0.1']) {
      await expect(loadConfig(env(host)), host).rejects.toBeInstanceOf(ConfigError);
    }
    for (const host of ['127.0.0.1', '127.0.0.2', '::1', 'localhost']) {
      await expect(loadConfig(env(host)), host).resolves.toMatchObject({ host });
    }
    await expect(loadConfig({ ...env('0.0.0.0'), PDP_DECIDE_TOKEN: 'd' })).resolves.toMatchObject({ decideToken: 'd' });
  });
});

describe('generated admin token and tokens in logs', () => {
  it(
    'writes PDP_STATE_DIR/admin-token with mode 0600, logs its path, never a token, keeps it across a restart',
    { timeout: TIMEOUT },
    async () => {
      const made = await tree();
      const stateDir = path.join(made.outer, 'state');
      const decideToken = `decide-${randomBytes(16).toString('hex')}`;
      const decideTokenFile = path.join(made.outer, 'decide-token');
      await writeFile(decideTokenFile, `${decideToken}\n`, { mode: 0o600 });
      const env = {
        PDP_PROJECTS_ROOT: made.root,
        PDP_STATE_DIR: stateDir,
        PDP_DECIDE_TOKEN_FILE: decideTokenFile,
        PDP_LOG_LEVEL: 'trace', // the most verbose level: every log line the service can write is scanned
      };
      const first = await startService(env);
      services.push(first);
      const tokenFile = path.join(stateDir, 'admin-token');
      const info = await stat(tokenFile);
      expect(info.mode & 0o777).toBe(0o600);
      expect((await stat(stateDir)).mode & 0o777).toBe(0o700);
      const adminToken = (await readFile(tokenFile, 'utf8')).trim();
      expect(adminToken.length).toBeGreaterThanOrEqual(32);
      expect(first.output()).toContain(tokenFile);

      const wrongTokens = [`wrong-${randomBytes(16).toString('hex')}`, `${adminToken}x`, adminToken.slice(0, -1)];
      const url = (route: string): string => `${first.baseUrl}${route}`;
      const send = (method: string, route: string, token: string | undefined, body?: unknown): Promise<Response> =>
        fetch(url(route), {
          method,
          headers: {
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
      const grant = { allowedTools: ['idea_memory_write'] };
      const query = { project: 'demo', requester: 'Main', tool: 'idea_memory_write' };

      for (const token of [undefined, decideToken, ...wrongTokens]) {
        const response = await send('PUT', '/projects/demo/mcp-tool-permissions/agents/Main', token, grant);
        const text = await response.text();
        expect(response.status, String(token)).toBe(401);
        expect(JSON.parse(text)).toMatchObject({ error: { code: 'unauthorized' } });
        for (const secret of [adminToken, decideToken, ...wrongTokens]) expect(text).not.toContain(secret);
      }
      for (const token of [undefined, ...wrongTokens]) {
        const response = await send('POST', '/decide', token, query);
        const text = await response.text();
        expect(response.status).toBe(401);
        for (const secret of [adminToken, decideToken, ...wrongTokens]) expect(text).not.toContain(secret);
      }
      // The right tokens work: reads with either token, writes with the admin token only.
      expect((await (await send('POST', '/decide', decideToken, query)).json()) as unknown).toMatchObject({ allow: false });
      expect((await send('PUT', '/projects/demo/mcp-tool-permissions/agents/Main', adminToken, grant)).status).toBe(200);
      expect((await (await send('POST', '/decide', adminToken, query)).json()) as unknown).toMatchObject({ allow: true });
      expect((await send('GET', '/projects/demo/decisions?limit=5', decideToken)).status).toBe(200);
      // Tokens in unusual places: a query string, a second header, an error path that logs.
      expect((await send('GET', `/catalog?token=${adminToken}`, wrongTokens[0])).status).toBe(401);
      const odd = await fetch(url('/decide'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${decideToken}`, 'x-api-key': adminToken },
        body: '{"project":"demo","requester":"Main","tool":',
      });
      expect(odd.status).toBe(400);
      const failed = await send('PUT', '/projects/broken/mcp-tool-permissions/agents/Main', adminToken, grant);
      expect(failed.status).toBe(500);
      expect(await failed.json()).toMatchObject({ error: { code: 'write_failed' } });

      expect(await first.stop()).toEqual({ code: 0, signal: null });
      const firstOutput = first.output();
      expect(firstOutput).toMatch(/decision denied/); // denials are logged (so the scan below is not vacuous)
      for (const secret of [adminToken, decideToken, ...wrongTokens]) {
        expect(firstOutput).not.toContain(secret);
        expect(firstOutput).not.toContain(secret.slice(0, 24));
      }

      // A restart keeps the token (an open panel is not locked out); deleting the file rotates it.
      const second = await startService(env);
      services.push(second);
      expect((await readFile(tokenFile, 'utf8')).trim()).toBe(adminToken);
      const kept = await fetch(`${second.baseUrl}/projects/demo/mcp-tool-permissions/agents/QA`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(kept.status).toBe(200);
      await second.stop();
      expect(second.output()).toContain(tokenFile);
      expect(second.output()).not.toContain(adminToken);

      await rm(tokenFile);
      const third = await startService(env);
      services.push(third);
      const rotated = (await readFile(tokenFile, 'utf8')).trim();
      expect(rotated).not.toBe(adminToken);
      expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
      const stale = await fetch(`${third.baseUrl}/projects/demo/mcp-tool-permissions/agents/QA`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${adminToken}` },
      });
      expect(stale.status).toBe(401);
      await third.stop();
      expect(third.output()).not.toContain(rotated);
      expect(third.output()).not.toContain(adminToken);
    },
  );
});
