/** docs/api.md#writes: PUT/DELETE default and agent, whole-document PUT, If-Match, validation, file format. */
import { chmod, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PermissionsView } from '../../schemas/index.js';
import { agentUrl, buildTestApp, call, decide, defaultUrl, errorCode, permissionsUrl, type TestApp } from '../support/app.js';
import { policyDoc, readText } from '../support/files.js';
import { READ_TOOLS, WRITE_TOOLS } from '../support/tools.js';

type App = TestApp['app'];

async function view(app: App, project = 'demo'): Promise<PermissionsView> {
  return (await call(app, 'GET', permissionsUrl(project))).json<PermissionsView>();
}

/** Sends one write, expects 200 and the view body with a matching ETag; returns the view. */
async function write(app: App, method: 'PUT' | 'DELETE', url: string, body?: unknown, headers: Record<string, string> = {}) {
  const response = await call(app, method, url, { auth: true, headers, ...(body === undefined ? {} : { body }) });
  expect(response.statusCode, response.body).toBe(200);
  const answered = response.json<PermissionsView>();
  expect(response.headers.etag).toBe(`"${answered.revision}"`);
  // The answer is the same body as the GET that follows.
  expect(await view(app)).toEqual(answered);
  return answered;
}

describe('PUT/DELETE project default', () => {
  it('writes the default (catalog order, pretty-printed), answers the new view and is visible to the next decision', async (t) => {
    const server = await buildTestApp(t, { demo: { agents: [{ id: 'Main' }] } });
    const before = await view(server.app);
    const tools = ['idea_memory_write', 'idea_ticket_list', 'idea_ask_agent', 'idea_memory_read'];
    const answered = await write(server.app, 'PUT', defaultUrl('demo'), { allowedTools: tools });
    expect(answered.revision).not.toBe(before.revision);
    expect(answered.revision).not.toBe('builtin');
    expect(answered).toMatchObject({
      status: 'ok',
      fileExists: true,
      projectDefault: { mode: 'custom', allowedTools: ['idea_memory_read', 'idea_ticket_list', 'idea_ask_agent', 'idea_memory_write'] },
    });
    expect(answered.agents).toEqual([
      expect.objectContaining({
        agentId: 'Main',
        mode: 'inherit',
        allowedTools: ['idea_memory_read', 'idea_ticket_list', 'idea_ask_agent', 'idea_memory_write'],
      }),
    ]);

    const text = await readText(server.policyPath('demo'));
    expect(text).toBeDefined();
    const parsed = JSON.parse(text ?? '') as Record<string, unknown>;
    expect(parsed.version).toBe(1);
    expect(parsed.projectDefault).toEqual({
      allowedTools: ['idea_memory_read', 'idea_ticket_list', 'idea_ask_agent', 'idea_memory_write'],
    });
    // Pretty-printed: one tool per line, indented.
    expect(text).toMatch(/\n\s+"idea_ask_agent",?\n/);
    expect(text?.trim()).not.toBe(JSON.stringify(parsed));

    const decision = await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' });
    expect(decision).toMatchObject({ allow: true, source: 'project-default', revision: answered.revision });
    expect(await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_workstate_read' })).toMatchObject({
      allow: false,
      source: 'project-default',
    });
  });

  it('creates .ideai/ when the project has none', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    await write(server.app, 'PUT', defaultUrl('demo'), { allowedTools: ['idea_memory_read'] });
    expect(JSON.parse((await readText(server.policyPath('demo'))) ?? 'null')).toMatchObject({
      version: 1,
      projectDefault: { allowedTools: ['idea_memory_read'] },
    });
  });

  it('DELETE default goes back to builtin read-only and keeps the overrides', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS, 'idea_memory_write'], { QA: ['idea_ask_agent'] }) } });
    const answered = await write(server.app, 'DELETE', defaultUrl('demo'));
    expect(answered.projectDefault).toEqual({ mode: 'builtin', allowedTools: [...READ_TOOLS], unknownTools: [], conditions: {} });
    const parsed = JSON.parse((await readText(server.policyPath('demo'))) ?? 'null') as Record<string, unknown>;
    expect(parsed.projectDefault).toBeUndefined();
    expect(parsed.agents).toEqual([{ agentId: 'QA', policy: { allowedTools: ['idea_ask_agent'] } }]);
    expect(await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' })).toMatchObject({
      allow: false,
      source: 'builtin-read-only',
    });
    expect(await decide(server.app, { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' })).toMatchObject({ allow: true });
  });

  it('makes a grant and a withdrawal visible to the very next decision, every time', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    const query = { project: 'demo', requester: 'DevFrontend', tool: 'idea_ticket_update_carnet' };
    for (let i = 0; i < 10; i += 1) {
      await write(app, 'PUT', agentUrl('demo', 'DevFrontend'), { allowedTools: [...READ_TOOLS, 'idea_ticket_update_carnet'] });
      expect((await decide(app, query)).allow, `grant ${i}`).toBe(true);
      await write(app, 'PUT', agentUrl('demo', 'DevFrontend'), { allowedTools: [...READ_TOOLS] });
      expect((await decide(app, query)).allow, `withdraw ${i}`).toBe(false);
    }
  });
});

