/** docs/api.md#usage-limits: `limits` in the policy file, its strict validation, the view, and every write keeping them. */
import { describe, expect, it } from 'vitest';
import type { PermissionsView, PolicyDocument } from '../../schemas/index.js';
import { publishedSchemaText } from '../../schemas/publish.js';
import { compilePolicyFile, type ValidPolicy } from '../../server/domain/compile.js';
import { checkPolicy } from '../../server/domain/policy-check.js';
import { agentUrl, buildTestApp, call, defaultUrl, errorCode, permissionsUrl, type TestApp } from '../support/app.js';
import { readText } from '../support/files.js';
import { READ_TOOLS } from '../support/tools.js';

const ASK_LIMIT = { idea_ask_agent: { max: 20, per: '1h' } };
const RUN_LIMIT = { idea_run_in_background: { max: 5, per: '10m' } };

const compile = (document: unknown) => compilePolicyFile(Buffer.from(JSON.stringify(document, null, 2)));

function withLimits(limits: unknown, askTools: string[] = []): unknown {
  return { version: 1, projectDefault: { allowedTools: [...READ_TOOLS, 'idea_ask_agent'], askTools, limits } };
}

describe('limits in the policy file', () => {
  it('compiles the limits of the policy that applies, by tool, with their window', () => {
    const policy = compile({
      version: 1,
      projectDefault: {
        allowedTools: [...READ_TOOLS, 'idea_ask_agent'],
        askTools: ['idea_run_in_background'],
        limits: { ...ASK_LIMIT, ...RUN_LIMIT },
      },
      agents: [{ agentId: 'QA', policy: { allowedTools: [...READ_TOOLS] } }],
    }) as ValidPolicy;
    expect(policy.status).toBe('ok');
    expect(policy.projectDefault.limits.get('idea_ask_agent')).toEqual({ max: 20, per: '1h', windowMs: 3_600_000 });
    // On ask, the tool keeps its limit.
    expect(policy.projectDefault.limits.get('idea_run_in_background')).toEqual({ max: 5, per: '10m', windowMs: 600_000 });
    // An override replaces the default, limits included.
    expect(policy.overrides.get('QA')?.limits.size).toBe(0);
  });

  it('refuses a limit on an unlisted tool (limit_unlisted_tool) and a bad max or per (invalid_limit, expected and got)', () => {
    const unlisted = compile(withLimits({ idea_memory_write: { max: 1, per: '1h' } }));
    expect(unlisted).toMatchObject({ status: 'invalid', code: 'limit_unlisted_tool' });
    const cases: [unknown, string][] = [
      [{ max: 0, per: '1h' }, 'max expects an integer from 1 to 100000, got the number 0'],
      [{ max: 100_001, per: '1h' }, 'max expects an integer from 1 to 100000, got the number 100001'],
      [{ max: 2.5, per: '1h' }, 'got the number 2.5'],
      [{ max: '20', per: '1h' }, 'got the string "20"'],
      [{ max: 20, per: '8d' }, 'per expects <n>s, <n>m, <n>h or <n>d from 1s to 7d (e.g. "1h"), got the string "8d"'],
      [{ max: 20, per: '1w' }, 'got the string "1w"'],
      [{ max: 20, per: '0s' }, 'got the string "0s"'],
      [{ max: 20 }, 'per expects <n>s, <n>m, <n>h or <n>d from 1s to 7d (e.g. "1h"), got nothing'],
      [{ max: 20, per: '1h', burst: 3 }, 'a limit has only max and per, got the property "burst"'],
    ];
    for (const [limit, message] of cases) {
      const compiled = compile(withLimits({ idea_ask_agent: limit }));
      expect(compiled, JSON.stringify(limit)).toMatchObject({ status: 'invalid', code: 'invalid_limit' });
      expect(compiled.status === 'invalid' ? compiled.error.message : '').toContain(message);
    }
    // The bounds themselves are valid.
    for (const limit of [
      { max: 1, per: '1s' },
      { max: 100_000, per: '7d' },
      { max: 3, per: '168h' },
      { max: 3, per: '10080m' },
    ]) {
      expect(compile(withLimits({ idea_ask_agent: limit })).status, JSON.stringify(limit)).toBe('ok');
    }
  });

  it('idea-pdp check lists each problem of limits at its own line and column', () => {
    const text = JSON.stringify(
      {
        version: 1,
        projectDefault: {
          allowedTools: ['idea_ask_agent'],
          limits: { idea_ask_agent: { max: 0, per: '1h' }, idea_memory_write: { max: 2, per: '9d' } },
        },
      },
      null,
      2,
    );
    const policy = compilePolicyFile(Buffer.from(text));
    const { problems } = checkPolicy('p.json', text, policy);
    expect(problems.map((one) => [one.line, one.column, one.code, one.message])).toEqual([
      [
        9,
        9,
        'invalid_limit',
        'invalid limit at /projectDefault/limits/idea_ask_agent/max: max expects an integer from 1 to 100000, got the number 0',
      ],
      [
        12,
        7,
        'limit_unlisted_tool',
        'limit on "idea_memory_write" at /projectDefault/limits/idea_memory_write: the tool is in neither allowedTools nor askTools of this policy',
      ],
      [
        14,
        9,
        'invalid_limit',
        'invalid limit at /projectDefault/limits/idea_memory_write/per: per expects <n>s, <n>m, <n>h or <n>d from 1s to 7d (e.g. "1h"), got the string "9d"',
      ],
    ]);
  });

  it('is in the published JSON Schema', () => {
    const schema = JSON.parse(publishedSchemaText()) as { properties: { projectDefault: { properties: Record<string, unknown> } } };
    expect(JSON.stringify(schema.properties.projectDefault.properties.limits)).toContain('"pattern":"^[1-9][0-9]{0,6}[smhd]$"');
  });
});

