/** docs/api.md#conditions-on-a-tools-arguments: what a condition allows, refuses and says, through POST /decide and the recent decisions. */
import { describe, expect, it } from 'vitest';
import type { Decision, DecideQuery, RecentDecision } from '../../schemas/index.js';
import { buildApprovalsApp, decider, type Service } from '../support/approvals-app.js';
import { suiteScope } from '../support/app.js';
import { READ_TOOLS } from '../support/tools.js';

const SECRET = 'sk-live-0123456789-do-not-echo';

const DOCUMENT = {
  version: 1,
  projectDefault: {
    allowedTools: [...READ_TOOLS, 'idea_ask_agent', 'idea_run_in_background', 'idea_ticket_update_carnet', 'idea_context_propose'],
    askTools: ['idea_memory_write'],
    conditions: {
      idea_ask_agent: { agentId: { in: ['QA', 'DevFrontend'] } },
      idea_run_in_background: { command: { prefix: ['npm test', 'npm run lint'] } },
      idea_ticket_update_carnet: { issueRef: { in: ['#82', 90] } },
      idea_context_propose: { target: { absent: true } },
      idea_memory_write: { key: { notIn: ['secrets', 7] } },
      idea_ticket_read: { issueRef: { notIn: [1] }, version: { in: [1] } },
    },
  },
};

const call = (tool: string, args?: Record<string, unknown>): DecideQuery => ({
  project: 'demo',
  requester: 'Main',
  tool,
  ...(args === undefined ? {} : { arguments: args }),
});