describe('PUT/DELETE agent override', () => {
  it('writes overrides sorted by id without touching the default, and DELETE is idempotent', async (t) => {
    const server = await buildTestApp(t, {
      demo: { policy: policyDoc(['idea_memory_read', 'idea_memory_write']), agents: [{ id: 'Main' }] },
    });
    await write(server.app, 'PUT', agentUrl('demo', 'Zed'), { allowedTools: ['idea_stop_agent', 'idea_list_agents'] });
    await write(server.app, 'PUT', agentUrl('demo', 'Architect'), { allowedTools: [] });
    const answered = await write(server.app, 'PUT', agentUrl('demo', 'Main'), { allowedTools: ['idea_create_skill'] });
    expect(answered.agents.map((a) => [a.agentId, a.mode, a.declared])).toEqual([
      ['Architect', 'override', false],
      ['Main', 'override', true],
      ['Zed', 'override', false],
    ]);
    const parsed = JSON.parse((await readText(server.policyPath('demo'))) ?? 'null') as Record<string, unknown>;
    expect(parsed).toEqual({
      ...(parsed.$schema === undefined ? {} : { $schema: parsed.$schema }),
      version: 1,
      projectDefault: { allowedTools: ['idea_memory_read', 'idea_memory_write'] },
      agents: [
        { agentId: 'Architect', policy: { allowedTools: [] } },
        { agentId: 'Main', policy: { allowedTools: ['idea_create_skill'] } },
        { agentId: 'Zed', policy: { allowedTools: ['idea_list_agents', 'idea_stop_agent'] } },
      ],
    });
    expect(await decide(server.app, { project: 'demo', requester: 'Architect', tool: 'idea_memory_read' })).toMatchObject({
      allow: false,
      source: 'agent-override',
    });

    const first = await write(server.app, 'DELETE', agentUrl('demo', 'Main'));
    expect(first.agents.find((a) => a.agentId === 'Main')).toMatchObject({ mode: 'inherit', declared: true });
    const second = await write(server.app, 'DELETE', agentUrl('demo', 'Main'));
    expect(second.agents.find((a) => a.agentId === 'Main')).toMatchObject({ mode: 'inherit' });
    expect(await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' })).toMatchObject({
      allow: true,
      source: 'project-default',
    });
    // Deleting an override of an agent that never had one: still 200.
    await write(server.app, 'DELETE', agentUrl('demo', 'Nobody'));
  });

  it('answers a DELETE sent with a JSON content type and an empty body like one without (some HTTP helpers send it)', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    await write(server.app, 'PUT', agentUrl('demo', 'QA'), { allowedTools: ['idea_memory_write'] });
    await write(server.app, 'PUT', defaultUrl('demo'), { allowedTools: ['idea_memory_read'] });
    const json = { 'content-type': 'application/json' };
    for (const url of [agentUrl('demo', 'QA'), defaultUrl('demo'), '/projects/demo/ephemeral-policies/ticket-assistant%3Ademo%3A82']) {
      for (const headers of [json, { ...json, 'content-length': '0' }]) {
        const response = await call(server.app, 'DELETE', url, { auth: true, headers });
        expect(response.statusCode, `${url} ${response.body}`).toBe(200);
      }
    }
    expect(await decide(server.app, { project: 'demo', requester: 'QA', tool: 'idea_memory_write' })).toMatchObject({ allow: false });
    // A body that is there is still parsed: bad JSON stays a 400.
    const bad = await call(server.app, 'DELETE', agentUrl('demo', 'QA'), { auth: true, body: '{' });
    expect(bad.statusCode).toBe(400);
  });

  it('refuses bad agent ids with 400 invalid_agent_id and writes nothing', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const badIds = ['a:b', ' lead', 'a/b', 'a\\b', 'tab\there', 'nul\u0000', 'del\u007f', 'x'.repeat(129), ''];
    for (const agentId of badIds) {
      const url = agentId === '' ? `${permissionsUrl('demo')}/agents/%20` : agentUrl('demo', agentId);
      const response = await call(server.app, 'PUT', url, { body: { allowedTools: ['idea_memory_read'] }, auth: true });
      expect(response.statusCode, JSON.stringify(agentId)).toBe(400);
      expect(errorCode(response), JSON.stringify(agentId)).toBe('invalid_agent_id');
      const removal = await call(server.app, 'DELETE', url, { auth: true });
      expect(removal.statusCode, JSON.stringify(agentId)).toBe(400);
      expect(errorCode(removal)).toBe('invalid_agent_id');
    }
    expect(await readText(server.policyPath('demo'))).toBeUndefined();
    // Valid ids (spaces inside, dots, non-ASCII, the longest length) are accepted and decided on.
    for (const agentId of ['y'.repeat(128), 'Dev Frontend', 'Développeur', 'a.b-c_d', '日本語', 'x']) {
      await write(server.app, 'PUT', agentUrl('demo', agentId), { allowedTools: ['idea_memory_write'] });
      expect(await decide(server.app, { project: 'demo', requester: agentId, tool: 'idea_memory_write' }), agentId).toMatchObject({
        allow: true,
        source: 'agent-override',
        requester: { id: agentId, kind: 'agent' },
      });
    }
  });
});

