/** docs/api.md#projects-and-files and docs/api.md#http-api: GET /projects/:project/mcp-tool-permissions (the UI's get_mcp_tool_permissions). */
import { describe, expect, it } from 'vitest';
import type { PermissionsView } from '../../schemas/index.js';
import { buildTestApp, call, errorCode, permissionsUrl, type TestApp } from '../support/app.js';
import { policyDoc } from '../support/files.js';
import { READ_TOOLS } from '../support/tools.js';

async function getView(app: TestApp['app'], project = 'demo') {
  const response = await call(app, 'GET', permissionsUrl(project));
  expect(response.statusCode, response.body).toBe(200);
  const view = response.json<PermissionsView>();
  expect(response.headers.etag).toBe(`"${view.revision}"`);
  return view;
}

const inherit = (agentId: string, name = agentId, allowedTools: readonly string[] = READ_TOOLS) => ({
  agentId,
  name,
  declared: true,
  mode: 'inherit',
  allowedTools: [...allowedTools],
  added: [],
  removed: [],
  redundant: false,
  unknownTools: [],
  conditions: {},
});

describe('permissions view', () => {
  it('shows builtin defaults and the declared agents (array shape, id or agentId, optional name) without a policy file', async (t) => {
    const { app } = await buildTestApp(t, {
      demo: { agents: [{ id: 'Main', name: 'Agent principal' }, { agentId: 'Architect' }, { id: 'QA', name: 'QA' }] },
    });
    const view = await getView(app);
    expect(view).toMatchObject({
      project: 'demo',
      revision: 'builtin',
      status: 'ok',
      error: null,
      fileExists: false,
      projectDefault: { mode: 'builtin', allowedTools: [...READ_TOOLS], unknownTools: [] },
    });
    expect(view.agents).toEqual([inherit('Architect'), inherit('Main', 'Agent principal'), inherit('QA')]);
  });

  it('reads agents.json in the { "agents": [...] } shape', async (t) => {
    const { app } = await buildTestApp(t, { demo: { agents: { agents: [{ id: 'Git' }, { agentId: 'DevFrontend', name: 'Front' }] } } });
    const view = await getView(app);
    expect(view.agents).toEqual([inherit('DevFrontend', 'Front'), inherit('Git')]);
  });

  it('lists no declared agent and reports agents.json when its shape is wrong', async (t) => {
    const shapes: Record<string, unknown> = {
      'no-agents-key': { members: [{ id: 'Main' }] },
      'a-string': '"Main"',
      'bad-json': '[{"id": "Main"',
      'agents-object': { agents: { id: 'Main' } },
    };
    const overrideOnly = policyDoc(undefined, { QA: ['idea_memory_read'] });
    const { app } = await buildTestApp(
      t,
      Object.fromEntries(Object.entries(shapes).map(([project, agents]) => [project, { agents, policy: overrideOnly }])),
    );
    for (const project of Object.keys(shapes)) {
      const view = await getView(app, project);
      // The policy itself is fine: only the listing is affected.
      expect(view.status, project).toBe('ok');
      expect(
        view.agents.map((a) => a.agentId),
        project,
      ).toEqual(['QA']);
      expect(view.agentsFile?.exists, project).toBe(true);
      expect(typeof view.agentsFile?.error, project).toBe('string');
      expect(view.agentsFile?.error, project).not.toBe('');
    }
  });

  it('compares each override with the effective default: added, removed, redundant; sorts agents; marks override-only agents', async (t) => {
    const projectDefault = [...READ_TOOLS, 'idea_memory_write'];
    const doc = policyDoc(projectDefault, {
      Zed: ['idea_memory_read'],
      QA: [...READ_TOOLS, 'idea_ticket_update_carnet', 'idea_ask_agent'],
      // Same set as the default, in another order: redundant.
      Git: ['idea_memory_write', ...[...READ_TOOLS].reverse()],
      DevFrontend: ['idea_ticket_read', 'idea_teleport', 'idea_memory_write'],
    });
    const { app } = await buildTestApp(t, {
      demo: { policy: doc, agents: [{ id: 'Main' }, { id: 'QA' }, { id: 'Git' }, { id: 'DevFrontend' }, { id: 'Architect' }] },
    });
    const view = await getView(app);
    expect(view).toMatchObject({ status: 'ok', error: null, fileExists: true });
    expect(view.revision).not.toBe('builtin');
    expect(view.projectDefault).toEqual({ mode: 'custom', allowedTools: projectDefault, unknownTools: [], conditions: {} });
    expect(view.agents.map((a) => a.agentId)).toEqual(['Architect', 'DevFrontend', 'Git', 'Main', 'QA', 'Zed']);
    const byId = new Map(view.agents.map((a) => [a.agentId, a]));
    expect(byId.get('Architect')).toEqual(inherit('Architect', 'Architect', projectDefault));
    expect(byId.get('Main')).toEqual(inherit('Main', 'Main', projectDefault));
    expect(byId.get('QA')).toEqual({
      agentId: 'QA',
      name: 'QA',
      declared: true,
      mode: 'override',
      allowedTools: [...READ_TOOLS, 'idea_ask_agent', 'idea_ticket_update_carnet'],
      added: ['idea_ask_agent', 'idea_ticket_update_carnet'],
      removed: ['idea_memory_write'],
      redundant: false,
      unknownTools: [],
      conditions: {},
    });
    expect(byId.get('Git')).toMatchObject({
      mode: 'override',
      allowedTools: projectDefault,
      added: [],
      removed: [],
      redundant: true,
    });
    expect(byId.get('DevFrontend')).toMatchObject({
      mode: 'override',
      declared: true,
      allowedTools: ['idea_ticket_read', 'idea_memory_write'],
      added: [],
      removed: READ_TOOLS.filter((t) => t !== 'idea_ticket_read'),
      redundant: false,
      unknownTools: ['idea_teleport'],
    });
    expect(byId.get('Zed')).toMatchObject({
      agentId: 'Zed',
      name: 'Zed',
      declared: false,
      mode: 'override',
      allowedTools: ['idea_memory_read'],
      added: [],
      removed: [...READ_TOOLS.filter((t) => t !== 'idea_memory_read'), 'idea_memory_write'],
      redundant: false,
    });
  });

  it('compares overrides with the builtin default when there is no projectDefault', async (t) => {
    const { app } = await buildTestApp(t, { demo: { policy: policyDoc(undefined, { QA: [...READ_TOOLS], Git: ['idea_workstate_set'] }) } });
    const view = await getView(app);
    expect(view.projectDefault).toEqual({ mode: 'builtin', allowedTools: [...READ_TOOLS], unknownTools: [], conditions: {} });
    const byId = new Map(view.agents.map((a) => [a.agentId, a]));
    expect(byId.get('QA')).toMatchObject({ mode: 'override', redundant: true, added: [], removed: [], declared: false });
    expect(byId.get('Git')).toMatchObject({ added: ['idea_workstate_set'], removed: [...READ_TOOLS], redundant: false });
  });

  it('keeps the same revision and ETag across GETs and changes them with the bytes', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS]) }, twin: { policy: policyDoc([...READ_TOOLS]) } });
    const first = await getView(server.app);
    const second = await getView(server.app);
    expect(second.revision).toBe(first.revision);
    // Same bytes in another project: same revision (a hash of the bytes).
    expect((await getView(server.app, 'twin')).revision).toBe(first.revision);
    expect(first.revision.length).toBeGreaterThanOrEqual(8);
    expect(first.revision.length).toBeLessThanOrEqual(64);
  });

  it('answers 404 unknown_project', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    for (const project of ['nope', 'Demo', 'constructor', 'toString', 'hasOwnProperty']) {
      const response = await call(app, 'GET', permissionsUrl(project));
      expect(response.statusCode, project).toBe(404);
      expect(errorCode(response), project).toBe('unknown_project');
    }
  });
});
