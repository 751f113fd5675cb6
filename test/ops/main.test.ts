/**
 * docs/api.md#projects-and-files and docs/api.md#security through the real entry point (`server/main.ts` in a child process): environment
 * variables, generated admin token, refusal to listen on a non-loopback host without a decide token.
 */
import { mkdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeTestProjects } from '../support/app.js';
import { policyDoc, readText, writeProject } from '../support/files.js';
import { freePort, runUntilExit, startService } from '../support/service-process.js';

describe('server/main.ts', () => {
  it('refuses to start on a non-loopback host when PDP_DECIDE_TOKEN is unset', async (t) => {
    const { root } = await makeTestProjects(t, { demo: {} });
    const { code, output } = await runUntilExit(
      { PDP_HOST: '0.0.0.0', PDP_PORT: String(await freePort()), PDP_PROJECTS_ROOT: root, PDP_ADMIN_TOKEN: 'admin-secret-for-main-test' },
      20_000,
    );
    // Killed at the deadline, it would have no exit code: it must have exited by itself, in failure.
    expect(code).toBe(1);
    expect(output).toContain('PDP_DECIDE_TOKEN');
    expect(output).not.toContain('admin-secret-for-main-test');
  }, 60_000);

  it('serves the bundled demo projects when neither PDP_PROJECTS_ROOT nor PDP_PROJECTS is set', async (t) => {
    const { outer } = await makeTestProjects(t, {});
    // An empty PDP_HOST is the default host, which must be a loopback one for the service to start here.
    const started = await startService({
      PDP_HOST: '',
      PDP_ADMIN_TOKEN: 'admin-secret-for-demo-test',
      PDP_STATE_DIR: path.join(outer, 'state'),
    });
    const base = started.baseUrl;
    try {
      const projects = (await (await fetch(`${base}/projects`)).json()) as { projects: { id: string; status: string }[] };
      expect(projects.projects.map((p) => [p.id, p.status])).toEqual([
        ['demo', 'ok'],
        ['sandbox', 'ok'],
      ]);
      const view = (await (await fetch(`${base}/projects/demo/mcp-tool-permissions`)).json()) as {
        agents: { agentId: string; mode: string; added: string[] }[];
      };
      expect(view.agents.map((a) => a.agentId)).toEqual(['Architect', 'DevFrontend', 'Git', 'Main', 'QA']);
      expect(view.agents.find((a) => a.agentId === 'DevFrontend')).toMatchObject({
        mode: 'override',
        added: ['idea_ask_agent', 'idea_ticket_update_carnet'],
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
      expect((await started.stop()).code).toBe(0);
    }
  }, 60_000);

  it('generates the admin token in PDP_STATE_DIR (0600), logs the path but never the token, and serves PDP_PROJECTS too', async (t) => {
    const { outer, root } = await makeTestProjects(t, { demo: {} });
    const explicitRoot = await writeProject(path.join(outer, 'elsewhere'), 'ext', { policy: policyDoc(['idea_memory_write']) });
    const stateDir = path.join(outer, 'state');
    await mkdir(stateDir);
    const started = await startService({
      PDP_LOG_LEVEL: 'info',
      PDP_PROJECTS_ROOT: root,
      PDP_PROJECTS: `explicit=${explicitRoot}`,
      PDP_ADMIN_TOKEN: '',
      PDP_STATE_DIR: stateDir,
    });
    const base = started.baseUrl;
    try {
      const tokenFile = path.join(stateDir, 'admin-token');
      const token = ((await readText(tokenFile)) ?? '').trim();
      expect(token.length).toBeGreaterThanOrEqual(16);
      expect((await stat(tokenFile)).mode & 0o777).toBe(0o600);
      expect(started.output()).toContain(tokenFile);
      expect(started.output()).not.toContain(token);

      const projects = (await (await fetch(`${base}/projects`)).json()) as { projects: { id: string }[] };
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
      expect((await started.stop()).code).toBe(0);
    }
  }, 60_000);
});
