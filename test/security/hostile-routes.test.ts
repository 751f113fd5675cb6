/**
 * Hostile input on every route (through `app.inject`): traversal and control-character ids in every
 * URL parameter, malformed and poisoned bodies, deep nesting, wrong content types, huge bodies,
 * odd headers and query strings. Every answer must be a 2xx or a 4xx with a stable error code,
 * never a 5xx; no file outside the project's `.ideai/` may change; no hostile input may grant.
 */
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../schemas/index.js';
import { buildTestApp, isStableError, suiteScope, type TestApp } from '../support/app.js';
import { changedPaths, policyText, snapshotTree } from '../support/files.js';
import { READ_TOOLS, WRITE_TOOLS } from '../support/tools.js';

const ADMIN = 'hostile-admin-token-0123456789abcdef';
const auth = { authorization: `Bearer ${ADMIN}` };
type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

let app: FastifyInstance;
const suite = suiteScope();
let made: TestApp;
let before: Map<string, string>;

beforeAll(async () => {
  made = await buildTestApp(
    suite,
    { demo: policyText(undefined, { Granted: ['idea_memory_write'] }), victim: null },
    { adminToken: ADMIN, rescanMs: 0 },
  );
  ({ app } = made);
  before = await snapshotTree(made.outer);
});

/** Every answer of this file goes through here: never a 5xx, and every 4xx has the error shape. */
function expectSafe(response: LightMyRequestResponse, what: string): void {
  expect(response.statusCode, `${what}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
  if (response.statusCode >= 400) {
    expect(isStableError(JSON.parse(response.body)), `${what}: ${response.body.slice(0, 300)}`).toBe(true);
  }
}

async function send(method: Method, url: string, payload?: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({
    method,
    url,
    headers: { ...auth, ...(payload === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(payload === undefined ? {} : { payload }),
  });
}

/** URL path segments as an attacker would type them (already percent-encoded where they are). */
const HOSTILE_SEGMENTS = [
  '..',
  '.',
  '...',
  '%2e%2e',
  '%2E%2E',
  '%2F',
  '%2f%2f',
  '..%2F..%2Fetc',
  '..%2F..%2Fetc%2Fpasswd',
  '%2e%2e%2f%2e%2e%2fetc',
  '..%5C..%5Cetc',
  'demo%2F..%2Fvictim',
  '%252e%252e%252f',
  '%C0%AE%C0%AE',
  '%ZZ',
  '%',
  '%00',
  'demo%00',
  '%0a',
  '%0d%0aSet-Cookie:%20x',
  '%1b%5B31m',
  '%7F',
  '%20',
  '__proto__',
  'constructor',
  'prototype',
  'hasOwnProperty',
  'x'.repeat(10_000),
  `a${'%2e'.repeat(2_000)}`,
];

const allowlist = (tools: readonly string[]): string => JSON.stringify({ allowedTools: tools });

describe('traversal, control characters and prototype names in every URL parameter', () => {
  it('answers 4xx with a stable code for every :project, whatever the route', async () => {
    for (const project of HOSTILE_SEGMENTS) {
      const base = `/projects/${project}`;
      const cases: [Method, string, string | undefined][] = [
        ['GET', `${base}/mcp-tool-permissions`, undefined],
        ['PUT', `${base}/mcp-tool-permissions`, policyText(['idea_memory_write'])],
        ['PUT', `${base}/mcp-tool-permissions/default`, allowlist(['idea_memory_write'])],
        ['DELETE', `${base}/mcp-tool-permissions/default`, undefined],
        ['PUT', `${base}/mcp-tool-permissions/agents/Main`, allowlist(['idea_memory_write'])],
        ['DELETE', `${base}/mcp-tool-permissions/agents/Main`, undefined],
        ['GET', `${base}/requesters/Main/effective`, undefined],
        ['GET', `${base}/decisions`, undefined],
        ['GET', `${base}/ephemeral-policies`, undefined],
        ['PUT', `${base}/ephemeral-policies/ticket-assistant%3A${project}%3A1`, allowlist(['idea_memory_write'])],
        ['DELETE', `${base}/ephemeral-policies/ticket-assistant%3A${project}%3A1`, undefined],
      ];
      for (const [method, url, body] of cases) {
        const response = await send(method, url, body);
        expectSafe(response, `${method} ${url.slice(0, 120)}`);
        expect(response.statusCode, `${method} ${url.slice(0, 120)}`).toBeGreaterThanOrEqual(400);
      }
    }
  });

  it('never 5xx for :agentId and :requester; ids that are not valid are refused; grants stay data', async () => {
    for (const id of HOSTILE_SEGMENTS) {
      // Only read tools are granted here, so a stored override can never widen what anyone may do.
      for (const [method, url, body] of [
        ['PUT', `/projects/demo/mcp-tool-permissions/agents/${id}`, allowlist(['idea_memory_read'])],
        ['DELETE', `/projects/demo/mcp-tool-permissions/agents/${id}`, undefined],
        ['GET', `/projects/demo/requesters/${id}/effective`, undefined],
      ] as [Method, string, string | undefined][]) {
        const response = await send(method, url, body);
        expectSafe(response, `${method} ${url.slice(0, 120)}`);
        if (response.statusCode === 200 && url.endsWith('/effective')) {
          const { allowedTools } = response.json<{ allowedTools: string[] }>();
          expect(
            allowedTools.filter((tool) => WRITE_TOOLS.includes(tool)),
            id.slice(0, 50),
          ).toEqual([]);
        }
      }
      // Ephemeral policies only exist for ticket-assistant:demo:<issue>: every hostile id is refused.
      const ephemeral = await send('PUT', `/projects/demo/ephemeral-policies/${id}`, allowlist(['idea_memory_write']));
      expectSafe(ephemeral, `PUT ephemeral ${id.slice(0, 50)}`);
      expect(ephemeral.statusCode, id.slice(0, 50)).toBeGreaterThanOrEqual(400);
      expectSafe(await send('DELETE', `/projects/demo/ephemeral-policies/${id}`), `DELETE ephemeral ${id.slice(0, 50)}`);
    }
    for (const id of ['%2F', '..%2F..%2Fetc', '%00', '%0a', '%1b%5B31m', '%7F', '%20', 'a%3Ab', 'a%5Cb']) {
      const response = await send('PUT', `/projects/demo/mcp-tool-permissions/agents/${id}`, allowlist(['idea_memory_read']));
      expect(response.statusCode, id).toBe(400);
      expect(response.json(), id).toMatchObject({ error: { code: 'invalid_agent_id' } });
    }
    const listed = await send('GET', '/projects/demo/ephemeral-policies');
    expect(listed.json()).toEqual({ policies: [] });
  });
});

describe('malformed bodies on every route that takes one', () => {
  const validDecide = { project: 'demo', requester: 'Main', tool: 'idea_memory_read' };
  const deepArrays = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const deepObjects = (depth: number): string => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  const routes: { method: Method; url: string; valid: Record<string, unknown> }[] = [
    { method: 'POST', url: '/decide', valid: validDecide },
    { method: 'POST', url: '/decide/batch', valid: { queries: [validDecide] } },
    { method: 'PUT', url: '/projects/demo/mcp-tool-permissions', valid: { version: 1 } },
    { method: 'PUT', url: '/projects/demo/mcp-tool-permissions/default', valid: { allowedTools: [...READ_TOOLS] } },
    { method: 'PUT', url: '/projects/demo/mcp-tool-permissions/agents/Main', valid: { allowedTools: [...READ_TOOLS] } },
    { method: 'PUT', url: '/projects/demo/ephemeral-policies/ticket-assistant%3Ademo%3A1', valid: { allowedTools: ['idea_memory_read'] } },
  ];
  /** Bodies no route accepts: each must be refused with a 4xx. */
  const refused = (valid: Record<string, unknown>): string[] => {
    const key = Object.keys(valid)[0] ?? 'x';
    return [
      '',
      'not json',
      '{"a":',
      '{"a":1}}',
      'null',
      '[]',
      '"string"',
      '42',
      'true',
      '{}',
      '\u0000',
      '\ufeff{}',
      JSON.stringify({ ...valid, extra: 1 }),
      JSON.stringify({ ...valid, [key]: 12 }),
      JSON.stringify({ ...valid, [key]: null }),
      JSON.stringify({ ...valid, [key]: { nested: true } }),
      JSON.stringify({ ...valid, [key]: 'x'.repeat(10_000) }),
      `{"__proto__": {"allow": true, "allowedTools": ["idea_memory_write"]}, ${JSON.stringify(valid).slice(1)}`,
      `{"constructor": {"prototype": {"allow": true}}, ${JSON.stringify(valid).slice(1)}`,
      `{"x": ${deepArrays(10_000)}, ${JSON.stringify(valid).slice(1)}`,
      `{"x": ${deepObjects(10_000)}, ${JSON.stringify(valid).slice(1)}`,
      deepArrays(100_000),
    ];
  };

  it('answers 4xx with a stable code, never 5xx, and writes nothing', async () => {
    const policyBefore = (await snapshotTree(made.root)).get('demo/.ideai/mcp-tool-permissions.json');
    for (const { method, url, valid } of routes) {
      for (const payload of refused(valid)) {
        const response = await send(method, url, payload);
        expectSafe(response, `${method} ${url} ${payload.slice(0, 60)}`);
        expect(response.statusCode, `${method} ${url} ${payload.slice(0, 60)}`).toBeGreaterThanOrEqual(400);
      }
      const text = JSON.stringify(valid);
      // text/plain has Fastify's built-in string parser (then the schema refuses a string: 400).
      for (const type of [
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/jsonx',
        'application/xml',
      ]) {
        const response = await send(method, url, text, { 'content-type': type });
        expectSafe(response, `${method} ${url} as ${type}`);
        expect([400, 415], `${method} ${url} as ${type}`).toContain(response.statusCode);
      }
      const huge = await send(method, url, JSON.stringify({ ...valid, pad: 'x'.repeat(1024 * 1024 + 1) }));
      expect(huge.statusCode, `${method} ${url} huge`).toBe(413);
      expect(huge.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    }
    expect((await snapshotTree(made.root)).get('demo/.ideai/mcp-tool-permissions.json')).toBe(policyBefore);
  });

  it('decides normally (or refuses) on 10,000 and 100,000 nested arrays in arguments, and never grants', async () => {
    for (const depth of [10_000, 100_000]) {
      for (const tool of ['idea_memory_write', 'idea_ticket_update', 'idea_memory_read']) {
        const nested = deepArrays(depth);
        for (const args of [`{"issueRef": ${nested}}`, `{"deep": ${nested}}`, `{"deep": ${deepObjects(depth)}}`]) {
          const payload = `{"project":"demo","requester":"Main","tool":"${tool}","arguments":${args}}`;
          const response = await send('POST', '/decide', payload);
          expectSafe(response, `depth ${depth} ${tool}`);
          if (response.statusCode === 200) expect(response.json<Decision>().allow, tool).toBe(READ_TOOLS.includes(tool));
        }
      }
    }
  });

  it('refuses hostile policy documents and allowlists', async () => {
    const documents = [
      { version: 2 },
      { version: '1' },
      { version: 1, agents: {} },
      { version: 1, agents: [{ agentId: '../../etc', policy: { allowedTools: [] } }] },
      { version: 1, agents: [{ agentId: 'a\u0000b', policy: { allowedTools: [] } }] },
      { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_memory_write'] }, extra: true }] },
      { version: 1, projectDefault: { allowedTools: ['idea_memory_write', 'idea_memory_write'] } },
      { version: 1, projectDefault: { allowedTools: ['../../etc/passwd'] } },
      { version: 1, agents: Array.from({ length: 10_001 }, (_, i) => ({ agentId: `A${i}`, policy: { allowedTools: [] } })) },
    ];
    for (const doc of documents) {
      const response = await send('PUT', '/projects/demo/mcp-tool-permissions', JSON.stringify(doc));
      expectSafe(response, JSON.stringify(doc).slice(0, 80));
      expect(response.statusCode, JSON.stringify(doc).slice(0, 80)).toBe(400);
    }
    for (const tools of [
      [''],
      ['idea_memory_write', 'idea_memory_write'],
      ['__proto__'],
      ['constructor'],
      Array(257).fill('idea_memory_read'),
    ]) {
      const response = await send('PUT', '/projects/demo/mcp-tool-permissions/default', allowlist(tools));
      expectSafe(response, JSON.stringify(tools).slice(0, 80));
      expect(response.statusCode).toBe(400);
    }
    const ttl = (ttlSeconds: unknown): string => JSON.stringify({ allowedTools: ['idea_ticket_update'], ttlSeconds });
    for (const body of [
      ttl(0),
      ttl(-1),
      ttl(86_401),
      ttl(1.5),
      ttl('60'),
      ttl(1e308),
      '{"allowedTools":[],"boundIssue":"../x"}',
      '{"allowedTools":[],"boundIssue":""}',
    ]) {
      const response = await send('PUT', '/projects/demo/ephemeral-policies/ticket-assistant%3Ademo%3A1', body);
      expectSafe(response, body);
      expect(response.statusCode, body).toBe(400);
    }
  });
});

describe('odd headers and query strings', () => {
  it('answers If-Match, Authorization and query-string oddities with 2xx/4xx, never 5xx', async () => {
    for (const ifMatch of ['*', '"', '""', 'W/', 'W/"x"', `"${'f'.repeat(10_000)}"`, '"a", "b"', '\t']) {
      const response = await send('DELETE', '/projects/demo/mcp-tool-permissions/agents/Nobody', undefined, { 'if-match': ifMatch });
      expectSafe(response, `If-Match ${ifMatch.slice(0, 20)}`);
      expect([200, 412]).toContain(response.statusCode);
    }
    for (const authorization of [
      'Bearer',
      'Bearer  ',
      `Bearer ${'x'.repeat(10_000)}`,
      `Bearer ${ADMIN} ${ADMIN}`,
      `bearer\t${ADMIN}x`,
      'Basic Og==',
      'Bearer é',
    ]) {
      const response = await app.inject({
        method: 'DELETE',
        url: '/projects/demo/mcp-tool-permissions/agents/Nobody',
        headers: { authorization },
      });
      expectSafe(response, authorization.slice(0, 20));
      expect(response.statusCode, authorization.slice(0, 20)).toBe(401);
      expect(response.body).not.toContain(ADMIN);
    }
    for (const query of [
      'limit=-1',
      'limit=0',
      'limit=1001',
      'limit=1e9',
      'limit=abc',
      'limit=1&limit=2',
      'limit[]=1',
      'allow=maybe',
      'allow=',
      '__proto__=1',
      'constructor[prototype][x]=1',
      'extra=1',
      `limit=${'9'.repeat(5_000)}`,
    ]) {
      const response = await send('GET', `/projects/demo/decisions?${query}`);
      expectSafe(response, query);
      if (response.statusCode === 200) expect(response.json<{ decisions: unknown[] }>().decisions.length).toBeLessThanOrEqual(1000);
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });
});

describe('bodies over a real socket', () => {
  it('cuts a chunked body at the route limit (413), and refuses an unauthenticated chunked write before reading it', async () => {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const chunked = (size: number): Readable =>
      Readable.from(
        (function* () {
          yield Buffer.from('{"project":"demo","requester":"Main","tool":"idea_memory_read","arguments":{"pad":"');
          for (let sent = 0; sent < size; sent += 64 * 1024) yield Buffer.alloc(Math.min(64 * 1024, size - sent), 0x61);
          yield Buffer.from('"}}');
        })(),
      );
    const big = await request(`${base}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: chunked(3 * 1024 * 1024),
    });
    expect(big.statusCode).toBe(413);
    expect(await big.body.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    const write = await request(`${base}/projects/demo/mcp-tool-permissions/default`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: chunked(3 * 1024 * 1024),
    });
    expect(write.statusCode).toBe(401);
    await write.body.dump();
    const ok = await request(`${base}/decide`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: chunked(1024) });
    expect(ok.statusCode).toBe(200);
    expect(await ok.body.json()).toMatchObject({ allow: true });
  });
});