type App = TestApp['app'];

async function put(app: App, url: string, body: unknown): Promise<PermissionsView> {
  const response = await call(app, 'PUT', url, { auth: true, body });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<PermissionsView>();
}

async function fileOf(server: TestApp): Promise<PolicyDocument> {
  return JSON.parse((await readText(server.policyPath('demo'))) ?? 'null') as PolicyDocument;
}

describe('writes keep limits as they keep conditions', () => {
  it('PUT default/agent sets the limits given, keeps those of tools still listed without them, drops the others', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const tools = [...READ_TOOLS, 'idea_ask_agent', 'idea_run_in_background'];
    let view = await put(server.app, defaultUrl('demo'), { allowedTools: tools, limits: { ...ASK_LIMIT, ...RUN_LIMIT } });
    expect(view.projectDefault.limits).toEqual({ ...ASK_LIMIT, ...RUN_LIMIT });
    expect((await fileOf(server)).projectDefault?.limits).toEqual({ ...ASK_LIMIT, ...RUN_LIMIT });

    // Without limits: idea_run_in_background is no longer listed, its limit goes; idea_ask_agent (now on ask) keeps its own.
    view = await put(server.app, defaultUrl('demo'), { allowedTools: [...READ_TOOLS], askTools: ['idea_ask_agent'] });
    expect(view.projectDefault.limits).toEqual(ASK_LIMIT);

    // A new override without limits keeps what capped the agent before (the default's).
    view = await put(server.app, agentUrl('demo', 'QA'), { allowedTools: [...READ_TOOLS, 'idea_ask_agent'] });
    expect(view.agents.find((agent) => agent.agentId === 'QA')?.limits).toEqual(ASK_LIMIT);
    // Given, even empty, they replace.
    view = await put(server.app, agentUrl('demo', 'QA'), { allowedTools: [...READ_TOOLS, 'idea_ask_agent'], limits: {} });
    expect(view.agents.find((agent) => agent.agentId === 'QA')?.limits).toBeUndefined();
    expect((await fileOf(server)).agents?.[0]?.policy).toEqual({ allowedTools: [...READ_TOOLS, 'idea_ask_agent'] });
  });

  it('refuses limits on a tool the body does not list, or out of range, with 400 invalid_limits, writing nothing', async (t) => {
    const server = await buildTestApp(t, { demo: {} });
    const before = await readText(server.policyPath('demo'));
    const unlisted = await call(server.app, 'PUT', defaultUrl('demo'), {
      auth: true,
      body: { allowedTools: [...READ_TOOLS], limits: ASK_LIMIT },
    });
    expect(unlisted.statusCode).toBe(400);
    expect(errorCode(unlisted)).toBe('invalid_limits');
    expect(unlisted.json<{ error: { details: unknown } }>().error.details).toEqual({
      problems: [{ tool: 'idea_ask_agent', message: expect.stringContaining('neither allowedTools nor askTools') as unknown }],
    });
    const long = await call(server.app, 'PUT', agentUrl('demo', 'QA'), {
      auth: true,
      body: { allowedTools: ['idea_ask_agent'], limits: { idea_ask_agent: { max: 3, per: '30d' } } },
    });
    expect(errorCode(long)).toBe('invalid_limits');
    expect(long.body).toContain('got the string \\"30d\\"');
    const document = await call(server.app, 'PUT', permissionsUrl('demo'), {
      auth: true,
      body: { version: 1, projectDefault: { allowedTools: ['idea_ask_agent'], limits: { idea_memory_write: { max: 1, per: '1h' } } } },
    });
    expect(errorCode(document)).toBe('invalid_limits');
    expect(await readText(server.policyPath('demo'))).toBe(before);
  });

  it('the answer always keeps the limit of the tool it allows, and an override that only changes a limit is not redundant', async (t) => {
    const document = {
      version: 1,
      projectDefault: { allowedTools: [...READ_TOOLS], askTools: ['idea_ask_agent'], limits: ASK_LIMIT },
      agents: [
        {
          agentId: 'Git',
          policy: { allowedTools: [...READ_TOOLS], askTools: ['idea_ask_agent'], limits: { idea_ask_agent: { max: 2, per: '1h' } } },
        },
      ],
    };
    const server = await buildTestApp(t, { demo: { policy: JSON.stringify(document) } });
    const view = (await call(server.app, 'GET', permissionsUrl('demo'))).json<PermissionsView>();
    expect(view.agents.find((agent) => agent.agentId === 'Git')?.redundant).toBe(false);
    const asked = (await call(server.app, 'POST', '/decide', { body: { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' } })).json<{
      approval: { id: string };
    }>();
    const answered = await call(server.app, 'POST', `/projects/demo/approvals/${asked.approval.id}`, {
      auth: true,
      body: { answer: 'always' },
    });
    expect(answered.statusCode, answered.body).toBe(200);
    const written = await fileOf(server);
    expect(written.agents?.find((agent) => agent.agentId === 'QA')?.policy).toEqual({
      allowedTools: [...READ_TOOLS, 'idea_ask_agent'],
      limits: ASK_LIMIT,
    });
  });
});