describe('conditions decide', () => {
  const suite = suiteScope();
  let service: Service | undefined;
  const started = async (): Promise<Service> =>
    (service ??= await buildApprovalsApp(suite, { demo: { policy: JSON.stringify(DOCUMENT) } }));
  const decide = async (tool: string, args?: Record<string, unknown>): Promise<Decision> => (await started()).decide(call(tool, args));
  const expectAllowed = async (tool: string, args?: Record<string, unknown>) => {
    expect(await decide(tool, args), `${tool} ${JSON.stringify(args)}`).toMatchObject({ allow: true, reason: 'allowed' });
  };
  const expectRefused = async (tool: string, args: Record<string, unknown> | undefined, argument: string) => {
    const decision = await decide(tool, args);
    expect(decision, `${tool} ${JSON.stringify(args)}`).toMatchObject({ allow: false, reason: 'argument_not_allowed', argument });
    return decision;
  };

  it('in: by type and value, strings exactly', async () => {
    await expectAllowed('idea_ask_agent', { agentId: 'QA', message: 'hi' });
    await expectAllowed('idea_ask_agent', { agentId: 'DevFrontend' });
    for (const agentId of ['qa', 'QA ', 'Main', '', 1, null, ['QA'], { id: 'QA' }]) {
      await expectRefused('idea_ask_agent', { agentId }, 'agentId');
    }
    await expectRefused('idea_ask_agent', {}, 'agentId');
    await expectRefused('idea_ask_agent', undefined, 'agentId');
  });

  it('in and notIn on issueRef compare ticket numbers: 82, "82" and "#82" are one ticket', async () => {
    for (const issueRef of [82, '82', '#82', ' #82 ', 90, '#90']) await expectAllowed('idea_ticket_update_carnet', { issueRef });
    for (const issueRef of [83, '#820', '8', '', 'QA']) await expectRefused('idea_ticket_update_carnet', { issueRef }, 'issueRef');
    await expectRefused('idea_ticket_update_carnet', {}, 'issueRef');
    for (const issueRef of [['#82'], { n: 82 }, null, true]) {
      expect(await decide('idea_ticket_update_carnet', { issueRef })).toMatchObject({ allow: false, reason: 'invalid_arguments' });
    }
    // All conditions of a tool must hold.
    await expectAllowed('idea_ticket_read', { issueRef: '#2', version: 1 });
    await expectRefused('idea_ticket_read', { issueRef: '#1', version: 1 }, 'issueRef');
    await expectRefused('idea_ticket_read', { issueRef: '#2', version: '1' }, 'version');
  });

  it('notIn on issueRef refuses what is not plainly a ticket number, so no other spelling of a listed ticket gets through', async () => {
    for (const issueRef of ['#2', '2', 2, ' #10 ', 0, '0']) await expectAllowed('idea_ticket_read', { issueRef, version: 1 });
    // A tool reading "01", "# 1" or "１" as a number (Python's int() takes all three) would act on ticket 1.
    for (const issueRef of ['01', '#01', '# 1', '+1', '1.0', '1_0', '１', 1.5, -1, 'one', '']) {
      await expectRefused('idea_ticket_read', { issueRef, version: 1 }, 'issueRef');
    }
    const refused = await expectRefused('idea_ticket_read', { issueRef: '01', version: 1 }, 'issueRef');
    expect(refused.message).toContain('argument issueRef must be a ticket number (e.g. "#82") and none of 1.');
  });

  it('prefix: word by word, never a value holding a shell control sequence', async () => {
    for (const command of [
      'npm test',
      '  npm test  ',
      'npm test unit/a.test.ts',
      'npm\ttest',
      'npm run lint',
      'npm  run   lint src/a.ts',
    ]) {
      await expectAllowed('idea_run_in_background', { command });
    }
    // Options belong to the command: only a prefix ending with `--` lets a word after it begin with `-`.
    for (const command of ['npm test -- --run x', 'npm test --script-shell=/tmp/evil.sh', 'npm run lint --fix', 'npm test -x']) {
      await expectRefused('idea_run_in_background', { command }, 'command');
    }
    const chained = ['npm test; rm -rf ~', 'npm test && curl x', 'npm test | sh', 'npm test `id`', 'npm test $(id)', 'npm test > /etc/x'];
    chained.push('npm test < /dev/zero', 'npm test\nrm -rf ~', 'npm test\rrm', 'npm test &', 'npm test\u2028rm', 'npm test\u0000');
    for (const command of [...chained, 'npm testx', 'npm', 'npm run', 'npm run lintx', 'NPM test', 'yarn test', '', 42, ['npm', 'test']]) {
      await expectRefused('idea_run_in_background', { command }, 'command');
    }
  });

  it('prefix: after the prefix, plain words only, no `..` segment', async () => {
    for (const command of ['npm test a/b.ts:12', 'npm test name=x,y@1%2+3', 'npm test v1.2.3', 'npm test a..b']) {
      await expectAllowed('idea_run_in_background', { command });
    }
    const expanding = [
      'npm test ${x=\\$\\(touch\\ /tmp/p\\)} ${x@P}',
      'npm test ${PATH:x:1}',
      'npm test $[x]',
      'npm test ${!x}',
      'npm test $x',
    ];
    expanding.push(
      "npm test 'a'",
      'npm test "a"',
      'npm test a\\ b',
      'npm test *',
      'npm test a?',
      'npm test [a]',
      'npm test {a,b}',
      'npm test ~',
    );
    expanding.push(
      'npm test ~root/x',
      'npm test !x',
      'npm test #x',
      'npm test (x)',
      'npm test é',
      'npm test a\u00a0b',
      'npm test a\u0085b',
    );
    for (const command of [...expanding, 'npm test ../x', 'npm test a/../../etc', 'npm test ..', 'npm test x=../y', 'npm test a:..']) {
      await expectRefused('idea_run_in_background', { command }, 'command');
    }
  });

  it('another spelling of a conditioned argument under case folding is refused', async () => {
    await expectRefused('idea_ask_agent', { agentId: 'QA', agentid: 'Main' }, 'agentId');
    await expectRefused('idea_ask_agent', { agentId: 'QA', AGENTID: 'Main' }, 'agentId');
    await expectRefused('idea_context_propose', { Target: 'x', content: 'x' }, 'target');
    // The Kelvin sign and the long s fold to k and s, as Go's strings.EqualFold has it.
    await expectRefused('idea_memory_write', { key: 'notes', '\u212Aey': 'secrets' }, 'key');
    await expectRefused('idea_run_in_background', { command: 'npm test', command_: 'x', COMMAND: 'rm -rf ~' }, 'command');
    // Unconditioned arguments keep any spelling.
    await expectAllowed('idea_ask_agent', { agentId: 'QA', Message: 'a', message: 'b' });
  });

  it('an integer beyond 2^53 in a conditioned argument is refused, never rounded into the list', async () => {
    const service = await started();
    const raw = async (tool: string, args: string): Promise<Decision> => {
      const body = `{"project":"demo","requester":"Main","tool":"${tool}","arguments":${args}}`;
      const response = await service.app.inject({
        method: 'POST',
        url: '/decide',
        headers: { ...decider, 'content-type': 'application/json' },
        payload: body,
      });
      return response.json<Decision>();
    };
    expect(await raw('idea_ticket_update_carnet', '{"issueRef":9007199254740993}')).toMatchObject({
      allow: false,
      reason: 'argument_not_allowed',
    });
    expect(await raw('idea_memory_write', '{"key":9007199254740993}')).toMatchObject({ allow: false, reason: 'argument_not_allowed' });
    expect(await raw('idea_memory_write', '{"key":-1e400}')).toMatchObject({ allow: false, reason: 'argument_not_allowed' });
    expect(await raw('idea_memory_write', '{"key":9007199254740991}')).toMatchObject({ allow: false, reason: 'approval_required' });
  });

  it('absent: any value is refused, null and "" included', async () => {
    await expectAllowed('idea_context_propose', { content: 'x' });
    await expectAllowed('idea_context_propose');
    for (const target of ['Main', '', null, 0, false, {}]) await expectRefused('idea_context_propose', { target, content: 'x' }, 'target');
  });

  it('says the tool, the agent, the argument and what is allowed, never the value sent', async () => {
    const refused = await expectRefused('idea_ask_agent', { agentId: SECRET }, 'agentId');
    expect(refused.message).toBe(
      'Tool idea_ask_agent is denied for agent Main in project demo (policy: project-default): argument agentId must be one of QA, DevFrontend.',
    );
    const command = await expectRefused('idea_run_in_background', { command: `npm test; echo ${SECRET}` }, 'command');
    expect(command.message).toContain('npm test, npm run lint');
    for (const message of [refused.message, command.message]) expect(message).not.toContain(SECRET);
    const recent = await (await started()).call('GET', '/projects/demo/decisions?allow=false&limit=5');
    const entries = recent.json<{ decisions: RecentDecision[] }>().decisions;
    expect(entries[0]).toMatchObject({ tool: 'idea_run_in_background', reason: 'argument_not_allowed', argument: 'command' });
    expect(recent.body).not.toContain(SECRET);
  });

  it('on an askTools tool: outside the condition is a denial that opens nothing, inside asks', async () => {
    const before = (await (await started()).approvals('demo')).length;
    await expectRefused('idea_memory_write', { key: 'secrets' }, 'key');
    await expectRefused('idea_memory_write', { key: 7 }, 'key');
    await expectRefused('idea_memory_write', {}, 'key');
    expect(await (await started()).approvals('demo')).toHaveLength(before);
    expect(await decide('idea_memory_write', { key: 'notes' })).toMatchObject({ allow: false, reason: 'approval_required' });
    expect(await decide('idea_memory_write', { key: '7' })).toMatchObject({ allow: false, reason: 'approval_required' });
  });
});

