/**
 * The unix domain socket (docs/api.md#security) on the real service process: `PDP_STATE_DIR/pdp.sock` by
 * default, mode 0600 in the 0700 state folder, the same app as TCP; a stale socket of its own is
 * replaced, anything else at the path refuses the start; a path over 107 bytes is an error when
 * given and a warning when it is the default; `PDP_SOCKET=off` disables it. And the attack it
 * answers: while the service is down, a process on its TCP port answers "allow" to a TCP client,
 * never to a socket client.
 */
import { lstat, mkdir, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PdpClient } from '../../client/index.js';
import { READ_TOOLS } from '../support/tools.js';
import { writeProject } from '../support/files.js';
import { freePort, runUntilExit, START_DEADLINE_MS, startService, type ServiceProcess } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';

const ADMIN = 'unix-socket-test-admin-token-00001';
const DECIDE = 'unix-socket-test-decide-token-0001';
const QUERY = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' } as const;
const services: ServiceProcess[] = [];
const clients: PdpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(services.splice(0).map((service) => service.stop()));
});

async function setUp(): Promise<{ outer: string; env: Record<string, string> }> {
  const outer = await tempFolder();
  const root = path.join(outer, 'p');
  await mkdir(root);
  await writeProject(root, 'demo', { policy: { version: 1, projectDefault: { allowedTools: [...READ_TOOLS, 'idea_memory_write'] } } });
  // Short names: the socket's path must stay under 107 bytes.
  return {
    outer,
    env: {
      PDP_PROJECTS_ROOT: root,
      PDP_STATE_DIR: path.join(outer, 's'),
      PDP_ADMIN_TOKEN: ADMIN,
      PDP_DECIDE_TOKEN: DECIDE,
      PDP_SOCKET: '',
    },
  };
}

const client = (options: ConstructorParameters<typeof PdpClient>[0]): PdpClient => {
  const made = new PdpClient({ token: DECIDE, ...options });
  clients.push(made);
  return made;
};