describe('allowlist validation', () => {
  it('refuses unknown names, duplicates and empty strings with 400 invalid_tools and exact details; nothing written', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS]) } });
    const original = await readText(server.policyPath('demo'));
    const body = { allowedTools: ['idea_memory_read', 'idea_teleport', 'idea_memory_read', '', 'idea_ask_agent', '', 'IDEA_ASK_AGENT'] };
    for (const url of [defaultUrl('demo'), agentUrl('demo', 'QA')]) {
      const response = await call(server.app, 'PUT', url, { body, auth: true });
      expect(response.statusCode, url).toBe(400);
      const error = response.json<{ error: { code: string; details: { unknown: string[]; duplicates: string[]; empty: number } } }>().error;
      expect(error.code).toBe('invalid_tools');
      expect([...error.details.unknown].sort()).toEqual(['IDEA_ASK_AGENT', 'idea_teleport']);
      expect(error.details.duplicates).toEqual(['idea_memory_read']);
      expect(error.details.empty).toBe(2);
    }
    expect(await readText(server.policyPath('demo'))).toBe(original);
    expect(await decide(server.app, { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' })).toMatchObject({ allow: false });
  });

  it('refuses malformed bodies with 400 invalid_request', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    for (const body of [{}, { allowedTools: 'idea_memory_read' }, { allowedTools: [1] }, { allowedTools: [], extra: true }, [], '{']) {
      const response = await call(server.app, 'PUT', defaultUrl('demo'), { body, auth: true });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(errorCode(response)).toBe('invalid_request');
    }
    expect(await readText(server.policyPath('demo'))).toBeUndefined();
  });
});

