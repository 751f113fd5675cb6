/**
 * An acknowledged ephemeral ticket-assistant policy outlives its project's disappearance: when the
 * folder comes back, the policy applies again until its TTL (a transient loss of
 * the projects must not lose what the API acknowledged).
 */
import { mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Decision, ProjectsResponse } from '../../schemas/index.js';
import { buildApp } from '../../server/http/app.js';
import { waitFor } from '../support/wait.js';

const TOKEN = 'ephemeral-admin-token';
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('ephemeral policies', () => {
  it('apply again when their project comes back after disappearing', async () => {
    const root = await mkdtemp(join(tmpdir(), 'pdp-ephemeral-'));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    await mkdir(join(root, 'demo'));
    const app = await buildApp({ projectsRoot: root, adminToken: TOKEN, rescanMs: 200 });
    cleanup.push(() => app.close());
    await app.ready();
    const requester = 'ticket-assistant:demo:82';
    const put = await app.inject({
      method: 'PUT',
      url: `/projects/demo/ephemeral-policies/${encodeURIComponent(requester)}`,
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { allowedTools: ['idea_memory_write'], ttlSeconds: 3600 },
    });
    expect(put.statusCode).toBe(200);
    const decide = async (): Promise<Decision> =>
      (
        await app.inject({ method: 'POST', url: '/decide', payload: { project: 'demo', requester, tool: 'idea_memory_write' } })
      ).json<Decision>();
    const listed = async (): Promise<boolean> =>
      (await app.inject({ method: 'GET', url: '/projects' })).json<ProjectsResponse>().projects.some((project) => project.id === 'demo');
    expect(await decide()).toMatchObject({ allow: true, source: 'ephemeral' });

    await rename(join(root, 'demo'), join(root, '.away'));
    await waitFor(async () => !(await listed()), 'the project to disappear', 20_000, 50);
    expect(await decide()).toMatchObject({ allow: false, reason: 'unknown_project' });
    await rename(join(root, '.away'), join(root, 'demo'));
    await waitFor(listed, 'the project to come back', 20_000, 50);
    expect(await decide()).toMatchObject({ allow: true, source: 'ephemeral' });
  });
});
