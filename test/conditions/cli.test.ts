/** docs/api.md#conditions-on-a-tools-arguments and docs/api.md#policy-as-code-idea-pdp-and-previews: `idea-pdp check`, `test` and `decide` on policies with conditions, through the command. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

const POLICY = {
  version: 1,
  agents: [
    {
      agentId: 'DevFrontend',
      policy: {
        allowedTools: ['idea_ticket_read'],
        askTools: ['idea_ask_agent'],
        conditions: { idea_ask_agent: { agentId: { in: ['QA'] } }, idea_ticket_read: { issueRef: { in: [82] } } },
      },
    },
  ],
};

async function project(policy: unknown, tests?: unknown): Promise<string> {
  const dir = path.join(await tempFolder(), 'demo');
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  await writeFile(
    path.join(dir, '.ideai', 'mcp-tool-permissions.json'),
    typeof policy === 'string' ? policy : `${JSON.stringify(policy, null, 2)}\n`,
  );
  if (tests !== undefined) await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.test.json'), JSON.stringify(tests, null, 2));
  return dir;
}

describe('idea-pdp and conditions', () => {
  it('check: a condition on an unlisted tool is an error at its line and column; an unknown argument a warning', async () => {
    const unlisted = structuredClone(POLICY);
    (unlisted.agents[0]?.policy.conditions as Record<string, unknown>).idea_memory_write = { key: { in: ['x'] } };
    const bad = await runSourceCli(['check', '.'], await project(unlisted));
    expect(bad.code, bad.stdout + bad.stderr).toBe(1);
    expect(bad.stdout).toContain(
      '.ideai/mcp-tool-permissions.json:28:11: error condition_unlisted_tool: condition on "idea_memory_write" at /agents/0/policy/conditions/idea_memory_write',
    );

    const typo = structuredClone(POLICY);
    (typo.agents[0]?.policy.conditions as Record<string, unknown>).idea_ask_agent = { agentID: { in: ['QA'] } };
    const warned = await runSourceCli(['check', '.'], await project(typo));
    expect(warned.code, warned.stdout + warned.stderr).toBe(0);
    expect(warned.stdout).toMatch(/mcp-tool-permissions\.json:\d+:\d+: warning unknown_argument: condition on argument "agentID"/);
    expect(warned.stdout).toContain('it takes agentId, message');
    expect(warned.stdout).toContain('did you mean "agentId"?');
    expect((await runSourceCli(['check', '--strict', '.'], await project(typo))).code).toBe(1);

    const chained = await runSourceCli(
      ['check', '.'],
      await project({
        version: 1,
        projectDefault: {
          allowedTools: ['idea_run_in_background'],
          conditions: { idea_run_in_background: { command: { prefix: ['npm test && x'] } } },
        },
      }),
    );
    expect(chained.code).toBe(1);
    expect(chained.stdout).toMatch(
      /:\d+:\d+: error invalid_condition: invalid condition at \/projectDefault\/conditions\/idea_run_in_background\/command/,
    );
  });

  it('check: a notIn deny-list is a warning (weak_deny_list), except on issueRef; the spellings it lets through are real', async () => {
    const denyList = {
      version: 1,
      projectDefault: {
        allowedTools: ['idea_memory_write', 'idea_ticket_read', 'idea_ask_agent'],
        conditions: {
          idea_memory_write: { key: { notIn: ['secrets'] } },
          idea_ticket_read: { issueRef: { notIn: ['#82'] } },
          idea_ask_agent: { agentId: { in: ['QA'] } },
        },
      },
    };
    // What the warning is about: each other spelling of "secrets" is allowed.
    const spellings = ['Secrets', ' secrets', 'secrets\u0000', '\u0455ecrets'].map((key) => ({
      requester: 'QA',
      tool: 'idea_memory_write',
      arguments: { key },
      expect: 'allow',
    }));
    const cases = [...spellings, { requester: 'QA', tool: 'idea_memory_write', arguments: { key: 'secrets' }, expect: 'deny' }];
    const dir = await project(denyList, { version: 1, cases });
    const warned = await runSourceCli(['check', '.'], dir);
    expect(warned.code, warned.stdout + warned.stderr).toBe(0);
    expect(warned.stdout).toContain(
      '.ideai/mcp-tool-permissions.json:11:9: warning weak_deny_list: notIn on argument "key" at /projectDefault/conditions/idea_memory_write/key refuses only the exact values listed',
    );
    expect(warned.stdout.match(/weak_deny_list/g)).toHaveLength(1);
    expect(warned.stdout).toContain('valid: 0 errors, 1 warning in 1 project; --strict would make it an error');
    expect((await runSourceCli(['check', '--strict', '.'], dir)).code).toBe(1);
    const json = JSON.parse((await runSourceCli(['check', '--json', '.'], dir)).stdout) as { warnings: number };
    expect(json.warnings).toBe(1);
    const tested = await runSourceCli(['test', '.'], dir);
    expect(tested.stdout + tested.stderr).toContain('5 passed, 0 failed');
  }, 120_000);

  it('test: cases carry arguments; ask inside a condition, deny outside it', async () => {
    const cases = [
      { requester: 'DevFrontend', tool: 'idea_ask_agent', arguments: { agentId: 'QA' }, expect: 'ask' },
      { requester: 'DevFrontend', tool: 'idea_ask_agent', arguments: { agentId: 'Main' }, expect: 'deny' },
      { requester: 'DevFrontend', tool: 'idea_ticket_read', arguments: { issueRef: '#82', deep: { any: [1, { x: 2 }] } }, expect: 'allow' },
      { requester: 'DevFrontend', tool: 'idea_ticket_read', arguments: { issueRef: '#83' }, expect: 'allow', name: 'wrong ticket' },
    ];
    const run = await runSourceCli(['test', '.'], await project(POLICY, { version: 1, cases }));
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain('argument_not_allowed');
    expect(run.stdout.trim().split('\n').at(-1)).toBe('3 passed, 1 failed');
  });

  it('decide --arguments: the decision with the argument that refused, never the value sent', async () => {
    const dir = await project(POLICY);
    const run = await runSourceCli(
      ['decide', '.', '--requester', 'DevFrontend', '--tool', 'idea_ask_agent', '--arguments', '{"agentId":"s3cr3t-value"}'],
      dir,
    );
    expect(run.code, run.stderr).toBe(0);
    const decision = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(decision).toMatchObject({ allow: false, reason: 'argument_not_allowed', argument: 'agentId' });
    expect(decision.message).toBe(
      'Tool idea_ask_agent is denied for agent DevFrontend in project demo (policy: agent-override): argument agentId must be one of QA.',
    );
    expect(run.stdout).not.toContain('s3cr3t');
    const inside = await runSourceCli(
      ['decide', '.', '--requester', 'DevFrontend', '--tool', 'idea_ask_agent', '--arguments', '{"agentId":"QA"}'],
      dir,
    );
    expect(JSON.parse(inside.stdout)).toMatchObject({ allow: false, reason: 'approval_required' });
  });
});
