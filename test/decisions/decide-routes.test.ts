/** docs/api.md#http-api: /decide and /decide/batch validation, /catalog, /projects, /healthz, /readyz. */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, call, decide, decideBatch, errorCode, suiteScope, type TestApp } from '../support/app.js';
import { policyDoc } from '../support/files.js';
import { ALL_TOOLS, ISSUE_SCOPED_TOOLS, READ_TOOLS, WRITE_TOOLS } from '../support/tools.js';

describe('POST /decide validation', () => {
  const suite = suiteScope();
  let server: TestApp;
  beforeAll(async () => {
    server = await buildTestApp(suite, { demo: {} });
  });
  const valid = { project: 'demo', requester: 'Main', tool: 'idea_memory_read' };
  const malformed: [string, unknown][] = [
    ['missing tool', { project: 'demo', requester: 'Main' }],
    ['missing project', { requester: 'Main', tool: 'idea_memory_read' }],
    ['missing requester', { project: 'demo', tool: 'idea_memory_read' }],
    ['extra field', { ...valid, allow: true }],
    ['tool is a number', { ...valid, tool: 5 }],
    ['requester is null', { ...valid, requester: null }],
    ['project is an array', { ...valid, project: ['demo'] }],
    ['arguments is a string', { ...valid, arguments: 'issueRef=82' }],
    ['body is an array', [valid]],
    ['body is a string', '"demo"'],
    ['empty object', {}],
    ['broken JSON', '{"project": "demo", '],
  ];

  it.each(malformed)('answers 400 invalid_request for %s', async (_label, body) => {
    const { app } = server;
    const response = await call(app, 'POST', '/decide', { body });
    expect(response.statusCode).toBe(400);
    const parsed = response.json<{ error: { code: string; message: string } }>();
    expect(parsed.error.code).toBe('invalid_request');
    expect(typeof parsed.error.message).toBe('string');
    expect(parsed.error.message).not.toBe('');
  });

  it('accepts any JSON object as arguments and reads none it has no reason to (docs/api.md#conditions-on-a-tools-arguments)', async () => {
    const { app } = server;
    for (const args of [
      { issueRef: '#1', nested: { a: [1] } },
      { issueRef: { deep: { x: 1 } } },
      { a: JSON.parse(`${'['.repeat(500)}${']'.repeat(500)}`) as unknown },
    ]) {
      const response = await call(app, 'POST', '/decide', { body: { ...valid, arguments: args } });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<{ allow: boolean; reason: string }>()).toMatchObject({ allow: true, reason: 'allowed' });
    }
  });

  it('denies with invalid_requester a requester holding bytes that are not UTF-8 (never a separate agent on the project default)', async (t) => {
    const { app } = await buildTestApp(t, {
      demo: {
        policy: {
          version: 1,
          projectDefault: { allowedTools: ['idea_memory_write'] },
          agents: [{ agentId: 'QA', policy: { allowedTools: [] } }],
        },
      },
    });
    const raw = Buffer.concat([
      Buffer.from('{"project":"demo","requester":"QA'),
      Buffer.from([0xff]),
      Buffer.from('","tool":"idea_memory_write"}'),
    ]);
    const response = await app.inject({ method: 'POST', url: '/decide', headers: { 'content-type': 'application/json' }, payload: raw });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ allow: false, reason: 'invalid_requester', requester: { kind: 'invalid' } });
    expect(await decide(app, { project: 'demo', requester: 'QA\ufffd', tool: 'idea_memory_write' })).toMatchObject({
      allow: false,
      reason: 'invalid_requester',
    });
  });

  it('decides on arguments nested at any depth within the body limit', async () => {
    const { app } = server;
    const deep = { issueRef: '#1', path: { a: { b: { c: [{ d: ['e', { f: null }] }] } } } };
    const response = await call(app, 'POST', '/decide', { body: { ...valid, arguments: deep } });
    expect(response.statusCode).toBe(200);
    expect(response.json<{ allow: boolean }>().allow).toBe(true);
  });

  it('answers 400 for a missing body', async () => {
    const { app } = server;
    const response = await app.inject({ method: 'POST', url: '/decide' });
    expect(response.statusCode).toBeGreaterThanOrEqual(400);
    expect(response.statusCode).toBeLessThan(500);
    expect(response.statusCode).not.toBe(200);
  });

  it('answers 200 with allow=false (never an error status) for well-formed bodies that deny', async () => {
    const { app } = server;
    for (const body of [
      { project: 'nope', requester: 'Main', tool: 'idea_memory_read' },
      { project: 'demo', requester: 'Main', tool: 'nope' },
      {
        project: 'demo',
        requester: 'Main',
        tool: 'idea_memory_write',
        arguments: { issueRef: '#1', nested: { a: 1 }, list: [1, 'x', null] },
      },
    ]) {
      const response = await call(app, 'POST', '/decide', { body });
      expect(response.statusCode).toBe(200);
      expect(response.json<{ allow: boolean }>().allow).toBe(false);
    }
  });
});

