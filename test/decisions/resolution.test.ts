/** docs/api.md#resolving-a-decision: how a decision is resolved, and fail-closed on every bad policy file. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../schemas/index.js';
import { buildTestApp, call, decide, permissionsUrl, suiteScope, type TestApp } from '../support/app.js';
import { policyDoc } from '../support/files.js';
import { READ_TOOLS, WRITE_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

/** The message must name the tool, the requester and the project (docs/api.md#http-api). */
function expectMessageNames(decision: Decision, tool: string, requester: string, project: string): void {
  expect(decision.message).toContain(tool);
  expect(decision.message).toContain(project);
  if (requester !== '') expect(decision.message).toContain(requester);
}

describe('builtin defaults (no policy file)', () => {
  const suite = suiteScope();
  let plain: TestApp;
  beforeAll(async () => {
    plain = await buildTestApp(suite, { demo: {} });
  });

  it('lets an agent call the 9 read tools and nothing else, with source builtin-read-only and revision "builtin"', async () => {
    const { app } = plain;
    for (const tool of READ_TOOLS) {
      const d = await decide(app, { project: 'demo', requester: 'Main', tool });
      expect(d).toMatchObject({
        allow: true,
        reason: 'allowed',
        source: 'builtin-read-only',
        requester: { id: 'Main', kind: 'agent' },
        tool: { name: tool, access: 'read' },
        project: 'demo',
        revision: 'builtin',
      });
      expectMessageNames(d, tool, 'Main', 'demo');
    }
    for (const tool of WRITE_TOOLS) {
      const d = await decide(app, { project: 'demo', requester: 'Main', tool });
      expect(d).toMatchObject({
        allow: false,
        reason: 'not_in_allowlist',
        source: 'builtin-read-only',
        tool: { name: tool, access: 'write' },
        revision: 'builtin',
      });
      expectMessageNames(d, tool, 'Main', 'demo');
    }
  });

  it('gives every decision its own non-empty decisionId', async () => {
    const { app } = plain;
    const ids = new Set<string>();
    for (let i = 0; i < 20; i += 1) {
      const d = await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_memory_read' });
      expect(d.decisionId).not.toBe('');
      ids.add(d.decisionId);
    }
    expect(ids.size).toBe(20);
  });

  it('treats an empty .ideai/ folder like a missing file', async (t) => {
    const { app } = await buildTestApp(t, { demo: { ideai: true } });
    const d = await decide(app, { project: 'demo', requester: 'QA', tool: 'idea_ticket_update' });
    expect(d).toMatchObject({ allow: false, reason: 'not_in_allowlist', source: 'builtin-read-only', revision: 'builtin' });
  });
});

describe('anonymous requesters ("" and "mcp")', () => {
  const grantsWrites = policyDoc(['idea_memory_write', 'idea_ask_agent'], { QA: [...READ_TOOLS, 'idea_memory_write'] });
  const suite = suiteScope();
  let shared: TestApp;
  beforeAll(async () => {
    shared = await buildTestApp(suite, { demo: { policy: grantsWrites } });
  });

  it.each(['', 'mcp'])('requester %j gets the canonical read-only set even when the project default grants writes', async (requester) => {
    const { app } = shared;
    for (const tool of WRITE_TOOLS) {
      const d = await decide(app, { project: 'demo', requester, tool });
      expect(d).toMatchObject({
        allow: false,
        reason: 'not_in_allowlist',
        source: 'builtin-read-only',
        requester: { id: requester, kind: 'anonymous' },
      });
      expectMessageNames(d, tool, requester, 'demo');
    }
    // The project default does not list the read tools; anonymous still has them.
    for (const tool of READ_TOOLS) {
      const d = await decide(app, { project: 'demo', requester, tool });
      expect(d).toMatchObject({ allow: true, reason: 'allowed', source: 'builtin-read-only' });
    }
    // Sanity: the same default does grant an agent the write tool.
    const agent = await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' });
    expect(agent).toMatchObject({ allow: true, source: 'project-default' });
  });

  it('does not treat look-alikes ("MCP", " mcp") as anonymous', async () => {
    const { app } = shared;
    for (const requester of ['MCP', 'mcp2']) {
      const d = await decide(app, { project: 'demo', requester, tool: 'idea_memory_write' });
      expect(d.requester).toEqual({ id: requester, kind: 'agent' });
    }
  });
});

