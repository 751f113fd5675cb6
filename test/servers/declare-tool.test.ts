/**
 * docs/api.md#declaring-a-tool: `PUT /projects/:project/servers/:server/tools/:tool` writes
 * `.ideai/mcp-servers.json` through the policy's own write path (admin token, `If-Match` on the
 * servers file's revision, compare-and-swap, link rules), and the declared tool then decides by the
 * class a person chose. The real app, `app.inject`, real files.
 */
import fsSync, { writeFileSync } from 'node:fs';
import { link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CatalogResponse, ServersResponse } from '../../schemas/index.js';
import { DECIDE_TOKEN, buildTestApp, call, decide, errorCode, type TestApp } from '../support/app.js';

afterEach(() => vi.restoreAllMocks());

const SERVERS = {
  version: 1,
  servers: { fs: { label: 'Fichiers', tools: { read_text_file: { access: 'read', label: 'Lire un fichier' } } } },
};
const declareUrl = (server: string, tool: string, project = 'demo') =>
  `/projects/${project}/servers/${server}/tools/${encodeURIComponent(tool)}`;
const serversFile = (app: TestApp, project = 'demo') => path.join(app.projectDir(project), '.ideai', 'mcp-servers.json');

async function catalogVersion(app: TestApp): Promise<string> {
  const response = await call(app.app, 'GET', '/projects/demo/catalog', { auth: true });
  expect(response.headers.etag).toBe(`"${response.json<CatalogResponse>().version}"`);
  return response.json<CatalogResponse>().version ?? '';
}

const declare = (app: TestApp, server: string, tool: string, body: unknown, ifMatch?: string) =>
  call(app.app, 'PUT', declareUrl(server, tool), {
    auth: true,
    body,
    headers: ifMatch === undefined ? {} : { 'if-match': `"${ifMatch}"` },
  });

