/**
 * docs/api.md#conditions-on-a-tools-arguments: a temporary grant keeps the conditions its tools had
 * when it was made, so a restricting edit of the policy (the tool taken off ask, its condition
 * dropped with it) never widens what the grant allows.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DecideQuery, Decision, Grant, PermissionsView } from '../../schemas/index.js';
import { STATE_FILE_NAME } from '../../server/approvals/state-file.js';
import { open, TestClock } from '../support/clocked-approvals.js';
import { approvalOf, buildApprovalsApp, type Service } from '../support/approvals-app.js';
import { agentUrl, permissionsUrl } from '../support/app.js';
import { tempFolder } from '../support/temp-folder.js';
import { READ_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

/** A value the refusal must never quote. */
const OTHER_AGENT = 'Main-secret-7f3a';
const ONLY_DEV_FRONTEND = { idea_ask_agent: { agentId: { in: ['DevFrontend'] } } };

/** QA asks for idea_ask_agent, only towards DevFrontend (or with no condition). */
function askDocument(conditioned: boolean): Record<string, unknown> {
  return {
    version: 1,
    agents: [
      {
        agentId: 'QA',
        policy: {
          allowedTools: [...READ_TOOLS],
          askTools: ['idea_ask_agent'],
          ...(conditioned ? { conditions: ONLY_DEV_FRONTEND } : {}),
        },
      },
    ],
  };
}

/** The same document with the tool taken off ask (its condition dropped with it). */
const UNLISTED = { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: [...READ_TOOLS] } }] };

const ask = (agentId: string): DecideQuery => ({ project: 'demo', requester: 'QA', tool: 'idea_ask_agent', arguments: { agentId } });

async function expectOutsideRefused(service: Service, what: string): Promise<Decision> {
  const decision = await service.decide(ask(OTHER_AGENT));
  expect(decision, what).toMatchObject({ allow: false, reason: 'argument_not_allowed', argument: 'agentId' });
  expect(decision.message, what).not.toContain(OTHER_AGENT);
  expect(decision.message, what).toContain('agentId must be one of DevFrontend');
  return decision;
}

async function expectInsideGranted(service: Service, what: string): Promise<void> {
  expect(await service.decide(ask('DevFrontend')), what).toMatchObject({ allow: true, source: 'grant' });
}

async function grantsOf(service: Service): Promise<Grant[]> {
  return (await service.call('GET', '/projects/demo/grants')).json<{ grants: Grant[] }>().grants;
}

/** Answers QA's request "for" an hour: the grant a `for` answer makes. */
async function grantByAnswer(service: Service): Promise<Grant> {
  const id = approvalOf(await service.decide(ask('DevFrontend')));
  const { grant } = await service.answer('demo', id, { answer: 'for', ttlSeconds: 3600 });
  if (grant === undefined) throw new Error('the answer "for" made no grant');
  return grant;
}

const takeOffAsk: Record<string, (service: Service) => Promise<void>> = {
  'a PUT of the agent': async (service) => {
    const response = await service.call('PUT', agentUrl('demo', 'QA'), { allowedTools: [...READ_TOOLS], askTools: [] });
    expect(response.statusCode, response.body).toBe(200);
  },
  'the whole-document PUT': async (service) => {
    const response = await service.call('PUT', permissionsUrl('demo'), UNLISTED);
    expect(response.statusCode, response.body).toBe(200);
  },
  'an external edit of the file': async (service) => {
    const revisionOf = async () => (await service.call('GET', permissionsUrl('demo'))).json<PermissionsView>().revision;
    const before = await revisionOf();
    await writeFile(service.policyPath('demo'), JSON.stringify(UNLISTED));
    await waitFor(async () => (await revisionOf()) !== before, 'the edit heard', 5_000);
  },
};

describe('a temporary grant keeps the conditions it was made under', () => {
  for (const [how, edit] of Object.entries(takeOffAsk)) {
    it(`a "for" grant still refuses outside its condition once the tool is taken off ask by ${how}`, async (t) => {
      const service = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(askDocument(true)) } });
      const grant = await grantByAnswer(service);
      await expectInsideGranted(service, 'before the edit');
      await expectOutsideRefused(service, 'before the edit');
      await edit(service);
      await expectInsideGranted(service, 'after the edit');
      await expectOutsideRefused(service, 'after the edit');
      expect(grant.conditions).toEqual(ONLY_DEV_FRONTEND);
      expect(await grantsOf(service)).toEqual([grant]);
    });
  }

  it('a direct grant records the conditions of each of its tools, and keeps them once the tool is unlisted', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(askDocument(true)) } });
    const grant = await service.grant('demo', 'QA', ['idea_ask_agent', 'idea_memory_write'], 3600);
    expect(grant.conditions).toEqual(ONLY_DEV_FRONTEND);
    expect(await grantsOf(service)).toEqual([grant]);
    await takeOffAsk['the whole-document PUT']?.(service);
    await expectInsideGranted(service, 'after the edit');
    await expectOutsideRefused(service, 'after the edit');
    // The unconditioned tool of the same grant is granted as before.
    expect(await service.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' })).toMatchObject({
      allow: true,
      source: 'grant',
    });
  });

  it('a grant made while its tool had no condition is unchanged: no conditions, any argument', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(askDocument(false)) } });
    const grant = await grantByAnswer(service);
    expect(grant).not.toHaveProperty('conditions');
    await takeOffAsk['a PUT of the agent']?.(service);
    for (const agentId of ['DevFrontend', OTHER_AGENT]) {
      expect(await service.decide(ask(agentId))).toMatchObject({ allow: true, source: 'grant' });
    }
  });

  it('a call outside the grant but inside a wider condition still on ask is asked, not allowed', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(askDocument(true)) } });
    await grantByAnswer(service);
    const wider = askDocument(true);
    const qa = (wider.agents as { policy: Record<string, unknown> }[])[0];
    if (qa !== undefined) qa.policy.conditions = { idea_ask_agent: { agentId: { in: ['DevFrontend', OTHER_AGENT] } } };
    expect((await service.call('PUT', permissionsUrl('demo'), wider)).statusCode).toBe(200);
    await expectInsideGranted(service, 'after widening');
    expect(await service.decide(ask(OTHER_AGENT))).toMatchObject({ allow: false, reason: 'approval_required' });
  });
});