describe('after all the hostile input above', () => {
  it('touched no file outside projects/demo/.ideai/, and grants nothing beyond the fixed policy', async () => {
    const after = await snapshotTree(made.outer);
    for (const file of changedPaths(before, after)) expect(file.startsWith('projects/demo/.ideai/'), file).toBe(true);
    expect(after.get('sentinel.txt')).toBe(before.get('sentinel.txt'));
    expect(after.get('etc/passwd')).toBe(before.get('etc/passwd'));
    expect([...after.keys()].filter((file) => file.startsWith('projects/victim/'))).toEqual(['projects/victim/.ideai']);
    const requesters = HOSTILE_SEGMENTS.map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    }).filter((requester) => requester.length <= 512);
    const queries = requesters.flatMap((requester) =>
      ['demo', 'victim'].flatMap((project) => WRITE_TOOLS.map((tool) => ({ project, requester, tool }))),
    );
    for (let start = 0; start < queries.length; start += 100) {
      const response = await send('POST', '/decide/batch', JSON.stringify({ queries: queries.slice(start, start + 100) }));
      expect(response.statusCode).toBe(200);
      const allowed = response.json<{ decisions: Decision[] }>().decisions.filter((decision) => decision.allow);
      expect(allowed.map((d) => `${d.project} ${d.requester.id} ${d.tool.name}`)).toEqual([]);
    }
    // The document is still valid, and the fixed grant still works (the service did not fail shut for good).
    const view = await send('GET', '/projects/demo/mcp-tool-permissions');
    expect(view.json()).toMatchObject({ status: 'ok' });
    const granted = await send('POST', '/decide', JSON.stringify({ project: 'demo', requester: 'Granted', tool: 'idea_memory_write' }));
    expect(granted.json()).toMatchObject({ allow: true, source: 'agent-override' });
  });
});