describe('declaring a server’s tool', () => {
  it('declares a discovered tool with the class chosen, and the tool then decides by that class', async (t) => {
    const app = await buildTestApp(t, { demo: { servers: SERVERS } });
    const reported = await call(app.app, 'POST', '/projects/demo/servers/fs/discovered', {
      auth: true,
      body: { tools: [{ name: 'list_directory', annotations: { readOnlyHint: true } }, { name: 'write_file' }] },
    });
    expect(reported.statusCode).toBe(202);
    // Undeclared: unknown, whatever the server's hints say.
    expect(await decide(app.app, { project: 'demo', requester: 'QA', tool: 'fs/list_directory' })).toMatchObject({
      allow: false,
      reason: 'unknown_tool',
    });

    const before = await catalogVersion(app);
    const read = await declare(app, 'fs', 'list_directory', { access: 'read', label: 'Lister un dossier' }, before);
    expect(read.statusCode, read.body).toBe(200);
    const after = read.json<ServersResponse>();
    expect(after.servers[0]?.tools).toContainEqual({ name: 'fs/list_directory', access: 'read', label: 'Lister un dossier' });
    expect(after.servers[0]?.discovered.map((tool) => tool.name)).toEqual(['write_file']);
    const version = await catalogVersion(app);
    expect(version).not.toBe(before);
    expect(read.headers.etag).toBe(`"${version}"`);
    // A read tool joins the read-only default of every agent without a policy, at once.
    expect(await decide(app.app, { project: 'demo', requester: 'QA', tool: 'fs/list_directory' })).toMatchObject({ allow: true });

    const write = await declare(app, 'fs', 'write_file', { access: 'write' }, version);
    expect(write.statusCode, write.body).toBe(200);
    expect(await decide(app.app, { project: 'demo', requester: 'QA', tool: 'fs/write_file' })).toMatchObject({
      allow: false,
      reason: 'not_in_allowlist',
    });
    const granted = await call(app.app, 'PUT', '/projects/demo/mcp-tool-permissions/agents/QA', {
      auth: true,
      body: { allowedTools: ['fs/write_file'] },
    });
    expect(granted.statusCode, granted.body).toBe(200);
    expect(await decide(app.app, { project: 'demo', requester: 'QA', tool: 'fs/write_file' })).toMatchObject({ allow: true });

    // The file a person reads: the server's label and the existing tool kept, in their order.
    expect(JSON.parse(await readFile(serversFile(app), 'utf8'))).toEqual({
      version: 1,
      servers: {
        fs: {
          label: 'Fichiers',
          tools: {
            read_text_file: { access: 'read', label: 'Lire un fichier' },
            list_directory: { access: 'read', label: 'Lister un dossier' },
            write_file: { access: 'write' },
          },
        },
      },
    });
  });

  it('creates the file and the server with its label, and declares again with another class', async (t) => {
    const app = await buildTestApp(t, { demo: { ideai: true } });
    expect(await catalogVersion(app)).toBe('builtin');
    const created = await declare(app, 'web', 'navigate', { access: 'write', serverLabel: 'Navigateur' }, 'builtin');
    expect(created.statusCode, created.body).toBe(200);
    const [web] = created.json<ServersResponse>().servers;
    expect(web).toMatchObject({ id: 'web', label: 'Navigateur', discovered: [] });
    expect(web?.tools[0]).toEqual({ name: 'web/navigate', access: 'write', label: 'navigate' });
    // A server's label in the file is kept; the tool's class and label change.
    const again = await declare(app, 'web', 'navigate', { access: 'read', label: 'Ouvrir une page', serverLabel: 'Autre' });
    expect(again.statusCode, again.body).toBe(200);
    expect(JSON.parse(await readFile(serversFile(app), 'utf8'))).toEqual({
      version: 1,
      servers: { web: { label: 'Navigateur', tools: { navigate: { access: 'read', label: 'Ouvrir une page' } } } },
    });
    expect(await decide(app.app, { project: 'demo', requester: 'QA', tool: 'web/navigate' })).toMatchObject({ allow: true });
  });

  it('keeps an exact tool name, `/`, `__proto__` and non-ASCII included', async (t) => {
    const app = await buildTestApp(t, { demo: { servers: SERVERS } });
    for (const tool of ['files/read', '__proto__', 'écrire fichier']) {
      const response = await declare(app, 'fs', tool, { access: 'write' });
      expect(response.statusCode, `${tool}: ${response.body}`).toBe(200);
    }
    const tools = (JSON.parse(await readFile(serversFile(app), 'utf8')) as typeof SERVERS).servers.fs.tools;
    expect(Object.keys(tools)).toEqual(['read_text_file', 'files/read', '__proto__', 'écrire fichier']);
    expect(await decide(app.app, { project: 'demo', requester: 'QA', tool: 'fs/__proto__' })).toMatchObject({ reason: 'not_in_allowlist' });
  });

  it('refuses a stale If-Match with 412 and writes nothing', async (t) => {
    const app = await buildTestApp(t, { demo: { servers: SERVERS } });
    const text = await readFile(serversFile(app), 'utf8');
    const stale = await declare(app, 'fs', 'write_file', { access: 'write' }, 'builtin');
    expect(stale.statusCode).toBe(412);
    expect(stale.json()).toMatchObject({ error: { code: 'revision_mismatch', details: { revision: await catalogVersion(app) } } });
    expect(await readFile(serversFile(app), 'utf8')).toBe(text);
    // `*` matches any revision, as for the policy.
    expect((await declare(app, 'fs', 'write_file', { access: 'write' }, '*')).statusCode).toBe(200);
  });

  it('never replaces an editor’s save made during the write: 409 write_conflict when it keeps changing', async (t) => {
    const app = await buildTestApp(t, { demo: { servers: SERVERS } });
    const file = serversFile(app);
    const edited = JSON.stringify({ version: 1, servers: { fs: { tools: { edited: { access: 'write' } } } } });
    let saves = 0;
    const realRename = fsSync.renameSync.bind(fsSync);
    vi.spyOn(fsSync, 'renameSync').mockImplementation((from, to) => {
      if (from === file) {
        // The editor saves again each time the write moves the file aside: every attempt finds another file.
        const temp = `${file}.editor-${saves++}`;
        writeFileSync(temp, `${edited}${' '.repeat(saves)}`);
        realRename(temp, file);
      }
      realRename(from, to);
    });
    const response = await declare(app, 'fs', 'write_file', { access: 'write' });
    expect(response.statusCode, response.body).toBe(409);
    expect(errorCode(response)).toBe('write_conflict');
    expect(saves).toBe(3);
    expect((await readFile(file, 'utf8')).trim()).toBe(edited);
  });

  it('re-applies the declaration on an editor’s save when no If-Match was sent', async (t) => {
    const app = await buildTestApp(t, { demo: { servers: SERVERS } });
    const file = serversFile(app);
    const edited = { version: 1, servers: { fs: { tools: { edited: { access: 'read' } } } } };
    const realRename = fsSync.renameSync.bind(fsSync);
    let saved = false;
    vi.spyOn(fsSync, 'renameSync').mockImplementation((from, to) => {
      if (from === file && !saved) {
        saved = true;
        writeFileSync(`${file}.editor`, JSON.stringify(edited));
        realRename(`${file}.editor`, file);
      }
      realRename(from, to);
    });
    expect((await declare(app, 'fs', 'write_file', { access: 'write' })).statusCode).toBe(200);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({
      version: 1,
      servers: { fs: { tools: { edited: { access: 'read' }, write_file: { access: 'write' } } } },
    });
  });

  it('answers 400 for a bad class, name or label, 404 for an unknown project, and refuses the decide token', async (t) => {
    const app = await buildTestApp(t, { demo: { servers: SERVERS } }, { decideToken: DECIDE_TOKEN });
    const text = await readFile(serversFile(app), 'utf8');
    const bad: [string, string, unknown][] = [
      ['fs', 'write_file', { access: 'execute' }],
      ['fs', 'write_file', {}],
      ['fs', 'write_file', { access: 'write', label: '' }],
      ['fs', 'write_file', { access: 'write', extra: true }],
      ['fs', 'bad\u0007name', { access: 'write' }],
      ['fs', 'x'.repeat(129), { access: 'write' }],
      ['fs', 'resources/read', { access: 'write' }],
      ['idea', 'idea_ticket_read', { access: 'read' }],
      ['Fs', 'write_file', { access: 'write' }],
    ];
    for (const [server, tool, body] of bad) {
      const response = await declare(app, server, tool, body);
      expect(response.statusCode, `${server}/${tool} ${JSON.stringify(body)}: ${response.body}`).toBe(400);
      expect(errorCode(response)).toBe('invalid_request');
    }
    const unknown = await call(app.app, 'PUT', declareUrl('fs', 'write_file', 'nope'), { auth: true, body: { access: 'write' } });
    expect(unknown.statusCode).toBe(404);
    expect(errorCode(unknown)).toBe('unknown_project');
    const body = JSON.stringify({ access: 'read' });
    const headers = { 'content-type': 'application/json' };
    const withDecide = await app.app.inject({
      method: 'PUT',
      url: declareUrl('fs', 'write_file'),
      headers: { ...headers, authorization: `Bearer ${DECIDE_TOKEN}` },
      payload: body,
    });
    expect([401, 403]).toContain(withDecide.statusCode);
    const without = await app.app.inject({ method: 'PUT', url: declareUrl('fs', 'write_file'), headers, payload: body });
    expect(without.statusCode).toBe(401);
    expect(await readFile(serversFile(app), 'utf8')).toBe(text);
  });

  it('leaves an invalid servers file to be fixed by hand: 409 policy_invalid, nothing written', async (t) => {
    const app = await buildTestApp(t, { demo: { servers: '{"version": 1, "servers": {"fs": {"tools": {}}}, "servers": {}}' } });
    const response = await declare(app, 'fs', 'write_file', { access: 'write' });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ error: { code: 'policy_invalid', details: { error: { file: '.ideai/mcp-servers.json' } } } });
    expect(await readFile(serversFile(app), 'utf8')).toContain('"servers": {}}');
  });

  it('follows the policy file’s link rules: never writes through a link out of .ideai or a second name', async (t) => {
    const app = await buildTestApp(t, { demo: { ideai: true } });
    const outside = path.join(app.outer, 'elsewhere.json');
    await writeFile(outside, JSON.stringify(SERVERS));
    await symlink(outside, serversFile(app));
    const linked = await declare(app, 'fs', 'write_file', { access: 'write' });
    expect(linked.statusCode).toBe(409);
    expect(errorCode(linked)).toBe('policy_invalid');
    expect(JSON.parse(await readFile(outside, 'utf8'))).toEqual(SERVERS);

    const other = await buildTestApp(t, { demo: { servers: SERVERS } });
    const second = path.join(other.projectDir('demo'), 'copy.json');
    await link(serversFile(other), second);
    const hardLinked = await declare(other, 'fs', 'write_file', { access: 'write' });
    expect(hardLinked.statusCode).toBe(409);
    expect(JSON.parse(await readFile(second, 'utf8'))).toEqual(SERVERS);
  });

  it('writes nothing through a .ideai folder that leads outside the project', async (t) => {
    const app = await buildTestApp(t, {});
    const outside = path.join(app.outer, 'ideai-outside');
    await mkdir(outside);
    await mkdir(app.projectDir('demo'), { recursive: true });
    await symlink(outside, path.join(app.projectDir('demo'), '.ideai'));
    const other = await buildTestApp(t, {}, { projects: app });
    const response = await declare(other, 'fs', 'write_file', { access: 'write' });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ error: { code: 'policy_invalid', message: expect.stringContaining('outside') as string } });
    expect(fsSync.readdirSync(outside)).toEqual([]);
  });
});