describe('agents: override, then project default, then builtin', () => {
  const doc = policyDoc([...READ_TOOLS, 'idea_memory_write'], {
    QA: ['idea_ticket_list', 'idea_ask_agent'],
    Git: [],
  });
  const suite = suiteScope();
  let layered: TestApp;
  beforeAll(async () => {
    layered = await buildTestApp(suite, { demo: { policy: doc } });
  });

  it('uses the project default for an agent without override', async () => {
    const { app } = layered;
    const write = await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' });
    expect(write).toMatchObject({ allow: true, reason: 'allowed', source: 'project-default', requester: { id: 'Main', kind: 'agent' } });
    expect(write.revision).not.toBe('builtin');
    const other = await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_ask_agent' });
    expect(other).toMatchObject({ allow: false, reason: 'not_in_allowlist', source: 'project-default' });
    expectMessageNames(other, 'idea_ask_agent', 'Main', 'demo');
  });

  it('replaces the default by the override, which can also remove read tools', async () => {
    const { app } = layered;
    expect(await decide(app, { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' })).toMatchObject({
      allow: true,
      reason: 'allowed',
      source: 'agent-override',
    });
    expect(await decide(app, { project: 'demo', requester: 'QA', tool: 'idea_ticket_list' })).toMatchObject({
      allow: true,
      source: 'agent-override',
    });
    // In the default, not in the override: denied.
    for (const tool of ['idea_memory_write', 'idea_memory_read', 'idea_ticket_read']) {
      expect(await decide(app, { project: 'demo', requester: 'QA', tool })).toMatchObject({
        allow: false,
        reason: 'not_in_allowlist',
        source: 'agent-override',
      });
    }
    // An empty override denies everything, read tools included.
    for (const tool of [...READ_TOOLS, ...WRITE_TOOLS]) {
      expect(await decide(app, { project: 'demo', requester: 'Git', tool })).toMatchObject({
        allow: false,
        reason: 'not_in_allowlist',
        source: 'agent-override',
      });
    }
  });

  it('matches agent ids exactly (case-sensitive)', async () => {
    const { app } = layered;
    const d = await decide(app, { project: 'demo', requester: 'qa', tool: 'idea_ask_agent' });
    expect(d).toMatchObject({ allow: false, source: 'project-default' });
  });

  it('falls back to builtin read-only when the document has no projectDefault', async (t) => {
    const { app } = await buildTestApp(t, { demo: { policy: policyDoc(undefined, { QA: ['idea_memory_write'] }) } });
    expect(await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_memory_read' })).toMatchObject({
      allow: true,
      source: 'builtin-read-only',
    });
    expect(await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' })).toMatchObject({
      allow: false,
      reason: 'not_in_allowlist',
      source: 'builtin-read-only',
    });
    expect(await decide(app, { project: 'demo', requester: 'QA', tool: 'idea_memory_write' })).toMatchObject({
      allow: true,
      source: 'agent-override',
    });
  });

  it('accepts a document with only a version', async (t) => {
    const { app } = await buildTestApp(t, { demo: { policy: { version: 1 } } });
    expect(await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_sprint_list' })).toMatchObject({
      allow: true,
      source: 'builtin-read-only',
    });
  });
});

describe('unknown tools and unknown projects', () => {
  it('denies a name that is not in the catalog with unknown_tool, even when the document lists it', async (t) => {
    const doc = policyDoc([...READ_TOOLS, 'idea_teleport', 'IDEA_MEMORY_WRITE'], { QA: ['idea_teleport', 'idea_memory_write '] });
    const { app } = await buildTestApp(t, { demo: { policy: doc } });
    for (const requester of ['Main', 'QA', '', 'mcp']) {
      for (const tool of ['idea_teleport', 'IDEA_MEMORY_WRITE', 'idea_memory_write ', '', 'idea_memory_read\u0000']) {
        const d = await decide(app, { project: 'demo', requester, tool });
        expect(d).toMatchObject({ allow: false, reason: 'unknown_tool', tool: { name: tool, access: 'unknown' } });
      }
    }
    // The document stays valid: the unknown names are reported, the known ones work.
    expect(await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_memory_read' })).toMatchObject({ allow: true });
    const view = (await call(app, 'GET', permissionsUrl('demo'))).json<{
      status: string;
      projectDefault: { unknownTools: string[]; allowedTools: string[] };
      agents: { agentId: string; unknownTools: string[]; allowedTools: string[] }[];
    }>();
    expect(view.status).toBe('ok');
    expect([...view.projectDefault.unknownTools].sort()).toEqual(['IDEA_MEMORY_WRITE', 'idea_teleport']);
    expect(view.projectDefault.allowedTools).toEqual([...READ_TOOLS]);
    const qa = view.agents.find((agent) => agent.agentId === 'QA');
    expect([...(qa?.unknownTools ?? [])].sort()).toEqual(['idea_memory_write ', 'idea_teleport']);
    expect(qa?.allowedTools).toEqual([]);
  });

  it('denies a project that does not exist with unknown_project, source none, revision none', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    for (const project of ['nope', 'Demo', '', '../demo', 'demo/']) {
      const d = await decide(app, { project, requester: 'Main', tool: 'idea_memory_read' });
      expect(d).toMatchObject({ allow: false, reason: 'unknown_project', source: 'none', revision: 'none', project });
      expect(d.message).toContain('idea_memory_read');
      expect(d.message).toContain('Main');
    }
  });
});

