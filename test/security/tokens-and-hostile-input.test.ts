/** docs/api.md#security: tokens, body limits, prototype-pollution ids, path traversal. */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  agentUrl,
  buildTestApp,
  call,
  decide,
  DECIDE_TOKEN,
  defaultUrl,
  ephemeralUrl,
  errorCode,
  permissionsUrl,
} from '../support/app.js';
import { changedPaths, policyDoc, readText, snapshotTree } from '../support/files.js';
import { READ_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

type Write = ['PUT' | 'DELETE', string, unknown];

const TA = 'ticket-assistant:demo:82';
const mutatingRoutes: Write[] = [
  ['PUT', defaultUrl('demo'), { allowedTools: ['idea_memory_write'] }],
  ['DELETE', defaultUrl('demo'), undefined],
  ['PUT', agentUrl('demo', 'QA'), { allowedTools: ['idea_memory_write'] }],
  ['DELETE', agentUrl('demo', 'QA'), undefined],
  ['PUT', permissionsUrl('demo'), { version: 1, projectDefault: { allowedTools: ['idea_memory_write'] } }],
  ['PUT', ephemeralUrl('demo', TA), { allowedTools: ['idea_memory_write'] }],
  ['DELETE', ephemeralUrl('demo', TA), undefined],
];

const badAuthorizations: Record<string, string>[] = [
  {},
  { authorization: 'Bearer wrong-token' },
  { authorization: `Bearer ${ADMIN_TOKEN}x` },
  { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}` },
  { authorization: ADMIN_TOKEN },
  { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
  { authorization: 'Bearer ' },
  { authorization: `Bearer ${DECIDE_TOKEN}` },
];

describe('admin token on mutating routes', () => {
  it('answers 401 unauthorized without or with a wrong token, and nothing changes', async (t) => {
    const server = await buildTestApp(
      t,
      { demo: { policy: policyDoc([...READ_TOOLS], { QA: [...READ_TOOLS] }) } },
      { decideToken: DECIDE_TOKEN },
    );
    const original = await readText(server.policyPath('demo'));
    for (const [method, url, body] of mutatingRoutes) {
      for (const headers of badAuthorizations) {
        const response = await call(server.app, method, url, { headers, ...(body === undefined ? {} : { body }) });
        expect(response.statusCode, `${method} ${url} ${JSON.stringify(headers)}`).toBe(401);
        expect(errorCode(response)).toBe('unauthorized');
      }
    }
    expect(await readText(server.policyPath('demo'))).toBe(original);
    const listed = await call(server.app, 'GET', '/projects/demo/ephemeral-policies', { auth: true });
    expect(listed.json<{ policies: unknown[] }>().policies).toEqual([]);
    for (const requester of ['QA', 'Main', TA]) {
      const d = await call(server.app, 'POST', '/decide', {
        body: { project: 'demo', requester, tool: 'idea_memory_write' },
        headers: { authorization: `Bearer ${DECIDE_TOKEN}` },
      });
      expect(d.json<{ allow: boolean }>().allow, requester).toBe(false);
    }
  });

  it('checks the token before the body, the project and If-Match (no oracle for an anonymous caller)', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const cases: Write[] = [
      ['PUT', defaultUrl('nope'), { allowedTools: [] }],
      ['PUT', defaultUrl('demo'), { allowedTools: ['idea_teleport'] }],
      ['PUT', agentUrl('demo', 'a:b'), { allowedTools: [] }],
      ['PUT', defaultUrl('demo'), { garbage: true }],
    ];
    for (const [method, url, body] of cases) {
      const response = await call(server.app, method, url, { body, headers: { 'if-match': '"stale"' } });
      expect(response.statusCode, url).toBe(401);
      expect(errorCode(response)).toBe('unauthorized');
    }
  });

  it('accepts the admin token on every mutating route', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    for (const [method, url, body] of mutatingRoutes) {
      const response = await call(server.app, method, url, { auth: true, ...(body === undefined ? {} : { body }) });
      expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
    }
  });
});

describe('decide token', () => {
  const guardedGets = [
    '/catalog',
    '/projects',
    permissionsUrl('demo'),
    '/projects/demo/requesters/Main/effective',
    '/projects/demo/decisions',
    '/projects/demo/ephemeral-policies',
    '/metrics',
  ];
  const query = { project: 'demo', requester: 'Main', tool: 'idea_memory_read' };

  it('guards /decide, /decide/batch and the GET routes, but not /healthz and /readyz', async (t) => {
    const server = await buildTestApp(t, { demo: {} }, { decideToken: DECIDE_TOKEN });
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: DECIDE_TOKEN }]) {
      for (const [url, body] of [
        ['/decide', query],
        ['/decide/batch', { queries: [query] }],
      ] as const) {
        const response = await call(server.app, 'POST', url, { body, headers });
        expect(response.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(401);
        expect(errorCode(response)).toBe('unauthorized');
      }
      for (const url of guardedGets) {
        const response = await call(server.app, 'GET', url, { headers });
        expect(response.statusCode, `${url} ${JSON.stringify(headers)}`).toBe(401);
        expect(errorCode(response)).toBe('unauthorized');
      }
    }
    for (const token of [DECIDE_TOKEN, ADMIN_TOKEN]) {
      const headers = { authorization: `Bearer ${token}` };
      const d = await call(server.app, 'POST', '/decide', { body: query, headers });
      expect(d.statusCode).toBe(200);
      expect(d.json<{ allow: boolean }>().allow).toBe(true);
      expect((await call(server.app, 'POST', '/decide/batch', { body: { queries: [query] }, headers })).statusCode).toBe(200);
      for (const url of guardedGets) {
        expect((await call(server.app, 'GET', url, { headers })).statusCode, `${url} with ${token}`).toBe(200);
      }
    }
    expect((await call(server.app, 'GET', '/healthz')).statusCode).toBe(200);
    expect((await call(server.app, 'GET', '/readyz')).statusCode).toBe(200);
  });

  it('does not let the decide token write', async (t) => {
    const server = await buildTestApp(t, { demo: {} }, { decideToken: DECIDE_TOKEN });
    const response = await call(server.app, 'PUT', agentUrl('demo', 'Main'), {
      body: { allowedTools: ['idea_memory_write'] },
      headers: { authorization: `Bearer ${DECIDE_TOKEN}` },
    });
    expect(response.statusCode).toBe(401);
    expect(await readText(server.policyPath('demo'))).toBeUndefined();
  });

  it('leaves /decide and GETs open when no decide token is configured', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    expect((await call(server.app, 'POST', '/decide', { body: query })).statusCode).toBe(200);
    expect((await call(server.app, 'GET', '/catalog')).statusCode).toBe(200);
  });
});

describe('body size limit', () => {
  it('answers 413 to a huge body on /decide and on a write, and keeps serving', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const huge = { project: 'demo', requester: 'Main', tool: 'idea_memory_read', arguments: { blob: 'x'.repeat(3 * 1024 * 1024) } };
    const response = await call(server.app, 'POST', '/decide', { body: huge });
    expect(response.statusCode).toBe(413);
    expect(errorCode(response)).toBe('payload_too_large');
    const write = await call(server.app, 'PUT', defaultUrl('demo'), {
      body: { allowedTools: Array.from({ length: 200_000 }, () => 'idea_memory_read') },
      auth: true,
    });
    expect(write.statusCode).toBe(413);
    expect(await readText(server.policyPath('demo'))).toBeUndefined();
    expect(await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_memory_read' })).toMatchObject({ allow: true });
  });
});

describe('prototype-pollution ids', () => {
  const protoIds = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

  it('never crashes or grants for requesters named like Object.prototype members', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS], { QA: ['idea_memory_write'] }) } });
    for (const requester of protoIds) {
      for (const tool of ['idea_memory_write', 'idea_ask_agent', '__proto__', 'constructor']) {
        const d = await decide(server.app, { project: 'demo', requester, tool });
        expect(d.allow, `${requester} ${tool}`).toBe(false);
      }
      expect(await decide(server.app, { project: 'demo', requester, tool: 'idea_memory_read' })).toMatchObject({
        allow: true,
        source: 'project-default',
      });
    }
    for (const project of protoIds) {
      const d = await decide(server.app, { project, requester: 'QA', tool: 'idea_memory_write' });
      expect(d).toMatchObject({ allow: false, reason: 'unknown_project' });
      const view = await call(server.app, 'GET', permissionsUrl(project));
      expect(view.statusCode, project).toBe(404);
      const write = await call(server.app, 'PUT', defaultUrl(project), { body: { allowedTools: ['idea_memory_write'] }, auth: true });
      expect(write.statusCode, project).toBe(404);
    }
    expect(({} as Record<string, unknown>).allowedTools).toBeUndefined();
    expect(({} as Record<string, unknown>).idea_memory_write).toBeUndefined();
  });

  it('stores an override for agent "__proto__" as plain data that grants nobody else', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    for (const agentId of ['__proto__', 'constructor']) {
      const response = await call(server.app, 'PUT', agentUrl('demo', agentId), {
        body: { allowedTools: ['idea_memory_write'] },
        auth: true,
      });
      expect([200, 400]).toContain(response.statusCode);
    }
    for (const requester of ['Main', 'QA', 'prototype', 'toString', '']) {
      expect((await decide(server.app, { project: 'demo', requester, tool: 'idea_memory_write' })).allow, requester).toBe(false);
    }
    expect(({} as Record<string, unknown>).policy).toBeUndefined();
    const view = await call(server.app, 'GET', permissionsUrl('demo'));
    expect(view.statusCode).toBe(200);
    const text = await readText(server.policyPath('demo'));
    if (text !== undefined) {
      const parsed = JSON.parse(text) as { version: number };
      expect(parsed.version).toBe(1);
    }
  });

  it('treats a document with "__proto__" keys as data (no pollution, still a valid document)', async (t) => {
    const doc =
      '{"version": 1, "__proto__": {"projectDefault": {"allowedTools": ["idea_memory_write"]}}, "agents": [{"agentId": "QA", "policy": {"allowedTools": ["idea_memory_read"]}, "__proto__": {"x": 1}}]}';
    const server = await buildTestApp(t, { demo: { policy: doc } });
    for (const requester of ['Main', 'QA']) {
      expect((await decide(server.app, { project: 'demo', requester, tool: 'idea_memory_write' })).allow, requester).toBe(false);
    }
    expect(({} as Record<string, unknown>).projectDefault).toBeUndefined();
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('path traversal', () => {
  it('refuses traversal ids with 4xx and touches no file outside the project .ideai/', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS]) }, victim: {} });
    const before = await snapshotTree(server.outer);
    const body = { allowedTools: ['idea_memory_write'] };
    const projectIds = [
      '..',
      '.',
      '%2e%2e',
      '%2E%2E',
      '..%2F..',
      'demo%2F..%2Fvictim',
      '..%2Fvictim',
      '%2e%2e%2f%2e%2e%2fetc',
      'demo%5C..%5Cvictim',
      '%00',
    ];
    for (const project of projectIds) {
      for (const [method, url] of [
        ['PUT', `/projects/${project}/mcp-tool-permissions/default`],
        ['PUT', `/projects/${project}/mcp-tool-permissions/agents/QA`],
        ['PUT', `/projects/${project}/mcp-tool-permissions`],
        ['GET', `/projects/${project}/mcp-tool-permissions`],
      ] as const) {
        const response = await call(server.app, method, url, {
          auth: true,
          ...(method === 'PUT' ? { body: url.endsWith('permissions') ? { version: 1 } : body } : {}),
        });
        expect(response.statusCode, `${method} ${url}`).toBeGreaterThanOrEqual(400);
        expect(response.statusCode, `${method} ${url}`).toBeLessThan(500);
      }
    }
    const agentIds = ['..%2F..%2Fsentinel.txt', '%2e%2e%2f%2e%2e', '..%5C..%5Cx', 'a%2Fb', '%2F'];
    for (const agentId of agentIds) {
      const response = await call(server.app, 'PUT', `/projects/demo/mcp-tool-permissions/agents/${agentId}`, { body, auth: true });
      expect(response.statusCode, agentId).toBe(400);
      expect(errorCode(response), agentId).toBe('invalid_agent_id');
    }
    // ".." is a valid agent id (no ':', '/', '\\'): it may be stored, but only as data in the policy file.
    const dots = await call(server.app, 'PUT', '/projects/demo/mcp-tool-permissions/agents/..', { body, auth: true });
    expect(dots.statusCode).toBeLessThan(500);
    const after = await snapshotTree(server.outer);
    // Only the policy file of demo (and transient temp files already gone) may differ.
    for (const file of changedPaths(before, after)) expect(file.startsWith('projects/demo/.ideai/'), file).toBe(true);
    expect(after.get('sentinel.txt')).toBe(before.get('sentinel.txt'));
    expect(await decide(server.app, { project: 'victim', requester: 'QA', tool: 'idea_memory_write' })).toMatchObject({ allow: false });
  });
});

describe('logs', () => {
  it('logs every denial at info with the decision fields, and never a token', async (t) => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(
          ...chunk
            .toString('utf8')
            .split('\n')
            .filter((line) => line !== ''),
        );
        done();
      },
    });
    const logger = pino({ level: 'info' }, stream);
    const server = await buildTestApp(t, { demo: {} }, { decideToken: DECIDE_TOKEN, logger });
    const auth = { authorization: `Bearer ${DECIDE_TOKEN}` };
    const denied = await call(server.app, 'POST', '/decide', {
      body: { project: 'demo', requester: 'QA', tool: 'idea_memory_write' },
      headers: auth,
    });
    const decision = denied.json<{ decisionId: string }>();
    await call(server.app, 'PUT', agentUrl('demo', 'QA'), { body: { allowedTools: ['idea_memory_write'] }, auth: true });
    await call(server.app, 'PUT', agentUrl('demo', 'QA'), {
      body: { allowedTools: [] },
      headers: { authorization: 'Bearer wrong-secret-token' },
    });
    await call(server.app, 'GET', '/catalog', { headers: auth });
    await waitFor(() => lines.some((line) => line.includes(decision.decisionId)), 'denial logged', 2_000);
    const entry = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .find((record) => record.decisionId === decision.decisionId);
    expect(entry).toMatchObject({
      level: 30,
      project: 'demo',
      requester: 'QA',
      tool: 'idea_memory_write',
      reason: 'not_in_allowlist',
      source: 'builtin-read-only',
    });
    // "with the same fields" as its recent-decisions entry (docs/api.md#http-api), `at` and `allow` included.
    const recent = (await call(server.app, 'GET', '/projects/demo/decisions?allow=false', { headers: auth })).json<{
      decisions: Record<string, unknown>[];
    }>();
    const recorded = recent.decisions.find((one) => one.decisionId === decision.decisionId);
    expect(recorded).toBeDefined();
    expect(entry).toMatchObject(recorded ?? {});
    const all = lines.join('\n');
    for (const secret of [ADMIN_TOKEN, DECIDE_TOKEN, 'wrong-secret-token']) expect(all).not.toContain(secret);
  });
});