describe('POST /decide/batch', () => {
  it('answers each query in order, exactly as /decide would', async (t) => {
    const { app } = await buildTestApp(t, {
      demo: { policy: policyDoc([...READ_TOOLS, 'idea_memory_write'], { QA: ['idea_ask_agent'] }) },
      other: {},
    });
    const queries = [
      { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' },
      { project: 'demo', requester: 'QA', tool: 'idea_memory_read' },
      { project: 'nope', requester: 'QA', tool: 'idea_memory_read' },
      { project: 'demo', requester: 'Main', tool: 'idea_memory_write' },
      { project: 'demo', requester: 'mcp', tool: 'idea_memory_write' },
      { project: 'demo', requester: 'Main', tool: 'idea_teleport' },
      { project: 'other', requester: 'Main', tool: 'idea_memory_write' },
      { project: 'demo', requester: 'ticket-assistant:other:1', tool: 'idea_memory_read' },
    ];
    const batch = await decideBatch(app, queries);
    expect(batch).toHaveLength(queries.length);
    expect(batch.map((d) => [d.allow, d.reason])).toEqual([
      [true, 'allowed'],
      [false, 'not_in_allowlist'],
      [false, 'unknown_project'],
      [true, 'allowed'],
      [false, 'not_in_allowlist'],
      [false, 'unknown_tool'],
      [false, 'not_in_allowlist'],
      [false, 'requester_project_mismatch'],
    ]);
    for (const [index, query] of queries.entries()) {
      const single = await decide(app, query);
      const fromBatch = batch[index];
      const { decisionId: _a, message: _m1, ...singleRest } = single;
      const { decisionId: _b, message: _m2, ...batchRest } = fromBatch ?? single;
      expect(batchRest, JSON.stringify(query)).toEqual(singleRest);
      expect(fromBatch?.message).toBe(single.message);
    }
    expect(new Set(batch.map((d) => d.decisionId)).size).toBe(queries.length);
  });

  const suite = suiteScope();

  let plain: TestApp;

  beforeAll(async () => {
    plain = await buildTestApp(suite, { demo: {} });
  });

  it('accepts 1 and 100 queries, refuses 0 and 101 with 400 invalid_request', async () => {
    const { app } = plain;
    const query = { project: 'demo', requester: 'Main', tool: 'idea_memory_read' };
    expect(await decideBatch(app, [query])).toHaveLength(1);
    const hundred = await decideBatch(
      app,
      Array.from({ length: 100 }, (_, i) => ({ ...query, tool: ALL_TOOLS[i % 25] ?? '' })),
    );
    expect(hundred).toHaveLength(100);
    expect(hundred.map((d) => d.tool.name)).toEqual(Array.from({ length: 100 }, (_, i) => ALL_TOOLS[i % 25]));
    for (const count of [0, 101]) {
      const response = await call(app, 'POST', '/decide/batch', { body: { queries: Array.from({ length: count }, () => query) } });
      expect(response.statusCode, `${count} queries`).toBe(400);
      expect(errorCode(response)).toBe('invalid_request');
    }
  });

  it('refuses the whole batch when one query is malformed, or the envelope has an extra field', async () => {
    const { app } = plain;
    const query = { project: 'demo', requester: 'Main', tool: 'idea_memory_read' };
    for (const body of [{ queries: [query, { ...query, tool: 1 }] }, { queries: [query], extra: 1 }, { queries: query }, [query]]) {
      const response = await call(app, 'POST', '/decide/batch', { body });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(errorCode(response)).toBe('invalid_request');
    }
  });
});

describe('GET /catalog', () => {
  it('lists the 25 tools with access, group, label and issueScoped, the 7 groups and the 9 read-only defaults', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    const response = await call(app, 'GET', '/catalog');
    expect(response.statusCode).toBe(200);
    const body = response.json<{
      tools: { name: string; access: string; group: string; label: string; issueScoped: boolean }[];
      groups: { id: string; label: string }[];
      readOnlyDefault: string[];
    }>();
    expect(body.tools.map((t) => t.name)).toEqual(ALL_TOOLS);
    expect(body.tools.filter((t) => t.access === 'read').map((t) => t.name)).toEqual([...READ_TOOLS]);
    expect(body.tools.filter((t) => t.access === 'write').map((t) => t.name)).toEqual([...WRITE_TOOLS]);
    expect(body.readOnlyDefault).toEqual([...READ_TOOLS]);
    expect(body.groups).toEqual([
      { id: 'project-read', label: 'Lecture projet' },
      { id: 'ticket-read', label: 'Lecture tickets' },
      { id: 'delegation', label: 'Délégation agents' },
      { id: 'context-memory', label: 'Contexte et mémoire' },
      { id: 'tickets', label: 'Tickets' },
      { id: 'work-exec', label: 'Travail et exécution' },
      { id: 'skills', label: 'Skills' },
    ]);
    const byName = new Map(body.tools.map((t) => [t.name, t]));
    expect(byName.get('idea_ticket_update_carnet')).toEqual({
      name: 'idea_ticket_update_carnet',
      access: 'write',
      group: 'tickets',
      label: "Modifier le carnet d'un ticket",
      issueScoped: true,
      arguments: ['issueRef', 'content'],
    });
    expect(byName.get('idea_ask_agent')).toMatchObject({
      group: 'delegation',
      label: 'Déléguer une demande à un agent',
      issueScoped: false,
      arguments: ['agentId', 'message'],
    });
    expect(byName.get('idea_run_in_background')).toMatchObject({ arguments: expect.arrayContaining(['command']) as unknown });
    for (const tool of body.tools.filter((one) => one.issueScoped)) {
      expect((tool as { arguments?: string[] }).arguments, tool.name).toContain('issueRef');
    }
    const issueScoped = body.tools.filter((t) => t.issueScoped).map((t) => t.name);
    expect(issueScoped).toEqual(ISSUE_SCOPED_TOOLS);
    for (const tool of body.tools) expect(body.groups.map((g) => g.id)).toContain(tool.group);
  });
});