describe('fail closed on an invalid policy document', () => {
  const invalid: Record<string, string> = {
    'bad-json': '{ "version": 1, "projectDefault": { "allowedTools": ["idea_memory_read", ] } }',
    truncated: '{ "version": 1, "projectDefault": { "allowedTo',
    empty: '',
    'json-null': 'null',
    'json-array': '[]',
    'version-2': JSON.stringify({ version: 2, projectDefault: { allowedTools: [...READ_TOOLS] } }),
    'version-string': JSON.stringify({ version: '1' }),
    'no-version': JSON.stringify({ projectDefault: { allowedTools: [...READ_TOOLS] } }),
    'tools-not-array': JSON.stringify({ version: 1, projectDefault: { allowedTools: 'idea_memory_read' } }),
    'agents-object': JSON.stringify({ version: 1, agents: { QA: { allowedTools: [] } } }),
    'agent-no-policy': JSON.stringify({ version: 1, agents: [{ agentId: 'QA' }] }),
    'tool-not-string': JSON.stringify({ version: 1, projectDefault: { allowedTools: [42] } }),
    // JSON.parse would keep the second "policy" (a grant) while a reader sees the first.
    'duplicate-key': `{"version":1,"agents":[{"agentId":"Main","policy":{"allowedTools":[]},"policy":{"allowedTools":["idea_memory_write"]}}]}`,
    'duplicate-escaped-key': `{"version":1,"projectDefault":{"allowedTools":[]},"projectDef\\u0061ult":{"allowedTools":["idea_memory_write"]}}`,
    'too-deep': `{"version":1,"projectDefault":{"allowedTools":[]},"$schema":${'['.repeat(20)}${']'.repeat(20)}}`,
    'agent-mcp': JSON.stringify({ version: 1, agents: [{ agentId: 'mcp', policy: { allowedTools: [] } }] }),
    'agent-invisible': JSON.stringify({ version: 1, agents: [{ agentId: 'Main\u200b', policy: { allowedTools: [] } }] }),
    'agent-fullwidth': JSON.stringify({ version: 1, agents: [{ agentId: 'Ｍａｉｎ', policy: { allowedTools: [] } }] }),
  };

  it('denies every call (read tools and anonymous included) with policy_invalid', async (t) => {
    const projects = Object.fromEntries(Object.entries(invalid).map(([id, policy]) => [id, { policy }]));
    const server = await buildTestApp(
      t,
      {
        ...projects,
        'dir-at-path': {},
      },
      {
        // A directory where the file should be: it exists but cannot be read as a file.
        prepare: async (root) => {
          await mkdir(path.join(root, 'dir-at-path', '.ideai', 'mcp-tool-permissions.json'), { recursive: true });
        },
      },
    );
    for (const project of [...Object.keys(invalid), 'dir-at-path']) {
      for (const requester of ['Main', '', 'mcp', `ticket-assistant:${project}:82`]) {
        for (const tool of ['idea_memory_read', 'idea_ticket_list', 'idea_memory_write']) {
          const d = await decide(server.app, { project, requester, tool });
          expect(d, `${project} / ${requester} / ${tool}`).toMatchObject({ allow: false, reason: 'policy_invalid', project });
          expectMessageNames(d, tool, requester, project);
        }
      }
      const view = await call(server.app, 'GET', permissionsUrl(project));
      expect(view.statusCode, project).toBe(200);
      const body = view.json<{ status: string; error: { message: string } | null; fileExists: boolean }>();
      expect(body.status, project).toBe('invalid');
      expect(body.error?.message, project).toBeTruthy();
    }
    const projectsList = (await call(server.app, 'GET', '/projects')).json<{ projects: { id: string; status: string }[] }>();
    for (const project of [...Object.keys(invalid), 'dir-at-path']) {
      expect(projectsList.projects.find((p) => p.id === project)?.status, project).toBe('invalid');
    }
  });

  it('reports a duplicate key with its name, line and column', async (t) => {
    const text =
      '{\n  "version": 1,\n  "agents": [\n    { "agentId": "Main", "policy": { "allowedTools": [] }, "policy": { "allowedTools": [] } }\n  ]\n}\n';
    const { app } = await buildTestApp(t, { demo: { policy: text } });
    const body = (await call(app, 'GET', permissionsUrl('demo'))).json<{
      status: string;
      error: { message: string; line?: number; column?: number };
    }>();
    expect(body).toMatchObject({ status: 'invalid', error: { line: 4, column: 60 } });
    expect(body.error.message).toMatch(/^duplicate key "policy" at line 4, column 60/);
  });

  it('reports line and column of a JSON syntax error', async (t) => {
    const { app } = await buildTestApp(t, { demo: { policy: '{\n  "version": 1,\n  "agents": [,]\n}\n' } });
    const body = (await call(app, 'GET', permissionsUrl('demo'))).json<{ error: { line?: number; column?: number; file: string } }>();
    expect(body.error.line).toBe(3);
    expect(typeof body.error.column).toBe('number');
    expect(body.error.file).toContain('mcp-tool-permissions.json');
  });

  it('does not keep the last good state when the file turns invalid on disk, and recovers when it is fixed', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS, 'idea_memory_write']) } });
    const query = { project: 'demo', requester: 'Main', tool: 'idea_memory_write' };
    expect(await decide(server.app, query)).toMatchObject({ allow: true, source: 'project-default' });

    await writeFile(server.policyPath('demo'), '{ "version": 1, "projectDefault": ');
    await waitFor(async () => (await decide(server.app, query)).reason === 'policy_invalid', 'policy_invalid after corruption');
    expect(await decide(server.app, query)).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(await decide(server.app, { ...query, tool: 'idea_memory_read' })).toMatchObject({ allow: false, reason: 'policy_invalid' });

    await writeFile(server.policyPath('demo'), JSON.stringify(policyDoc([...READ_TOOLS, 'idea_memory_write'])));
    await waitFor(async () => (await decide(server.app, query)).allow, 'allowed again after the fix');
  });
});