describe('the unix socket', () => {
  it('PdpClient takes socketPath (baseUrl then optional) and refuses an empty one', () => {
    expect(() => new PdpClient({ socketPath: '' })).toThrow(TypeError);
    expect(() => new PdpClient({})).toThrow(/baseUrl is required/);
    const made = client({ socketPath: '/nonexistent/pdp.sock' });
    expect(made.baseUrl).toBe('http://localhost');
  });

  it(
    'serves the same app at PDP_STATE_DIR/pdp.sock, mode 0600 in the 0700 folder, and replaces its own stale socket',
    { timeout: 3 * START_DEADLINE_MS },
    async () => {
      const { outer, env } = await setUp();
      const socketPath = path.join(outer, 's', 'pdp.sock');
      const first = await startService(env);
      services.push(first);
      const info = await lstat(socketPath);
      expect(info.isSocket()).toBe(true);
      expect(info.mode & 0o777).toBe(0o600);
      expect((await lstat(path.dirname(socketPath))).mode & 0o777).toBe(0o700);
      const overSocket = client({ socketPath });
      expect(await overSocket.decide(QUERY)).toMatchObject({ allow: true, source: 'project-default' });
      expect(await overSocket.check({ project: 'demo' })).toMatchObject({ ok: true });
      // Tokens hold on the socket as on TCP.
      expect(await client({ socketPath, token: 'wrong-token-wrong-token' }).decide(QUERY)).toMatchObject({
        allow: false,
        reason: 'pdp_rejected',
      });

      // Killed: the socket file stays behind, and the next start replaces it.
      first.child.kill('SIGKILL');
      await first.exited;
      expect((await lstat(socketPath)).isSocket()).toBe(true);
      const second = await startService(env);
      services.push(second);
      expect(await client({ socketPath }).decide(QUERY)).toMatchObject({ allow: true });
      // A clean stop removes it.
      await second.stop();
      await expect(lstat(socketPath)).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it(
    'refuses to start over a file, over a socket another process listens on, or in a folder others may write',
    { timeout: 4 * START_DEADLINE_MS },
    async () => {
      const { outer, env } = await setUp();
      await mkdir(path.join(outer, 's'), { mode: 0o700 });
      const socketPath = path.join(outer, 's', 'pdp.sock');
      await writeFile(socketPath, 'not a socket');
      const overFile = await runUntilExit({ ...env, PDP_PORT: '0' });
      expect(overFile.code).toBe(1);
      expect(overFile.output).toContain(`PDP_SOCKET ${socketPath} exists and is not a socket of this service: refusing to start`);

      const { rm } = await import('node:fs/promises');
      await rm(socketPath);
      const squatter = net.createServer();
      await new Promise<void>((resolve) => squatter.listen(socketPath, resolve));
      try {
        const overLive = await runUntilExit({ ...env, PDP_PORT: '0' });
        expect(overLive.code).toBe(1);
        expect(overLive.output).toContain('is in use by another process');
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }

      const shared = path.join(outer, 'shared');
      await mkdir(shared, { mode: 0o777 });
      const { chmod } = await import('node:fs/promises');
      await chmod(shared, 0o777);
      const inShared = await runUntilExit({ ...env, PDP_PORT: '0', PDP_SOCKET: path.join(shared, 'pdp.sock') });
      expect(inShared.code).toBe(1);
      expect(inShared.output).toContain('is in a folder that group or others may write');
    },
  );

  it(
    'over 107 bytes: a start-up error when PDP_SOCKET names it, a warning and no socket when it is the default; off disables it',
    { timeout: 3 * START_DEADLINE_MS },
    async () => {
      const { outer, env } = await setUp();
      const long = path.join(outer, 'x'.repeat(120), 'pdp.sock');
      const given = await runUntilExit({ ...env, PDP_PORT: '0', PDP_SOCKET: long });
      expect(given.code).toBe(1);
      expect(given.output).toMatch(/PDP_SOCKET: .* bytes long, more than a unix socket's 107/);

      const longState = path.join(outer, 'y'.repeat(110));
      const byDefault = await startService({ ...env, PDP_STATE_DIR: longState });
      services.push(byDefault);
      expect(byDefault.output()).toMatch(/No unix socket: .* bytes long/);
      await expect(lstat(path.join(longState, 'pdp.sock'))).rejects.toMatchObject({ code: 'ENOENT' });

      const off = await startService({ ...env, PDP_SOCKET: 'off' });
      services.push(off);
      await expect(lstat(path.join(outer, 's', 'pdp.sock'))).rejects.toMatchObject({ code: 'ENOENT' });
    },
  );

  it(
    'while the service is down, a process on its TCP port gets the token and answers allow to TCP clients, never to socket clients',
    { timeout: 2 * START_DEADLINE_MS },
    async () => {
      const { outer } = await setUp();
      const port = await freePort();
      const heard: string[] = [];
      const squatter = http.createServer((request, response) => {
        heard.push(request.headers.authorization ?? '');
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({
            allow: true,
            reason: 'allowed',
            message: 'Tool idea_memory_write is allowed for agent QA in project demo (policy: project-default).',
            source: 'project-default',
            requester: { id: 'QA', kind: 'agent' },
            tool: { name: 'idea_memory_write', access: 'write' },
            project: 'demo',
            revision: '0000000000000000',
            decisionId: 'squatted',
          }),
        );
      });
      await new Promise<void>((resolve) => squatter.listen(port, '127.0.0.1', resolve));
      try {
        const overTcp = await client({ baseUrl: `http://127.0.0.1:${port}` }).decide(QUERY);
        const overSocket = await client({ socketPath: path.join(outer, 's', 'pdp.sock') }).decide(QUERY);
        expect(overTcp).toMatchObject({ allow: true, decisionId: 'squatted' });
        expect(heard).toEqual([`Bearer ${DECIDE}`]);
        expect(overSocket).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
        expect(heard).toHaveLength(1);
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
    },
  );
});