describe('whole-document PUT and the invalid-file repair path', () => {
  it('answers 409 policy_invalid to partial writes on an invalid file, and repairs it with a whole-document PUT', async (t) => {
    const broken = '{ "version": 1, "projectDefault": ';
    const server = await buildTestApp(t, { demo: { policy: broken } });
    const partial: ['PUT' | 'DELETE', string, unknown][] = [
      ['PUT', defaultUrl('demo'), { allowedTools: [...READ_TOOLS] }],
      ['DELETE', defaultUrl('demo'), undefined],
      ['PUT', agentUrl('demo', 'QA'), { allowedTools: [...READ_TOOLS] }],
      ['DELETE', agentUrl('demo', 'QA'), undefined],
    ];
    for (const [method, url, body] of partial) {
      const response = await call(server.app, method, url, { auth: true, ...(body === undefined ? {} : { body }) });
      expect(response.statusCode, `${method} ${url}`).toBe(409);
      expect(errorCode(response)).toBe('policy_invalid');
    }
    expect(await readText(server.policyPath('demo'))).toBe(broken);

    const doc = {
      version: 1,
      projectDefault: { allowedTools: ['idea_memory_write', 'idea_memory_read'] },
      agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_ask_agent'] } }],
    };
    const repaired = await write(server.app, 'PUT', permissionsUrl('demo'), doc);
    expect(repaired).toMatchObject({
      status: 'ok',
      error: null,
      projectDefault: { mode: 'custom', allowedTools: ['idea_memory_read', 'idea_memory_write'] },
    });
    expect(JSON.parse((await readText(server.policyPath('demo'))) ?? 'null')).toMatchObject({
      version: 1,
      projectDefault: { allowedTools: ['idea_memory_read', 'idea_memory_write'] },
      agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_ask_agent'] } }],
    });
    expect(await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' })).toMatchObject({ allow: true });
    expect(await decide(server.app, { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' })).toMatchObject({
      allow: true,
      source: 'agent-override',
    });
  });

  it('replaces the whole document (agents dropped, agents sorted) and refuses invalid documents with 400', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS], { Old: ['idea_ask_agent'] }) } });
    await write(server.app, 'PUT', permissionsUrl('demo'), {
      version: 1,
      agents: [
        { agentId: 'b', policy: { allowedTools: [] } },
        { agentId: 'a', policy: { allowedTools: ['idea_workstate_set', 'idea_ticket_list'] } },
      ],
    });
    const parsed = JSON.parse((await readText(server.policyPath('demo'))) ?? 'null') as { agents: unknown; projectDefault?: unknown };
    expect(parsed.projectDefault).toBeUndefined();
    expect(parsed.agents).toEqual([
      { agentId: 'a', policy: { allowedTools: ['idea_ticket_list', 'idea_workstate_set'] } },
      { agentId: 'b', policy: { allowedTools: [] } },
    ]);
    expect(await decide(server.app, { project: 'demo', requester: 'Old', tool: 'idea_ask_agent' })).toMatchObject({ allow: false });

    const before = await readText(server.policyPath('demo'));
    for (const doc of [
      { version: 2 },
      { version: 1, extra: true },
      { version: 1, projectDefault: { allowedTools: ['idea_teleport'] } },
      { version: 1, agents: [{ agentId: 'a:b', policy: { allowedTools: [] } }] },
      { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_memory_read', 'idea_memory_read'] } }] },
      { projectDefault: { allowedTools: [] } },
    ]) {
      const response = await call(server.app, 'PUT', permissionsUrl('demo'), { body: doc, auth: true });
      expect(response.statusCode, JSON.stringify(doc)).toBe(400);
      expect(['invalid_request', 'invalid_tools', 'invalid_agent_id']).toContain(errorCode(response));
    }
    expect(await readText(server.policyPath('demo'))).toBe(before);
    // docs/api.md#http-api: a bad agent id is `400 invalid_agent_id`, in a whole document too.
    for (const agentId of ['a:b', ' lead', 'x'.repeat(129), '', 7]) {
      const doc = {
        version: 1,
        agents: [
          { agentId: 'ok', policy: { allowedTools: [] } },
          { agentId, policy: { allowedTools: [] } },
        ],
      };
      const response = await call(server.app, 'PUT', permissionsUrl('demo'), { body: doc, auth: true });
      expect(response.statusCode, JSON.stringify(agentId)).toBe(400);
      expect(errorCode(response), JSON.stringify(agentId)).toBe('invalid_agent_id');
    }
    expect(await readText(server.policyPath('demo'))).toBe(before);
  });

  it('counts the 128 characters of an agent id the same way in the route and in the file it writes (an emoji counts 2)', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    // 64 emoji are 128 UTF-16 code units: accepted, and the file written stays valid.
    const longest = '😀'.repeat(64);
    await write(server.app, 'PUT', agentUrl('demo', longest), { allowedTools: ['idea_memory_write'] });
    expect(await decide(server.app, { project: 'demo', requester: longest, tool: 'idea_memory_write' })).toMatchObject({
      allow: true,
      source: 'agent-override',
    });
    // 65 are 130: refused before anything is written, by both routes (before the fix the agent route
    // wrote it and the whole project's policy became invalid: every call denied, every write 409).
    const before = await readText(server.policyPath('demo'));
    const tooLong = '😀'.repeat(65);
    const response = await call(server.app, 'PUT', agentUrl('demo', tooLong), { body: { allowedTools: [] }, auth: true });
    expect(response.statusCode).toBe(400);
    expect(errorCode(response)).toBe('invalid_agent_id');
    const whole = await call(server.app, 'PUT', permissionsUrl('demo'), {
      body: { version: 1, agents: [{ agentId: tooLong, policy: { allowedTools: [] } }] },
      auth: true,
    });
    expect(errorCode(whole)).toBe('invalid_agent_id');
    expect(await readText(server.policyPath('demo'))).toBe(before);
    expect(await decide(server.app, { project: 'demo', requester: 'QA', tool: 'idea_ticket_read' })).toMatchObject({ allow: true });
  });
});

