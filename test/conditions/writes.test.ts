/** docs/api.md#conditions-on-a-tools-arguments: conditions in the permissions view and kept by every write. */
import { describe, expect, it } from 'vitest';
import type { PermissionsView, PolicyDocument } from '../../schemas/index.js';
import { agentUrl, buildTestApp, call, defaultUrl, errorCode, permissionsUrl, type TestApp } from '../support/app.js';
import { readText } from '../support/files.js';
import { READ_TOOLS } from '../support/tools.js';

type App = TestApp['app'];

const ASK_QA = { idea_ask_agent: { agentId: { in: ['QA', 'DevFrontend'] } } };
const NPM = { idea_run_in_background: { command: { prefix: ['npm test', 'npm run lint'] } } };

async function put(app: App, url: string, body: unknown): Promise<PermissionsView> {
  const response = await call(app, 'PUT', url, { auth: true, body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<PermissionsView>();
}

async function fileOf(server: TestApp): Promise<PolicyDocument> {
  return JSON.parse((await readText(server.policyPath('demo'))) ?? 'null') as PolicyDocument;
}

describe('conditions in the view and the writes', () => {
  it('shows the conditions of the default and the effective ones of each agent, {} when none', async (t) => {
    const document = {
      version: 1,
      projectDefault: { allowedTools: [...READ_TOOLS, 'idea_ask_agent'], conditions: ASK_QA },
      agents: [
        { agentId: 'Git', policy: { allowedTools: [...READ_TOOLS, 'idea_run_in_background'], conditions: NPM } },
        { agentId: 'QA', policy: { allowedTools: [...READ_TOOLS] } },
      ],
    };
    const server = await buildTestApp(t, { demo: { policy: JSON.stringify(document), agents: [{ id: 'Main' }] } });
    const view = (await call(server.app, 'GET', permissionsUrl('demo'))).json<PermissionsView>();
    expect(view.projectDefault.conditions).toEqual(ASK_QA);
    const byId = new Map(view.agents.map((agent) => [agent.agentId, agent]));
    expect(byId.get('Main')?.conditions).toEqual(ASK_QA);
    expect(byId.get('Git')?.conditions).toEqual(NPM);
    expect(byId.get('QA')?.conditions).toEqual({});
  });

  it('PUT default/agent sets the conditions given, keeps those of tools still listed without them, drops the others', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const tools = [...READ_TOOLS, 'idea_ask_agent', 'idea_run_in_background'];
    let view = await put(server.app, defaultUrl('demo'), { allowedTools: tools, conditions: { ...ASK_QA, ...NPM } });
    expect(view.projectDefault.conditions).toEqual({ ...ASK_QA, ...NPM });
    expect((await fileOf(server)).projectDefault?.conditions).toEqual({ ...ASK_QA, ...NPM });

    // Without conditions: idea_run_in_background is no longer listed, its condition goes; idea_ask_agent's stays.
    view = await put(server.app, defaultUrl('demo'), { allowedTools: [...READ_TOOLS], askTools: ['idea_ask_agent'] });
    expect(view.projectDefault.conditions).toEqual(ASK_QA);

    // A new override without conditions keeps what narrowed the agent before (the default's).
    view = await put(server.app, agentUrl('demo', 'QA'), { allowedTools: [...READ_TOOLS, 'idea_ask_agent'] });
    expect(view.agents.find((agent) => agent.agentId === 'QA')?.conditions).toEqual(ASK_QA);
    // Given, even empty, they replace.
    view = await put(server.app, agentUrl('demo', 'QA'), { allowedTools: [...READ_TOOLS, 'idea_ask_agent'], conditions: {} });
    expect(view.agents.find((agent) => agent.agentId === 'QA')?.conditions).toEqual({});
    expect((await fileOf(server)).agents?.[0]?.policy).toEqual({ allowedTools: [...READ_TOOLS, 'idea_ask_agent'] });
  });

  it('refuses conditions on a tool the body does not list, or that can never hold, with 400 invalid_conditions', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const before = await readText(server.policyPath('demo'));
    const unlisted = await call(server.app, 'PUT', defaultUrl('demo'), {
      auth: true,
      body: { allowedTools: [...READ_TOOLS], conditions: ASK_QA },
    });
    expect(unlisted.statusCode).toBe(400);
    expect(errorCode(unlisted)).toBe('invalid_conditions');
    expect(unlisted.json<{ error: { details: unknown } }>().error.details).toEqual({
      problems: [{ tool: 'idea_ask_agent', message: expect.stringContaining('neither allowedTools nor askTools') as unknown }],
    });
    const chained = await call(server.app, 'PUT', agentUrl('demo', 'QA'), {
      auth: true,
      body: {
        allowedTools: ['idea_run_in_background'],
        conditions: { idea_run_in_background: { command: { prefix: ['npm test; rm -rf /'] } } },
      },
    });
    expect(chained.statusCode).toBe(400);
    expect(chained.json<{ error: { details: unknown } }>().error.details).toMatchObject({
      problems: [{ tool: 'idea_run_in_background', argument: 'command' }],
    });
    const malformed = await call(server.app, 'PUT', defaultUrl('demo'), {
      auth: true,
      body: { allowedTools: ['idea_ask_agent'], conditions: { idea_ask_agent: { agentId: { in: ['QA'], notIn: ['Main'] } } } },
    });
    expect(malformed.statusCode).toBe(400);
    const wholeDocument = await call(server.app, 'PUT', permissionsUrl('demo'), {
      auth: true,
      body: { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: [], conditions: ASK_QA } }] },
    });
    expect(wholeDocument.statusCode).toBe(400);
    expect(errorCode(wholeDocument)).toBe('invalid_conditions');
    expect(await readText(server.policyPath('demo'))).toBe(before);
  });

  it('the whole-document PUT writes the conditions as given, tools in catalog order', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const conditions = { ...NPM, ...ASK_QA, idea_context_propose: { target: { absent: true as const } } };
    await put(server.app, permissionsUrl('demo'), {
      version: 1,
      agents: [
        {
          agentId: 'DevFrontend',
          policy: { allowedTools: ['idea_run_in_background', 'idea_ask_agent'], askTools: ['idea_context_propose'], conditions },
        },
      ],
    });
    const written = (await fileOf(server)).agents?.[0]?.policy.conditions ?? {};
    expect(Object.keys(written)).toEqual(['idea_ask_agent', 'idea_context_propose', 'idea_run_in_background']);
    expect(written).toEqual(conditions);
  });
});
