/**
 * A project's policy file changing under the real app, with real files and the real watcher: by
 * others (a symlink swapped, `.ideai/` replaced whole) and by the API (a write that cannot be
 * completed and is undone, concurrent writes, If-Match).
 */
import { promises as fsPromises } from 'node:fs';
import { chmod, mkdir, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { adminHeaders, buildTestApp, type TestScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { stringContaining } from '../support/typed.js';

const doc = (agentTools: Record<string, string[]>) =>
  `${JSON.stringify({ version: 1, agents: Object.entries(agentTools).map(([agentId, allowedTools]) => ({ agentId, policy: { allowedTools } })) }, null, 2)}\n`;

async function start(t: TestScope): Promise<{ app: FastifyInstance; project: string }> {
  const { app, projectDir } = await buildTestApp(t, { demo: {} }, { rescanMs: 0 });
  return { app, project: projectDir('demo') };
}

async function allowed(app: FastifyInstance, requester: string, tool: string): Promise<boolean> {
  const response = await app.inject({ method: 'POST', url: '/decide', payload: { project: 'demo', requester, tool } });
  return response.json<{ allow: boolean }>().allow;
}

describe('the policy file under the app', () => {
  it('follows a symlink swap of the policy file (ln -s new && mv -T over the link)', async (t) => {
    const { app, project } = await start(t);
    const ideai = path.join(project, '.ideai');
    await mkdir(ideai);
    // Links to files in .ideai itself, by name: the only symlinked layout followed (docs/design.md#links).
    await writeFile(path.join(ideai, 'grant.json'), doc({ QA: ['idea_memory_write'] }));
    await writeFile(path.join(ideai, 'none.json'), doc({ QA: [] }));
    await symlink('grant.json', path.join(ideai, 'mcp-tool-permissions.json'));
    await waitFor(() => allowed(app, 'QA', 'idea_memory_write'), 'QA may write memory', 5_000);
    await symlink('none.json', path.join(ideai, 'next-link'));
    await rename(path.join(ideai, 'next-link'), path.join(ideai, 'mcp-tool-permissions.json'));
    await waitFor(async () => !(await allowed(app, 'QA', 'idea_memory_write')), 'QA may no longer write memory', 5_000);
  });

  it('follows .ideai/ replaced as a whole folder (rename of a prepared folder over it)', async (t) => {
    const { app, project } = await start(t);
    const ideai = path.join(project, '.ideai');
    await mkdir(ideai);
    await writeFile(path.join(ideai, 'mcp-tool-permissions.json'), doc({ QA: ['idea_memory_write'] }));
    await waitFor(() => allowed(app, 'QA', 'idea_memory_write'), 'QA may write memory', 5_000);
    const next = path.join(project, '.ideai-next');
    await mkdir(next);
    await writeFile(path.join(next, 'mcp-tool-permissions.json'), doc({ QA: ['idea_ask_agent'] }));
    await rm(ideai, { recursive: true });
    await rename(next, ideai);
    await waitFor(
      async () => (await allowed(app, 'QA', 'idea_ask_agent')) && !(await allowed(app, 'QA', 'idea_memory_write')),
      'the new .ideai/ in force',
      5_000,
    );
  });

  it('answers 500 write_failed when .ideai is a file, and changes neither memory nor disk', async (t) => {
    const { app, project } = await start(t);
    await writeFile(path.join(project, '.ideai'), 'not a folder');
    const response = await app.inject({
      method: 'PUT',
      url: '/projects/demo/mcp-tool-permissions/agents/QA',
      headers: adminHeaders,
      payload: { allowedTools: ['idea_memory_write'] },
    });
    expect(response.statusCode).toBe(500);
    expect(response.json()).toMatchObject({ error: { code: 'write_failed' } });
    expect(await readFile(path.join(project, '.ideai'), 'utf8')).toBe('not a folder');
    expect(await allowed(app, 'QA', 'idea_memory_write')).toBe(false);
  });

  it('answers 500 write_failed when the folder cannot be synced after the rename, and puts back the old file (or no file, and no .ideai folder)', async (t) => {
    const { app, project } = await start(t);
    const ideai = path.join(project, '.ideai');
    const policyFile = path.join(ideai, 'mcp-tool-permissions.json');
    const put = (tools: string[]) =>
      app.inject({
        method: 'PUT',
        url: '/projects/demo/mcp-tool-permissions/agents/QA',
        headers: adminHeaders,
        payload: { allowedTools: tools },
      });
    // Real files; only the next fsync of the .ideai folder fails (EIO), right after the rename.
    const realOpen = fsPromises.open.bind(fsPromises);
    const failNextFolderSync = (beforeFailing: () => Promise<void> = () => Promise.resolve()) => {
      let failed = false;
      return vi.spyOn(fsPromises, 'open').mockImplementation(async (...args: Parameters<typeof fsPromises.open>) => {
        const handle = await realOpen(...args);
        if (args[0] === ideai && !failed) {
          failed = true;
          handle.sync = async () => {
            await beforeFailing();
            throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
          };
        }
        return handle;
      });
    };
    try {
      // No file and no folder before: neither is left, and nothing is granted.
      let spy = failNextFolderSync();
      const first = await put(['idea_memory_write']);
      spy.mockRestore();
      expect(first.statusCode).toBe(500);
      expect(first.json()).toMatchObject({ error: { code: 'write_failed', message: stringContaining('nothing was changed') } });
      await expect(readdir(ideai)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await allowed(app, 'QA', 'idea_memory_write')).toBe(false);

      // A file before: a failed revocation leaves it, byte for byte, and the grant in force.
      expect((await put(['idea_memory_write'])).statusCode).toBe(200);
      const before = await readFile(policyFile, 'utf8');
      spy = failNextFolderSync();
      const second = await put([]);
      spy.mockRestore();
      expect(second.statusCode).toBe(500);
      expect(second.json()).toMatchObject({ error: { code: 'write_failed', message: stringContaining('nothing was changed') } });
      expect(await readFile(policyFile, 'utf8')).toBe(before);
      expect(await readdir(ideai)).toEqual(['mcp-tool-permissions.json']); // no temp file or kept copy left
      expect(await allowed(app, 'QA', 'idea_memory_write')).toBe(true);

      // Where hard links are refused, the old file is kept as a copy: the same undo.
      spy = failNextFolderSync();
      const link = vi
        .spyOn(fsPromises, 'link')
        .mockRejectedValue(Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' }));
      const third = await put(['idea_ask_agent']);
      spy.mockRestore();
      link.mockRestore();
      expect(third.json()).toMatchObject({ error: { code: 'write_failed', message: stringContaining('nothing was changed') } });
      expect(await readFile(policyFile, 'utf8')).toBe(before);
      expect(await readdir(ideai)).toEqual(['mcp-tool-permissions.json']);
      expect(await allowed(app, 'QA', 'idea_ask_agent')).toBe(false);

      // A file that can be neither linked nor copied (another user's, unreadable: the repair case)
      // is still written over, without an undo.
      const { O_NONBLOCK } = (await import('node:fs')).constants;
      const unreadable = vi.spyOn(fsPromises, 'open').mockImplementation(async (...args: Parameters<typeof fsPromises.open>) => {
        if (args[0] === policyFile && typeof args[1] === 'number' && (args[1] & O_NONBLOCK) !== 0) {
          throw Object.assign(new Error('EACCES: permission denied, open'), { code: 'EACCES' });
        }
        return realOpen(...args);
      });
      const unlinkable = vi
        .spyOn(fsPromises, 'link')
        .mockRejectedValue(Object.assign(new Error('EPERM: operation not permitted, link'), { code: 'EPERM' }));
      // The service cannot read it either: the file is invalid, so the repair is the whole-document PUT.
      const repaired = await app.inject({
        method: 'PUT',
        url: '/projects/demo/mcp-tool-permissions',
        headers: adminHeaders,
        payload: { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_ticket_read'] } }] },
      });
      unreadable.mockRestore();
      unlinkable.mockRestore();
      expect(repaired.statusCode).toBe(200);
      expect(await allowed(app, 'QA', 'idea_memory_write')).toBe(false);
      expect(await readdir(ideai)).toEqual(['mcp-tool-permissions.json']);

      // Another writer replaces the file while the sync fails: its newer file is never undone;
      // the answer says the outcome is unknown and memory follows the file as it now is.
      const external = doc({ QA: ['idea_ticket_list'] });
      spy = failNextFolderSync(async () => {
        await writeFile(`${policyFile}.editor`, external);
        await rename(`${policyFile}.editor`, policyFile);
      });
      const fourth = await put(['idea_ask_agent']);
      spy.mockRestore();
      expect(fourth.statusCode).toBe(500);
      expect(fourth.json()).toMatchObject({ error: { code: 'write_failed', details: { outcome: 'unknown' } } });
      expect(await readFile(policyFile, 'utf8')).toBe(external);
      expect(await allowed(app, 'QA', 'idea_ticket_list')).toBe(true);
      expect(await allowed(app, 'QA', 'idea_memory_write')).toBe(false);
      expect(await allowed(app, 'QA', 'idea_ask_agent')).toBe(false);
    } finally {
      vi.restoreAllMocks();
    }
  });

  // root ignores folder permissions (CI runs as root): the `.ideai` file case above covers it there.
  it.skipIf(process.getuid?.() === 0)('answers write_failed on a read-only folder without touching the old file', async (t) => {
    const { app, project } = await start(t);
    const ideai = path.join(project, '.ideai');
    await mkdir(ideai);
    await writeFile(path.join(ideai, 'mcp-tool-permissions.json'), doc({}));
    await chmod(ideai, 0o500);
    const response = await app.inject({
      method: 'PUT',
      url: '/projects/demo/mcp-tool-permissions/default',
      headers: adminHeaders,
      payload: { allowedTools: ['idea_memory_write'] },
    });
    await chmod(ideai, 0o700);
    expect(response.json()).toMatchObject({ error: { code: 'write_failed' } });
  });

  it('serializes concurrent writes to one project: none is lost', async (t) => {
    const { app, project } = await start(t);
    const agents = Array.from({ length: 20 }, (_, index) => `Agent${index}`);
    const responses = await Promise.all(
      agents.map((agent) =>
        app.inject({
          method: 'PUT',
          url: `/projects/demo/mcp-tool-permissions/agents/${agent}`,
          headers: adminHeaders,
          payload: { allowedTools: ['idea_memory_write'] },
        }),
      ),
    );
    expect(responses.map((response) => response.statusCode)).toEqual(agents.map(() => 200));
    const written = JSON.parse(await readFile(path.join(project, '.ideai', 'mcp-tool-permissions.json'), 'utf8')) as {
      agents: { agentId: string }[];
    };
    expect(written.agents.map((agent) => agent.agentId).sort()).toEqual([...agents].sort());
    for (const agent of agents) expect(await allowed(app, agent, 'idea_memory_write')).toBe(true);
  });

  it('lets exactly one of several writes with the same If-Match succeed', async (t) => {
    const { app } = await start(t);
    const current = await app.inject({ method: 'GET', url: '/projects/demo/mcp-tool-permissions' });
    const etag = current.headers.etag as string;
    const responses = await Promise.all(
      ['A', 'B', 'C', 'D', 'E'].map((agent) =>
        app.inject({
          method: 'PUT',
          url: `/projects/demo/mcp-tool-permissions/agents/${agent}`,
          headers: { ...adminHeaders, 'if-match': etag },
          payload: { allowedTools: ['idea_memory_write'] },
        }),
      ),
    );
    const statuses = responses.map((response) => response.statusCode).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412]);
  });

  it('accepts an If-Match list that contains the current revision, and refuses one that does not', async (t) => {
    const { app } = await start(t);
    const etag = (await app.inject({ method: 'GET', url: '/projects/demo/mcp-tool-permissions' })).headers.etag as string;
    const put = (ifMatch: string) =>
      app.inject({
        method: 'PUT',
        url: '/projects/demo/mcp-tool-permissions/default',
        headers: { ...adminHeaders, 'if-match': ifMatch },
        payload: { allowedTools: ['idea_ticket_read'] },
      });
    expect((await put('"0000000000000000", "1111111111111111"')).statusCode).toBe(412);
    expect((await put(`"0000000000000000", ${etag}`)).statusCode).toBe(200);
  });
});
