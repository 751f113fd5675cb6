/**
 * An acknowledged ephemeral ticket-assistant policy outlives its project's disappearance: when the
 * folder comes back, the policy applies again until its TTL (a transient loss of
 * the projects must not lose what the API acknowledged). But it belongs to that folder: a folder
 * deleted and made again under the same id inherits none (docs/api.md#approvals-and-temporary-grants, invariants).
 */
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, type TestContext } from 'vitest';
import type { Decision, ProjectsResponse } from '../../schemas/index.js';
import { adminHeaders, buildTestApp } from '../support/app.js';
import { replaceProjectFolder } from '../support/files.js';
import { waitFor } from '../support/wait.js';

/** A service over one project, demo, where `requester` holds an ephemeral policy allowing idea_memory_write for an hour. */
async function withEphemeralPolicy(t: TestContext, requester: string) {
  const { app, root } = await buildTestApp(t, { demo: {} }, { rescanMs: 200 });
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
  return { app, root, decide };
}

describe('ephemeral policies', () => {
  it('apply again when their project comes back after disappearing', async (t) => {
    const { app, root, decide } = await withEphemeralPolicy(t, 'ticket-assistant:demo:82');
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

  it('do not apply to a folder deleted and made again under the same id, nor are they listed there', async (t) => {
    const { app, root, decide } = await withEphemeralPolicy(t, 'ticket-assistant:demo:7');
    expect(await decide()).toMatchObject({ allow: true, source: 'ephemeral' });

    await replaceProjectFolder(root, 'demo');
    // Once the watcher has heard of it (as for grants), and then for good.
    await waitFor(async () => !(await decide()).allow, "the new folder served without the old one's policy", 5_000, 5);
    const until = performance.now() + 1500;
    while (performance.now() < until) {
      const decision = await decide();
      if (decision.allow) expect.fail(`the new folder was allowed: ${JSON.stringify(decision)}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(await decide()).toMatchObject({ allow: false, source: 'builtin-read-only' });
    const listed = await app.inject({ method: 'GET', url: '/projects/demo/ephemeral-policies', headers: adminHeaders });
    expect(listed.json()).toEqual({ policies: [] });
  });
});