describe('approvals and grants lift the ask, never a condition', () => {
  const ASK = {
    version: 1,
    agents: [
      {
        agentId: 'QA',
        policy: {
          allowedTools: [...READ_TOOLS],
          askTools: ['idea_ask_agent'],
          conditions: { idea_ask_agent: { agentId: { in: ['DevFrontend'] } } },
        },
      },
    ],
  };
  const ask = (agentId: string): DecideQuery => ({ project: 'demo', requester: 'QA', tool: 'idea_ask_agent', arguments: { agentId } });

  it('a once answer is not used up by a call the condition refuses, and allows the next call inside it', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(ASK) } });
    const asked = await service.decide(ask('DevFrontend'));
    expect(asked).toMatchObject({ reason: 'approval_required' });
    await service.answer('demo', asked.approval?.id ?? '', { answer: 'once' });
    expect(await service.decide(ask('Main'))).toMatchObject({ allow: false, reason: 'argument_not_allowed' });
    expect(await service.decide(ask('DevFrontend'))).toMatchObject({ allow: true, source: 'approval' });
    expect(await service.decide(ask('DevFrontend'))).toMatchObject({ allow: false, reason: 'approval_required' });
  });

  it('a temporary grant and an always answer keep the condition', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(ASK) } });
    await service.grant('demo', 'QA', ['idea_ask_agent'], 600);
    expect(await service.decide(ask('DevFrontend'))).toMatchObject({ allow: true, source: 'grant' });
    expect(await service.decide(ask('Main'))).toMatchObject({ allow: false, reason: 'argument_not_allowed' });

    const other = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(ASK) } });
    const asked = await other.decide(ask('DevFrontend'));
    await other.answer('demo', asked.approval?.id ?? '', { answer: 'always' });
    expect(await other.decide(ask('DevFrontend'))).toMatchObject({ allow: true, source: 'agent-override' });
    expect(await other.decide(ask('Main'))).toMatchObject({ allow: false, reason: 'argument_not_allowed' });
  });

  it('never answers a call from a decision made for other arguments (the memo)', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(DOCUMENT) } });
    for (let round = 0; round < 3; round++) {
      expect(await service.decide(call('idea_ask_agent', { agentId: 'QA' }))).toMatchObject({ allow: true });
      expect(await service.decide(call('idea_ask_agent', { agentId: 'Main' }))).toMatchObject({ allow: false });
      expect(await service.decide(call('idea_ask_agent'))).toMatchObject({ allow: false });
    }
  });
});
