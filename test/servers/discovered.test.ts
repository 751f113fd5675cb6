/**
 * docs/api.md#other-mcp-servers-tools: what a proxy reports of a server's `tools/list` is kept to be
 * shown (bounded in count, size and rate) and never changes a decision. The real app, `app.inject`.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CatalogResponse, Decision, PreviewResponse, ServersResponse } from '../../schemas/index.js';
import { IDEA_CATALOG } from '../../server/domain/project-catalog.js';
import { DiscoveredTools } from '../../server/servers/discovered-tools.js';
import { DECIDE_TOKEN, buildTestApp } from '../support/app.js';
import { waitFor } from '../support/wait.js';

const SERVERS = { version: 1, servers: { fs: { label: 'Fichiers', tools: { read_text_file: { access: 'read' } } } } };
const decide = { authorization: `Bearer ${DECIDE_TOKEN}` };

const report = (tools: unknown[], server = 'fs') => ({
  method: 'POST' as const,
  url: `/projects/demo/servers/${server}/discovered`,
  headers: decide,
  payload: { tools },
});

describe('discovered tools', () => {
  it('keeps the undeclared tools a server lists, with its hints, and lists them beside the declared ones', async (t) => {
    const { app, projectDir } = await buildTestApp(t, { demo: { servers: SERVERS } }, { decideToken: DECIDE_TOKEN });
    const reported = await app.inject(
      report([
        { name: 'read_text_file', description: 'Read a file' },
        { name: 'write_file', title: 'Write', description: 'Write a file', annotations: { destructiveHint: true } },
        { name: 'list_directory', annotations: { readOnlyHint: true } },
      ]),
    );
    expect(reported.statusCode).toBe(202);
    expect(reported.json()).toEqual({ received: 3, undeclared: 2, kept: 2 });
    await app.inject(report([{ name: 'navigate' }], 'web'));

    const listed = (await app.inject({ method: 'GET', url: '/projects/demo/servers', headers: decide })).json<ServersResponse>();
    expect(listed.servers.map((server) => server.id)).toEqual(['fs', 'web']);
    const [fs, web] = listed.servers;
    expect(fs?.label).toBe('Fichiers');
    expect(fs?.tools).toContainEqual({ name: 'fs/read_text_file', access: 'read', label: 'read_text_file' });
    expect(fs?.discovered.map((tool) => tool.name)).toEqual(['write_file', 'list_directory']);
    expect(fs?.discovered[0]).toMatchObject({ title: 'Write', description: 'Write a file', annotations: { destructiveHint: true } });
    expect(fs?.discovered[1]).toMatchObject({ title: null, description: null, annotations: { readOnlyHint: true } });
    expect(Date.parse(fs?.discovered[0]?.firstSeen ?? '')).toBeGreaterThan(0);
    expect(web).toMatchObject({ id: 'web', label: 'web', tools: [] });

    // Discovery is never a permission, whatever the hints say.
    for (const tool of ['fs/list_directory', 'fs/write_file', 'web/navigate']) {
      const decided = await app.inject({
        method: 'POST',
        url: '/decide',
        headers: decide,
        payload: { project: 'demo', requester: 'QA', tool },
      });
      expect(decided.json()).toMatchObject({ allow: false, reason: 'unknown_tool' });
    }

    // Declared since: no longer listed as discovered.
    const declared = { version: 1, servers: { fs: { tools: { read_text_file: { access: 'read' }, list_directory: { access: 'read' } } } } };
    await writeFile(path.join(projectDir('demo'), '.ideai', 'mcp-servers.json'), JSON.stringify(declared));
    await waitFor(async () => {
      const now = (await app.inject({ method: 'GET', url: '/projects/demo/servers', headers: decide })).json<ServersResponse>();
      return now.servers[0]?.discovered.map((tool) => tool.name).join() === 'write_file';
    }, 'declared tool no longer discovered');
  });

  it('needs the decide token, and answers 404 for an unknown project and 400 for a bad server id', async (t) => {
    const { app } = await buildTestApp(t, { demo: { servers: SERVERS } }, { decideToken: DECIDE_TOKEN });
    expect((await app.inject({ ...report([{ name: 'x' }]), headers: {} })).statusCode).toBe(401);
    expect((await app.inject({ ...report([{ name: 'x' }]), url: '/projects/nope/servers/fs/discovered' })).statusCode).toBe(404);
    expect((await app.inject(report([{ name: 'x' }], 'idea'))).statusCode).toBe(400);
    expect((await app.inject(report([{ name: 'x' }], 'Fs'))).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/projects/nope/servers', headers: decide })).statusCode).toBe(404);
  });

  it('bounds what a hostile server can make it hold: count, size, unknown fields and rate', async (t) => {
    const { app } = await buildTestApp(t, { demo: { servers: SERVERS } }, { decideToken: DECIDE_TOKEN });
    const many = Array.from({ length: 501 }, (_, index) => ({ name: `t${index}` }));
    expect((await app.inject(report(many))).json()).toMatchObject({ error: { code: 'invalid_request' } });
    expect((await app.inject(report([{ name: 'x', description: 'd'.repeat(301) }]))).statusCode).toBe(400);
    // A field the tools/list shape has but the service does not keep, or an inputSchema of more properties than a tool takes.
    expect((await app.inject(report([{ name: 'x', outputSchema: { type: 'object' } }]))).statusCode).toBe(400);
    const properties = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`a${index}`, {}]));
    expect((await app.inject(report([{ name: 'x', inputSchema: { type: 'object', properties } }]))).statusCode).toBe(400);
    expect((await app.inject(report([{ name: 'x\u0000' }]))).statusCode).toBe(400);
    const huge = await app.inject({
      ...report([]),
      payload: JSON.stringify({ tools: [], pad: 'x'.repeat(600 * 1024) }),
      headers: { ...decide, 'content-type': 'application/json' },
    });
    expect(huge.statusCode).toBe(413);

    const answers: number[] = [];
    for (let index = 0; index < 11; index++) answers.push((await app.inject(report([{ name: `tool${index}` }]))).statusCode);
    expect(answers.slice(0, 10).every((status) => status === 202)).toBe(true);
    expect(answers[10]).toBe(429);
    const limited = await app.inject(report([{ name: 'late' }]));
    expect(limited.json()).toMatchObject({ error: { code: 'rate_limited' } });
    // Another server of the project has its own allowance.
    expect((await app.inject(report([{ name: 'a' }], 'web'))).statusCode).toBe(202);
  });

  it('a reported inputSchema gives declared tools their arguments in the catalog and the preview’s checks, never in a decision', async (t) => {
    const conditioned = (extraAgents = 0) => ({
      version: 1,
      agents: [
        { agentId: 'QA', policy: { allowedTools: ['fs/read_text_file'], conditions: { 'fs/read_text_file': { pth: { in: ['/a'] } } } } },
        // Past 64 KiB the preview checks the document on its worker thread, with the catalog as plain data.
        ...Array.from({ length: extraAgents }, (_, index) => ({
          agentId: `Agent${index}`,
          policy: { allowedTools: ['fs/read_text_file'] },
        })),
      ],
    });
    const { app } = await buildTestApp(t, { demo: { servers: SERVERS, policy: conditioned() } }, { decideToken: DECIDE_TOKEN });
    const catalogTool = async (name: string) => {
      const response = await app.inject({ method: 'GET', url: '/projects/demo/catalog', headers: decide });
      return {
        etag: response.headers.etag,
        body: response.json<CatalogResponse>(),
        tool: response.json<CatalogResponse>().tools.find((tool) => tool.name === name),
      };
    };
    const previewErrors = async (document: unknown) => {
      const response = await app.inject({
        method: 'POST',
        url: '/projects/demo/mcp-tool-permissions/preview',
        headers: decide,
        payload: document as object,
      });
      expect(response.statusCode).toBe(200);
      return response.json<PreviewResponse>().errors;
    };
    const decision = async (args: Record<string, unknown>) =>
      (
        await app.inject({
          method: 'POST',
          url: '/decide',
          headers: decide,
          payload: { project: 'demo', requester: 'QA', tool: 'fs/read_text_file', arguments: args },
        })
      ).json<Decision>();

    const before = await catalogTool('fs/read_text_file');
    expect(before.tool?.arguments).toEqual([]);
    expect(before.etag).toBe(`"${before.body.version ?? ''}"`);
    expect((await catalogTool('fs/resources/read')).tool?.arguments).toEqual(['uri']);
    // A declared name is known to the preview's check; its arguments are not known yet, so not compared.
    expect(await previewErrors(conditioned())).toEqual([]);
    const decided = [await decision({ pth: '/a' }), await decision({ path: '/a' })];
    expect(decided.map((one) => one.reason)).toEqual(['allowed', 'argument_not_allowed']);

    const reported = await app.inject(
      report([
        { name: 'read_text_file', inputSchema: { type: 'object', properties: { path: { type: 'string' }, 'bad-name': {}, head: {} } } },
      ]),
    );
    expect(reported.statusCode).toBe(202);
    const after = await catalogTool('fs/read_text_file');
    expect(after.tool?.arguments).toEqual(['path', 'head']);
    expect(after.body.version).toBe(before.body.version);
    expect(after.etag).not.toBe(before.etag);
    const warning = {
      file: '.ideai/mcp-tool-permissions.json',
      severity: 'warning',
      code: 'unknown_argument',
      message:
        'condition on argument "pth" at /agents/0/policy/conditions/fs~1read_text_file/pth: fs/read_text_file is not known to take it (it takes path, head); a call without it is refused; did you mean "path"?',
    };
    expect(await previewErrors(conditioned())).toEqual([expect.objectContaining(warning)]);
    const big = conditioned(800);
    expect(JSON.stringify(big, null, 2).length).toBeGreaterThan(64 * 1024);
    expect(await previewErrors(big)).toEqual([expect.objectContaining(warning)]);
    // What the server says of itself changes no decision.
    const without = ({ decisionId: _id, ...rest }: Decision) => rest;
    expect([await decision({ pth: '/a' }), await decision({ path: '/a' })].map(without)).toEqual(decided.map(without));
  });

  it('keeps the argument names of at most 2,000 arguments a server, the last report replacing the one before', () => {
    const store = new DiscoveredTools();
    const withArguments = (count: number, from = 0) =>
      Array.from({ length: 500 }, (_, index) => ({
        name: `t${from + index}`,
        inputSchema: { properties: Object.fromEntries(Array.from({ length: count }, (_, arg) => [`a${arg}`, {}])) },
      }));
    store.report('demo', 'fs', withArguments(5), IDEA_CATALOG);
    expect(store.argumentsOf('demo', 'fs', 't0')).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(store.argumentsOf('demo', 'fs', 't399')).toHaveLength(5);
    // Past the 2,000 names, a tool's arguments are unknown, never cut.
    expect(store.argumentsOf('demo', 'fs', 't400')).toBeUndefined();
    store.report('demo', 'fs', [{ name: 't0' }], IDEA_CATALOG);
    expect(store.argumentsOf('demo', 'fs', 't0')).toBeUndefined();
    expect(store.argumentsOf('demo', 'fs', 't1')).toBeUndefined();
  });

  it('keeps at most 500 tools a server across reports, and at most 32 servers only discovered', () => {
    let now = 0;
    const store = new DiscoveredTools({ now: () => (now += 10_000) });
    const tools = (from: number, count: number) => Array.from({ length: count }, (_, index) => ({ name: `t${from + index}` }));
    expect(store.report('demo', 'fs', tools(0, 500), IDEA_CATALOG).kept).toBe(500);
    expect(store.report('demo', 'fs', tools(500, 10), IDEA_CATALOG)).toEqual({ undeclared: 10, kept: 500 });
    for (let index = 1; index < 32; index++) store.report('demo', `s${index}`, [], IDEA_CATALOG);
    expect(() => store.report('demo', 'one-more', [], IDEA_CATALOG)).toThrow(/32 servers/);
  });
});
