/**
 * docs/api.md#projects-and-files and docs/api.md#resolving-a-decision ("Freshness"), end to end: a real port, real files and the real watcher. Each check
 * polls /decide every 10 ms for up to 5 s (never a fixed sleep).
 */
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Decision, DecideQuery } from '../../schemas/index.js';
import { ADMIN_TOKEN, startTestServer } from '../support/app.js';
import { policyText, readText, writeProject } from '../support/files.js';
import { READ_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

/** No safety-net rescan: only the file watcher can make these tests pass. */
const WATCHER_ONLY = { rescanMs: 0 };

async function httpDecide(baseUrl: string, query: DecideQuery): Promise<Decision> {
  const response = await fetch(`${baseUrl}/decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(query),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Decision;
}

const writeQuery = { project: 'demo', requester: 'Main', tool: 'idea_memory_write' };
const grant = policyText([...READ_TOOLS, 'idea_memory_write']);
const withdraw = policyText([...READ_TOOLS]);

async function until(
  baseUrl: string,
  query: DecideQuery,
  predicate: (d: Decision) => boolean,
  what: string,
  timeoutMs = 5_000,
): Promise<Decision> {
  let last: Decision | undefined;
  await waitFor(
    async () => {
      last = await httpDecide(baseUrl, query);
      return predicate(last);
    },
    what,
    timeoutMs,
  );
  if (last === undefined) throw new Error('no decision');
  return last;
}

describe('hot reload through the watcher', () => {
  it('picks up in-place writes (grant, then withdraw) on the next calls', async (t) => {
    const server = await startTestServer(t, { demo: { policy: withdraw } }, WATCHER_ONLY);
    const base = server.baseUrl;
    expect((await httpDecide(base, writeQuery)).allow).toBe(false);
    await writeFile(server.policyPath('demo'), grant);
    const granted = await until(base, writeQuery, (d) => d.allow, 'grant by in-place write');
    expect(granted).toMatchObject({ source: 'project-default', reason: 'allowed' });
    await writeFile(server.policyPath('demo'), withdraw);
    await until(base, writeQuery, (d) => !d.allow && d.reason === 'not_in_allowlist', 'withdraw by in-place write');
  });

  it('picks up an edit made right after the previous one was picked up (no event lost)', async (t) => {
    // Each edit lands a few ms after the watcher reported the previous one, so a watcher that
    // drops or throttles a second event on the same path within a short window misses it.
    const server = await startTestServer(t, { demo: { policy: withdraw } }, WATCHER_ONLY);
    const base = server.baseUrl;
    for (let i = 0; i < 6; i += 1) {
      const allow = i % 2 === 0;
      await writeFile(server.policyPath('demo'), allow ? grant : withdraw);
      await until(base, writeQuery, (d) => d.allow === allow, `in-place edit #${i} allow=${String(allow)}`);
    }
  });

  it('with default options, successive edits are each visible well within 1 s (docs/api.md#resolving-a-decision, "Freshness")', async (t) => {
    const server = await startTestServer(t, { demo: { policy: withdraw } });
    const base = server.baseUrl;
    for (let i = 0; i < 6; i += 1) {
      const allow = i % 2 === 0;
      await writeFile(server.policyPath('demo'), allow ? grant : withdraw);
      await until(base, writeQuery, (d) => d.allow === allow, `edit #${i} within 1 s`, 1_000);
    }
  });

  it('picks up an atomic rename-over (editor / git checkout style), repeatedly', async (t) => {
    const server = await startTestServer(t, { demo: { policy: withdraw } }, WATCHER_ONLY);
    const base = server.baseUrl;
    for (let i = 0; i < 3; i += 1) {
      for (const [content, allow] of [
        [grant, true],
        [withdraw, false],
      ] as const) {
        const temp = path.join(server.projectDir('demo'), '.ideai', `.tmp-${i}-${String(allow)}`);
        await writeFile(temp, content);
        await rename(temp, server.policyPath('demo'));
        await until(base, writeQuery, (d) => d.allow === allow, `rename-over #${i} allow=${String(allow)}`);
      }
    }
  });

  it('goes back to builtin on delete and picks up a re-created file', async (t) => {
    const server = await startTestServer(t, { demo: { policy: grant } }, WATCHER_ONLY);
    const base = server.baseUrl;
    expect((await httpDecide(base, writeQuery)).allow).toBe(true);
    await rm(server.policyPath('demo'));
    // First denied as invalid for a short grace period (docs/api.md#resolving-a-decision: a file that disappears is re-checked), then builtin.
    const deleted = await until(base, writeQuery, (d) => d.revision === 'builtin', 'builtin after delete');
    expect(deleted).toMatchObject({ allow: false, source: 'builtin-read-only' });
    await writeFile(server.policyPath('demo'), grant);
    await until(base, writeQuery, (d) => d.allow && d.source === 'project-default', 'grant after re-create');
    // Deleting the whole .ideai/ folder and re-creating it works too.
    await rm(path.join(server.projectDir('demo'), '.ideai'), { recursive: true });
    await until(base, writeQuery, (d) => !d.allow && d.revision === 'builtin', 'builtin after .ideai removal');
    await mkdir(path.join(server.projectDir('demo'), '.ideai'));
    await writeFile(server.policyPath('demo'), grant);
    await until(base, writeQuery, (d) => d.allow, 'grant after .ideai re-created');
  });

  it('watches a project whose .ideai/ is created after start', async (t) => {
    const server = await startTestServer(t, { demo: {} }, WATCHER_ONLY);
    const base = server.baseUrl;
    expect((await httpDecide(base, writeQuery)).allow).toBe(false);
    await mkdir(path.join(server.projectDir('demo'), '.ideai'));
    await writeFile(server.policyPath('demo'), grant);
    await until(base, writeQuery, (d) => d.allow, 'grant once .ideai/ exists');
  });

  it('goes invalid on a half-written file (no last good state) and valid again when complete', async (t) => {
    const server = await startTestServer(t, { demo: { policy: grant } }, WATCHER_ONLY);
    const base = server.baseUrl;
    await writeFile(server.policyPath('demo'), grant.slice(0, Math.floor(grant.length / 2)));
    await until(base, writeQuery, (d) => d.reason === 'policy_invalid', 'policy_invalid on half-written file');
    expect(await httpDecide(base, { ...writeQuery, tool: 'idea_memory_read' })).toMatchObject({ allow: false, reason: 'policy_invalid' });
    await writeFile(server.policyPath('demo'), grant);
    await until(base, writeQuery, (d) => d.allow, 'valid again');
    // The service is still alive and ready.
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });

  it('hears a policy written while a new project is being read for the first time', async (t) => {
    const server = await startTestServer(t, { demo: {} }, WATCHER_ONLY);
    const base = server.baseUrl;
    const ids = Array.from({ length: 40 }, (_, index) => `fresh-${String(index)}`);
    // Each folder appears with a grant, then is revoked at once: the revocation lands while the project is read.
    await Promise.all(
      ids.map(async (id) => {
        await writeProject(server.root, id, { policy: grant });
        await writeFile(path.join(server.root, id, '.ideai', 'mcp-tool-permissions.json'), withdraw);
      }),
    );
    for (const id of ids) {
      await until(base, { ...writeQuery, project: id }, (d) => d.reason === 'not_in_allowlist', `revocation of ${id} heard`);
    }
  });

  it('adds and removes projects as folders appear and disappear under the projects root', async (t) => {
    const server = await startTestServer(t, { demo: {} }, WATCHER_ONLY);
    const base = server.baseUrl;
    const query = { project: 'late', requester: 'Main', tool: 'idea_memory_write' };
    expect(await httpDecide(base, query)).toMatchObject({ reason: 'unknown_project' });
    await writeProject(server.root, 'late', { policy: grant });
    await until(base, query, (d) => d.allow, 'new project with a policy');
    const listed = (await (await fetch(`${base}/projects`)).json()) as { projects: { id: string }[] };
    expect(listed.projects.map((p) => p.id).sort()).toEqual(['demo', 'late']);

    // A project folder created empty gets builtin defaults, then its policy later.
    await mkdir(path.join(server.root, 'empty-later'));
    await until(base, { ...query, project: 'empty-later', tool: 'idea_memory_read' }, (d) => d.allow, 'empty project appears');
    await writeProject(server.root, 'empty-later', { policy: grant });
    await until(base, { ...query, project: 'empty-later' }, (d) => d.allow, 'policy of a project added at run time');

    await rm(path.join(server.root, 'late'), { recursive: true });
    await until(base, query, (d) => d.reason === 'unknown_project', 'removed project is unknown');
    const after = (await (await fetch(`${base}/projects`)).json()) as { projects: { id: string }[] };
    expect(after.projects.map((p) => p.id).sort()).toEqual(['demo', 'empty-later']);
  });

  it('denies with policy_invalid when a folder replaces the policy file at run time, and recovers', async (t) => {
    const server = await startTestServer(t, { demo: { policy: grant } }, WATCHER_ONLY);
    const base = server.baseUrl;
    await rm(server.policyPath('demo'));
    await mkdir(server.policyPath('demo'));
    await until(base, writeQuery, (d) => d.reason === 'policy_invalid', 'policy_invalid with a folder at the file path');
    await rm(server.policyPath('demo'), { recursive: true });
    await writeFile(server.policyPath('demo'), grant);
    await until(base, writeQuery, (d) => d.allow, 'valid again once the folder is a file');
  });

  it('follows a project folder renamed under the projects root', async (t) => {
    const server = await startTestServer(t, { demo: { policy: grant } }, WATCHER_ONLY);
    const base = server.baseUrl;
    await rename(server.projectDir('demo'), path.join(server.root, 'renamed'));
    await until(base, writeQuery, (d) => d.reason === 'unknown_project', 'old id unknown');
    await until(base, { ...writeQuery, project: 'renamed' }, (d) => d.allow, 'new id serves the moved policy');
  });

  it('never loses an external edit made just before an API write', async (t) => {
    const server = await startTestServer(t, { demo: { policy: withdraw } }, WATCHER_ONLY);
    const base = server.baseUrl;
    // The external edit and the API write race: the write must build on the file as it is on disk.
    await writeFile(server.policyPath('demo'), grant);
    const response = await fetch(`${base}/projects/demo/mcp-tool-permissions/agents/QA`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
      body: JSON.stringify({ allowedTools: ['idea_ask_agent'] }),
    });
    expect(response.status).toBe(200);
    expect(await httpDecide(base, writeQuery)).toMatchObject({ allow: true, source: 'project-default' });
    expect(await httpDecide(base, { ...writeQuery, requester: 'QA', tool: 'idea_ask_agent' })).toMatchObject({ allow: true });
    const onDisk = JSON.parse((await readText(server.policyPath('demo'))) ?? 'null') as { projectDefault: { allowedTools: string[] } };
    expect(onDisk.projectDefault.allowedTools).toContain('idea_memory_write');
  });

  it('does not react to other files in .ideai/ (agents.json changes only the listing)', async (t) => {
    const server = await startTestServer(t, { demo: { policy: grant, agents: [{ id: 'Main' }] } }, WATCHER_ONLY);
    const base = server.baseUrl;
    await writeFile(path.join(server.projectDir('demo'), '.ideai', 'agents.json'), JSON.stringify([{ id: 'Main' }, { id: 'QA' }]));
    await waitFor(async () => {
      const view = (await (await fetch(`${base}/projects/demo/mcp-tool-permissions`)).json()) as { agents: { agentId: string }[] };
      return view.agents.length === 2;
    }, 'agents.json reloaded');
    await writeFile(path.join(server.projectDir('demo'), '.ideai', 'permissions.json'), '{ not json');
    expect((await httpDecide(base, writeQuery)).allow).toBe(true);
  });
});
