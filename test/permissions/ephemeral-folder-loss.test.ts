/**
 * An acknowledged ephemeral ticket-assistant policy outlives its project's disappearance: when the
 * folder comes back, the policy applies again until its TTL (a transient loss of
 * the projects must not lose what the API acknowledged).
 */
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Decision, ProjectsResponse } from '../../schemas/index.js';
import { adminHeaders, buildTestApp } from '../support/app.js';
import { waitFor } from '../support/wait.js';

describe('ephemeral policies', () => {
  it('apply again when their project comes back after disappearing', async (t) => {
    const { app, root } = await buildTestApp(t, { demo: {} }, { rescanMs: 200 });
    const requester = 'ticket-assistant:demo:82';
    const put = await app.inject({
      method: 'PUT',
      url: `/projects/demo/ephemeral-policies/${encodeURIComponent(requester)}`,
      headers: adminHeaders,
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