describe('ticket-assistant requesters', () => {
  it('denies a ticket-assistant of another project with requester_project_mismatch, even for read tools', async (t) => {
    const { app } = await buildTestApp(t, { demo: {}, other: {} });
    for (const tool of ['idea_ticket_read', 'idea_memory_read', 'idea_memory_write']) {
      const d = await decide(app, { project: 'demo', requester: 'ticket-assistant:other:82', tool, arguments: { issueRef: '#82' } });
      expect(d).toMatchObject({
        allow: false,
        reason: 'requester_project_mismatch',
        requester: { id: 'ticket-assistant:other:82', kind: 'ticket-assistant' },
      });
      expectMessageNames(d, tool, 'ticket-assistant:other:82', 'demo');
    }
  });

  it('gives a ticket-assistant without ephemeral policy the canonical read-only set, not the project default', async (t) => {
    const { app } = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS, 'idea_ticket_update_carnet']) } });
    const requester = 'ticket-assistant:demo:82';
    expect(
      await decide(app, { project: 'demo', requester, tool: 'idea_ticket_update_carnet', arguments: { issueRef: '#82' } }),
    ).toMatchObject({
      allow: false,
      reason: 'not_in_allowlist',
      source: 'builtin-read-only',
      requester: { id: requester, kind: 'ticket-assistant' },
    });
    expect(await decide(app, { project: 'demo', requester, tool: 'idea_ticket_read', arguments: { issueRef: '#82' } })).toMatchObject({
      allow: true,
      source: 'builtin-read-only',
    });
  });
});

describe('malformed requesters', () => {
  const everything = policyDoc([...READ_TOOLS, ...WRITE_TOOLS], { QA: [...READ_TOOLS, ...WRITE_TOOLS] });
  const suite = suiteScope();
  let shared: TestApp;
  beforeAll(async () => {
    shared = await buildTestApp(suite, { p: { policy: everything } });
  });
  const malformed = [
    'Ticket-Assistant:p:82',
    ' ticket-assistant:p:82',
    'ticket-assistant::82',
    'ticket-assistant:p:',
    'QA:x',
    ' QA',
    'a/b',
  ];

  it.each(malformed)('denies %j every tool with invalid_requester, though the default grants them all', async (requester) => {
    const { app } = shared;
    for (const tool of [...READ_TOOLS, ...WRITE_TOOLS]) {
      const d = await decide(app, { project: 'p', requester, tool, arguments: { issueRef: '#82' } });
      expect(d).toMatchObject({ allow: false, reason: 'invalid_requester', source: 'none', requester: { id: requester, kind: 'invalid' } });
      expect(d.message).toContain(JSON.stringify(requester));
      expectMessageNames(d, tool, requester.trim(), 'p');
    }
  });

  it.each(malformed)('shows %j nothing allowed on the effective route', async (requester) => {
    const { app } = shared;
    const response = await call(app, 'GET', `/projects/p/requesters/${encodeURIComponent(requester)}/effective`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ requester: { id: requester, kind: 'invalid' }, source: 'none', allowedTools: [] });
  });
});