describe('GET /projects', () => {
  it('lists every project with status, revision, agents and overrides counts', async (t) => {
    const { app } = await buildTestApp(t, {
      alpha: {},
      beta: {
        policy: policyDoc(undefined, { QA: ['idea_memory_read'], Ghost: [] }),
        agents: [{ id: 'Main' }, { id: 'QA' }],
      },
      broken: { policy: '{' },
    });
    const response = await call(app, 'GET', '/projects');
    expect(response.statusCode).toBe(200);
    const projects = response.json<{
      projects: { id: string; status: string; revision: string; agents: number; overrides: number }[];
    }>().projects;
    expect(projects.map((p) => p.id).sort()).toEqual(['alpha', 'beta', 'broken']);
    const byId = new Map(projects.map((p) => [p.id, p]));
    expect(byId.get('alpha')).toEqual({ id: 'alpha', status: 'ok', revision: 'builtin', agents: 0, overrides: 0 });
    // Main, QA declared; Ghost only has an override: 3 listed agents, 2 overrides.
    expect(byId.get('beta')).toMatchObject({ status: 'ok', agents: 3, overrides: 2 });
    expect(byId.get('beta')?.revision).not.toBe('builtin');
    expect(byId.get('broken')?.status).toBe('invalid');
  });

  it('ignores files and folders whose names are not project ids', async (t) => {
    const { app } = await buildTestApp(
      t,
      { good: {}, '.hidden': {}, '-dash': {} },
      { prepare: async (root) => void (await import('node:fs/promises')).writeFile(`${root}/file.txt`, 'not a project') },
    );
    const ids = (await call(app, 'GET', '/projects')).json<{ projects: { id: string }[] }>().projects.map((p) => p.id);
    expect(ids).toEqual(['good']);
  });
});