describe('durability and revision consistency', () => {
  it('gives the same revision and view after a restart as the write answered (revision = hash of the bytes on disk)', async (t) => {
    const server = await buildTestApp(t, { demo: { agents: [{ id: 'Main' }] } });
    await write(server.app, 'PUT', defaultUrl('demo'), { allowedTools: ['idea_memory_write', 'idea_memory_read'] });
    const answered = await write(server.app, 'PUT', agentUrl('demo', 'QA'), { allowedTools: ['idea_ask_agent'] });
    const restarted = (await buildTestApp(t, {}, { projects: server })).app;
    const reloaded = (await call(restarted, 'GET', permissionsUrl('demo'))).json<PermissionsView>();
    expect(reloaded).toEqual(answered);
    // A write with the revision the write answered is accepted by the restarted service.
    const next = await call(restarted, 'PUT', defaultUrl('demo'), {
      body: { allowedTools: [] },
      auth: true,
      headers: { 'if-match': `"${answered.revision}"` },
    });
    expect(next.statusCode, next.body).toBe(200);
  });
});

describe('concurrent writes are serialized', () => {
  it('loses no update when 20 agents are written at once', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS]) } });
    const agents = Array.from({ length: 20 }, (_, i) => `Agent${String(i).padStart(2, '0')}`);
    const responses = await Promise.all(
      agents.map((agent, i) =>
        call(server.app, 'PUT', agentUrl('demo', agent), { body: { allowedTools: [WRITE_TOOLS[i % 16] ?? ''] }, auth: true }),
      ),
    );
    for (const response of responses) expect(response.statusCode, response.body).toBe(200);
    const parsed = JSON.parse((await readText(server.policyPath('demo'))) ?? 'null') as {
      agents: { agentId: string; policy: { allowedTools: string[] } }[];
    };
    expect(parsed.agents.map((a) => a.agentId)).toEqual(agents);
    agents.forEach((agent, i) => {
      expect(parsed.agents[i]?.policy.allowedTools, agent).toEqual([WRITE_TOOLS[i % 16]]);
    });
    const decisions = await Promise.all(
      agents.map((agent, i) => decide(server.app, { project: 'demo', requester: agent, tool: WRITE_TOOLS[i % 16] ?? '' })),
    );
    for (const decision of decisions) expect(decision).toMatchObject({ allow: true, source: 'agent-override' });
  });

  it('lets exactly one of several writes with the same If-Match win', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS]) } });
    const { revision } = await view(server.app);
    const responses = await Promise.all(
      WRITE_TOOLS.slice(0, 8).map((tool) =>
        call(server.app, 'PUT', defaultUrl('demo'), {
          body: { allowedTools: [tool] },
          auth: true,
          headers: { 'if-match': `"${revision}"` },
        }),
      ),
    );
    const statuses = responses.map((r) => r.statusCode).sort();
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412]);
    const winner = responses.findIndex((r) => r.statusCode === 200);
    const parsed = JSON.parse((await readText(server.policyPath('demo'))) ?? 'null') as { projectDefault: { allowedTools: string[] } };
    expect(parsed.projectDefault.allowedTools).toEqual([WRITE_TOOLS[winner]]);
  });
});

