/**
 * docs/api.md §3 and §7 through the real entry point (`server/main.ts` in a child process): environment
 * variables, generated admin token, refusal to listen on a non-loopback host without a decide token.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { makeProjectsRoot, setupSpecFile } from '../support/app.js';
import { policyDoc, readText, writeProject } from '../support/files.js';
import { waitFor } from '../support/wait.js';

setupSpecFile();

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsx = path.join(repo, 'node_modules', '.bin', 'tsx');

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function startMain(env: Record<string, string>): Started {
  const child = spawn(tsx, [path.join(repo, 'server', 'main.ts')], {
    cwd: repo,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', PDP_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

async function stop(started: Started): Promise<number | null> {
  if (started.child.exitCode === null) started.child.kill('SIGTERM');
  return started.exited;
}

describe('server/main.ts', () => {
  it('refuses to start on a non-loopback host when PDP_DECIDE_TOKEN is unset', async () => {
    const { root } = await makeProjectsRoot({ demo: {} });
    const port = await freePort();
    const started = startMain({
      PDP_HOST: '0.0.0.0',
      PDP_PORT: String(port),
      PDP_PROJECTS_ROOT: root,
      PDP_ADMIN_TOKEN: 'admin-secret-for-main-test',
    });
    const code = await Promise.race([started.exited, new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), 20_000))]);
    if (code === 'running') await stop(started);
    expect(code).not.toBe('running');
    expect(code).not.toBe(0);
    expect(started.output()).not.toContain('admin-secret-for-main-test');
  }, 60_000);

  it('serves the bundled demo projects when neither PDP_PROJECTS_ROOT nor PDP_PROJECTS is set', async () => {
    const { outer } = await makeProjectsRoot({});
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const started = startMain({
      PDP_PORT: String(port),
      PDP_ADMIN_TOKEN: 'admin-secret-for-demo-test',
      PDP_STATE_DIR: path.join(outer, 'state'),
    });
    try {
      await waitFor(
        async () => {
          if (started.child.exitCode !== null) throw new Error(`main exited: ${started.output()}`);
          try {
            return (await fetch(`${base}/readyz`)).status === 200;
          } catch {
            return false;
          }
        },
        'main.ts ready',
        20_000,
        50,
      );
      const projects = (await (await fetch(`${base}/projects`)).json()) as { projects: Array<{ id: string; status: string }> };
      expect(projects.projects.map((p) => [p.id, p.status])).toEqual([
        ['demo', 'ok'],
        ['sandbox', 'ok'],
      ]);
      const view = (await (await fetch(`${base}/projects/demo/mcp-tool-permissions`)).json()) as {
        agents: Array<{ agentId: string; mode: string; added: string[] }>;
      };
      expect(view.agents.map((a) => a.agentId)).toEqual(['Architect', 'DevFrontend', 'Git', 'Main', 'QA']);
      expect(view.agents.find((a) => a.agentId === 'DevFrontend')).toMatchObject({
        mode: 'override',
        added: ['idea_ticket_update_carnet'],
      });
      const ask = async (requester: string, tool: string) =>
        (
          (await (
            await fetch(`${base}/decide`, {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ project: 'demo', requester, tool }),
            })
          ).json()) as { allow: boolean }
        ).allow;
      expect(await ask('DevFrontend', 'idea_ticket_update_carnet')).toBe(true);
      expect(await ask('QA', 'idea_ticket_update_carnet')).toBe(false);
      expect(await ask('Main', 'idea_memory_write')).toBe(false);
    } finally {
      expect(await stop(started)).toBe(0);
    }
  }, 60_000);

  it('generates the admin token in PDP_STATE_DIR (0600), logs the path but never the token, and serves PDP_PROJECTS too', async () => {
    const { outer, root } = await makeProjectsRoot({ demo: {} });
    const explicitRoot = await writeProject(path.join(outer, 'elsewhere'), 'ext', { policy: policyDoc(['idea_memory_write']) });
    const stateDir = path.join(outer, 'state');
    await mkdir(stateDir);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const started = startMain({
      PDP_HOST: '127.0.0.1',
      PDP_PORT: String(port),
      PDP_PROJECTS_ROOT: root,
      PDP_PROJECTS: `explicit=${explicitRoot}`,
      PDP_ADMIN_TOKEN: '',
      PDP_STATE_DIR: stateDir,
    });
    try {
      await waitFor(
        async () => {
          if (started.child.exitCode !== null) throw new Error(`main exited: ${started.output()}`);
          try {
            return (await fetch(`${base}/readyz`)).status === 200;
          } catch {
            return false;
          }
        },
        'main.ts ready',
        20_000,
        50,
      );
      const tokenFile = path.join(stateDir, 'admin-token');
      const token = ((await readText(tokenFile)) ?? '').trim();
      expect(token.length).toBeGreaterThanOrEqual(16);
      expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
      expect(started.output()).toContain(tokenFile);
      expect(started.output()).not.toContain(token);

      const projects = (await (await fetch(`${base}/projects`)).json()) as { projects: Array<{ id: string }> };
      expect(projects.projects.map((p) => p.id).sort()).toEqual(['demo', 'explicit']);
      const decision = (await (
        await fetch(`${base}/decide`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ project: 'explicit', requester: 'Main', tool: 'idea_memory_write' }),
        })
      ).json()) as { allow: boolean };
      expect(decision.allow).toBe(true);

      const put = (authorization: string) =>
        fetch(`${base}/projects/demo/mcp-tool-permissions/default`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', authorization },
          body: JSON.stringify({ allowedTools: ['idea_memory_read'] }),
        });
      expect((await put('Bearer not-the-token')).status).toBe(401);
      expect((await put(`Bearer ${token}`)).status).toBe(200);
      expect(started.output()).not.toContain(token);
    } finally {
      expect(await stop(started)).toBe(0);
    }
  }, 60_000);
});