describe('error shape', () => {
  const suite = suiteScope();
  let server: TestApp;
  beforeAll(async () => {
    server = await buildTestApp(suite, { demo: {} });
  });

  it('answers unknown routes and methods with the error shape', async () => {
    for (const [method, url] of [
      ['GET', '/nope'],
      ['GET', '/projects/demo/nope'],
      ['DELETE', '/catalog'],
      ['PUT', '/decide'],
    ] as const) {
      const response = await call(server.app, method, url, { auth: true });
      expect(response.statusCode, `${method} ${url}`).toBeGreaterThanOrEqual(400);
      expect(response.statusCode, `${method} ${url}`).toBeLessThan(500);
      const body = response.json<{ error: { code: unknown; message: unknown } }>();
      expect(typeof body.error.code, `${method} ${url}`).toBe('string');
      expect(body.error.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
      expect(typeof body.error.message).toBe('string');
    }
  });
});

describe('OpenAPI and metrics', () => {
  const suite = suiteScope();
  let server: TestApp;
  beforeAll(async () => {
    server = await buildTestApp(suite, { demo: {} });
  });

  it('publishes an OpenAPI document at /docs covering every route', async () => {
    const response = await call(server.app, 'GET', '/docs/json');
    expect(response.statusCode).toBe(200);
    const doc = response.json<{ openapi?: string; swagger?: string; paths: Record<string, Record<string, unknown>> }>();
    expect(doc.openapi ?? doc.swagger).toBeTruthy();
    const expected: [string, string][] = [
      ['/decide', 'post'],
      ['/decide/batch', 'post'],
      ['/catalog', 'get'],
      ['/projects', 'get'],
      ['/projects/{project}/mcp-tool-permissions', 'get'],
      ['/projects/{project}/mcp-tool-permissions', 'put'],
      ['/projects/{project}/mcp-tool-permissions/default', 'put'],
      ['/projects/{project}/mcp-tool-permissions/default', 'delete'],
      ['/projects/{project}/mcp-tool-permissions/agents/{agentId}', 'put'],
      ['/projects/{project}/mcp-tool-permissions/agents/{agentId}', 'delete'],
      ['/projects/{project}/requesters/{requester}/effective', 'get'],
      ['/projects/{project}/decisions', 'get'],
      ['/projects/{project}/ephemeral-policies', 'get'],
      ['/projects/{project}/ephemeral-policies/{requester}', 'put'],
      ['/projects/{project}/ephemeral-policies/{requester}', 'delete'],
      ['/healthz', 'get'],
      ['/readyz', 'get'],
    ];
    for (const [route, method] of expected) expect(doc.paths[route]?.[method], `${method} ${route}`).toBeDefined();
    expect(JSON.stringify(doc.paths['/decide']?.post)).toContain('requester');
  });

  it('counts decisions by reason in /metrics (Prometheus text)', async () => {
    await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' });
    await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_teleport' });
    const response = await call(server.app, 'GET', '/metrics');
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    expect(response.body).toMatch(/not_in_allowlist/);
    expect(response.body).toMatch(/unknown_tool/);
    expect(response.body).toMatch(/^# TYPE \S+ (counter|gauge|histogram|summary)$/m);
  });
});

describe('health', () => {
  it('answers /healthz and /readyz with 200 once ready', async (t) => {
    const { app } = await buildTestApp(t, { demo: {}, other: {} });
    const health = await call(app, 'GET', '/healthz');
    expect(health.statusCode).toBe(200);
    const ready = await call(app, 'GET', '/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json<{ status: string; projects: number }>()).toEqual({ status: 'ready', projects: 2 });
  });
});