describe('If-Match', () => {
  it('refuses a stale revision with 412 revision_mismatch on every write route and writes nothing', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS], { QA: [] }) } });
    const current = await view(server.app);
    const stale = { 'if-match': '"0000000000000000"' };
    const writes: ['PUT' | 'DELETE', string, unknown][] = [
      ['PUT', defaultUrl('demo'), { allowedTools: [...WRITE_TOOLS] }],
      ['DELETE', defaultUrl('demo'), undefined],
      ['PUT', agentUrl('demo', 'QA'), { allowedTools: [...WRITE_TOOLS] }],
      ['DELETE', agentUrl('demo', 'QA'), undefined],
      ['PUT', permissionsUrl('demo'), { version: 1, projectDefault: { allowedTools: [...WRITE_TOOLS] } }],
    ];
    const original = await readText(server.policyPath('demo'));
    for (const [method, url, body] of writes) {
      const response = await call(server.app, method, url, { auth: true, headers: stale, ...(body === undefined ? {} : { body }) });
      expect(response.statusCode, `${method} ${url}`).toBe(412);
      expect(errorCode(response)).toBe('revision_mismatch');
    }
    expect(await readText(server.policyPath('demo'))).toBe(original);
    expect((await view(server.app)).revision).toBe(current.revision);
    expect(await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' })).toMatchObject({ allow: false });

    // The current revision is accepted, and the next write needs the new one.
    const written = await write(
      server.app,
      'PUT',
      defaultUrl('demo'),
      { allowedTools: ['idea_memory_write'] },
      { 'if-match': `"${current.revision}"` },
    );
    const again = await call(server.app, 'PUT', defaultUrl('demo'), {
      body: { allowedTools: [] },
      auth: true,
      headers: { 'if-match': `"${current.revision}"` },
    });
    expect(again.statusCode).toBe(412);
    await write(server.app, 'PUT', defaultUrl('demo'), { allowedTools: [] }, { 'if-match': `"${written.revision}"` });
  });

  it('accepts If-Match "builtin" when there is no file, and refuses it once a file exists', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    await write(server.app, 'PUT', agentUrl('demo', 'QA'), { allowedTools: [] }, { 'if-match': '"builtin"' });
    const response = await call(server.app, 'PUT', agentUrl('demo', 'QA'), {
      body: { allowedTools: [] },
      auth: true,
      headers: { 'if-match': '"builtin"' },
    });
    expect(response.statusCode).toBe(412);
    expect(errorCode(response)).toBe('revision_mismatch');
  });
});

describe('files: mode, unknown project, write failures', () => {
  it('keeps the file mode (0640 stays 0640)', async (t) => {
    const server = await buildTestApp(
      t,
      { demo: { policy: policyDoc([...READ_TOOLS]) } },
      {
        prepare: async (root) => chmod(path.join(root, 'demo', '.ideai', 'mcp-tool-permissions.json'), 0o640),
      },
    );
    await write(server.app, 'PUT', agentUrl('demo', 'QA'), { allowedTools: ['idea_memory_write'] });
    expect((await stat(server.policyPath('demo'))).mode & 0o777).toBe(0o640);
    await write(server.app, 'PUT', defaultUrl('demo'), { allowedTools: [] });
    expect((await stat(server.policyPath('demo'))).mode & 0o777).toBe(0o640);
  });

  it('answers 404 unknown_project on every write route', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const writes: ['PUT' | 'DELETE', string, unknown][] = [
      ['PUT', defaultUrl('nope'), { allowedTools: [] }],
      ['DELETE', defaultUrl('nope'), undefined],
      ['PUT', agentUrl('nope', 'QA'), { allowedTools: [] }],
      ['DELETE', agentUrl('nope', 'QA'), undefined],
      ['PUT', permissionsUrl('nope'), { version: 1 }],
    ];
    for (const [method, url, body] of writes) {
      const response = await call(server.app, method, url, { auth: true, ...(body === undefined ? {} : { body }) });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(errorCode(response)).toBe('unknown_project');
    }
  });

  it('answers 500 write_failed when .ideai is not a folder, and changes neither memory nor disk', async (t) => {
    const server = await buildTestApp(
      t,
      { demo: {} },
      {
        prepare: async (root) => writeFile(path.join(root, 'demo', '.ideai'), 'a file, not a folder'),
      },
    );
    const response = await call(server.app, 'PUT', defaultUrl('demo'), { body: { allowedTools: ['idea_memory_write'] }, auth: true });
    expect(response.statusCode).toBe(500);
    expect(errorCode(response)).toBe('write_failed');
    expect(await readText(path.join(server.projectDir('demo'), '.ideai'))).toBe('a file, not a folder');
    expect(await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' })).toMatchObject({ allow: false });
  });
});