describe('recorded conditions across a restart', () => {
  it('survive a restart on the same state folder', async (t) => {
    const stateDir = await tempFolder();
    const first = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(askDocument(true)) } }, { stateDir });
    const grant = await grantByAnswer(first);
    await takeOffAsk['the whole-document PUT']?.(first);
    await first.close();
    const saved = JSON.parse(await readFile(path.join(stateDir, STATE_FILE_NAME), 'utf8')) as { grants: { conditions?: unknown }[] };
    expect(saved.grants[0]?.conditions).toEqual(ONLY_DEV_FRONTEND);

    const second = await buildApprovalsApp(t, {}, { stateDir, projects: first });
    expect(await grantsOf(second)).toEqual([grant]);
    await expectInsideGranted(second, 'after the restart');
    await expectOutsideRefused(second, 'after the restart');
  });

  it('a grants file of the previous version (no conditions field) loads; a corrupt conditions field grants nothing', async (t) => {
    const stateDir = await tempFolder();
    const first = await buildApprovalsApp(t, { demo: { policy: JSON.stringify(askDocument(false)) } }, { stateDir });
    const plain = await first.grant('demo', 'QA', ['idea_ask_agent'], 3600);
    const other = await first.grant('demo', 'Git', ['idea_memory_write'], 3600);
    await first.close();
    const file = path.join(stateDir, STATE_FILE_NAME);
    const saved = JSON.parse(await readFile(file, 'utf8')) as { grants: Record<string, unknown>[] };
    for (const entry of saved.grants) {
      expect(entry).not.toHaveProperty('conditions');
      // The same grant for Git, but with conditions no policy could hold.
      if (entry.id === other.id) entry.conditions = { idea_memory_write: { key: { in: [] } } };
    }
    await writeFile(file, JSON.stringify(saved), { mode: 0o600 });

    const second = await buildApprovalsApp(t, {}, { stateDir, projects: first });
    expect(await grantsOf(second)).toEqual([plain]);
    expect(await second.decide(ask(OTHER_AGENT))).toMatchObject({ allow: true, source: 'grant' });
    expect(await second.decide({ project: 'demo', requester: 'Git', tool: 'idea_memory_write' })).toMatchObject({ allow: false });
  });
});

describe('saved conditions that cannot be trusted', () => {
  const HOUR = 3_600_000;
  const CORRUPT: Record<string, unknown> = {
    'not an object': 'agentId in DevFrontend',
    'an empty in': { idea_ask_agent: { agentId: { in: [] } } },
    'two operators': { idea_ask_agent: { agentId: { in: ['DevFrontend'], absent: true } } },
    'a bad argument name': { idea_ask_agent: { 'agent id': { in: ['DevFrontend'] } } },
    'a prefix that could never match': { idea_ask_agent: { agentId: { prefix: ['a; b'] } } },
    'a tool the grant does not name': { idea_memory_write: { key: { in: ['notes'] } } },
  };

  it('make that grant grant nothing, reported, while the others of the file load', async () => {
    const clock = new TestClock();
    const line = (id: string, conditions?: unknown) => ({
      project: 'demo',
      id,
      requester: 'QA',
      tools: ['idea_ask_agent'],
      createdAt: new Date(clock.now).toISOString(),
      expiresAt: new Date(clock.now + HOUR).toISOString(),
      ...(conditions === undefined ? {} : { conditions }),
    });
    const lines = Object.values(CORRUPT).map((conditions, index) => line(`bad${String(index)}`, conditions));
    const folder = await tempFolder();
    const text = JSON.stringify({ version: 1, grants: [...lines, line('kept', ONLY_DEV_FRONTEND)], onces: [] });
    await writeFile(path.join(folder, STATE_FILE_NAME), text, { mode: 0o600 });
    const approvals = open({ stateDirectory: folder }, clock);
    expect(approvals.warnings).toHaveLength(Object.keys(CORRUPT).length);
    for (const warning of approvals.warnings) expect(warning).toMatch(/^Saved grant "bad\d" dropped: its conditions/);
    expect(approvals.grants.list('demo', clock.now).map((grant) => grant.id)).toEqual(['kept']);
    const judge = (agentId: string) => approvals.grants.judge('demo', 'QA', 'idea_ask_agent', { agentId }, () => clock.now);
    expect(judge('DevFrontend')).toEqual({ kind: 'ok' });
    expect(judge(OTHER_AGENT)).toMatchObject({ kind: 'refused', check: { argument: 'agentId' } });
  });

  it('a direct grant while the policy file is invalid is refused: its conditions cannot be known', async (t) => {
    const service = await buildApprovalsApp(t, { demo: { policy: '{"version": 1, "agents": [' } });
    const response = await service.call('POST', '/projects/demo/grants', { requester: 'QA', tools: ['idea_ask_agent'], ttlSeconds: 60 });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ error: { code: 'policy_invalid', message: expect.stringContaining('conditions') as unknown } });
    expect(await grantsOf(service)).toEqual([]);
  });
});
