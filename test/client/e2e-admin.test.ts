/** The admin and inspection methods of PdpClient against the real service, and their typed errors. */
import { beforeAll, describe, expect, it } from 'vitest';
import { PdpClient, PdpError } from '../../client/index.js';
import { READ_ONLY_DEFAULT, TOOL_CATALOG } from '../../schemas/catalog.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

async function pdpError(promise: Promise<unknown>): Promise<PdpError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(PdpError);
  return error as PdpError;
}

describe('PdpClient admin methods, real service', () => {
  it('reads the catalog, the projects and the permissions with their ETag', async () => {
    const catalog = await pdp.decider.catalog();
    expect(catalog.tools.map((tool) => tool.name)).toEqual(TOOL_CATALOG.map((tool) => tool.name));
    expect(catalog.readOnlyDefault).toEqual([...READ_ONLY_DEFAULT]);
    expect((await pdp.decider.listProjects()).map((project) => project.id).sort()).toEqual(['demo', 'sandbox']);
    const permissions = await pdp.decider.getPermissions('demo');
    expect(permissions.etag).toBe(permissions.revision);
    expect(permissions.permissions.agents.map((agent) => agent.agentId)).toContain('DevFrontend');
  });

  it('writes with If-Match and refuses a stale revision with revision_mismatch', async () => {
    const before = await pdp.admin.getPermissions('demo');
    const after = await pdp.admin.putDefault('demo', [...READ_ONLY_DEFAULT, 'idea_ask_agent'], { ifMatch: before.etag });
    expect(after.etag).not.toBe(before.etag);
    expect(after.permissions.projectDefault.allowedTools).toContain('idea_ask_agent');
    const stale = await pdpError(pdp.admin.putDefault('demo', [...READ_ONLY_DEFAULT], { ifMatch: before.etag }));
    expect(stale).toMatchObject({ code: 'revision_mismatch', status: 412 });
    expect((await pdp.decider.decide({ project: 'demo', requester: 'Main', tool: 'idea_ask_agent' })).allow).toBe(true);
    await pdp.admin.deleteDefault('demo');
    expect((await pdp.decider.decide({ project: 'demo', requester: 'Main', tool: 'idea_ask_agent' })).allow).toBe(false);
  });

  it('writes an agent with tools on ask and conditions on their arguments, which then decide', async () => {
    const conditions = { idea_ask_agent: { agentId: { in: ['QA'] } } };
    const written = await pdp.admin.putAgent('demo', 'Reviewer', [...READ_ONLY_DEFAULT, 'idea_ask_agent'], {
      askTools: ['idea_memory_write'],
      conditions,
    });
    const reviewer = written.permissions.agents.find((agent) => agent.agentId === 'Reviewer');
    expect(reviewer).toMatchObject({ mode: 'override', askTools: ['idea_memory_write'], conditions });
    const ask = (agentId: string) =>
      pdp.decider.decide({ project: 'demo', requester: 'Reviewer', tool: 'idea_ask_agent', arguments: { agentId } });
    expect(await ask('QA')).toMatchObject({ allow: true });
    expect(await ask('Main')).toMatchObject({ allow: false, reason: 'argument_not_allowed', argument: 'agentId' });
    await pdp.admin.deleteAgent('demo', 'Reviewer');
  });

  it('throws typed errors with the service code, status and details', async () => {
    const invalid = await pdpError(pdp.admin.putAgent('demo', 'QA', ['idea_nope', 'idea_ticket_read', 'idea_ticket_read']));
    expect(invalid).toMatchObject({ code: 'invalid_tools', status: 400 });
    expect(invalid.details).toMatchObject({ unknown: ['idea_nope'], duplicates: ['idea_ticket_read'] });
    expect(await pdpError(pdp.admin.getPermissions('ghost'))).toMatchObject({ code: 'unknown_project', status: 404 });
    // The decide token can read but never grant.
    expect(await pdpError(pdp.decider.putAgent('demo', 'QA', [...READ_ONLY_DEFAULT]))).toMatchObject({
      code: 'unauthorized',
      status: 401,
    });
    const closed = new PdpClient({ baseUrl: 'http://127.0.0.1:1', adminTimeoutMs: 500 });
    expect(await pdpError(closed.catalog())).toMatchObject({ code: 'pdp_unavailable', status: undefined });
    await closed.close();
  });

  it('URL-encodes agent ids and requesters in path segments', async () => {
    const agent = 'QA #2 (ñ)';
    await pdp.admin.putAgent('demo', agent, [...READ_ONLY_DEFAULT, 'idea_stop_agent']);
    const effective = await pdp.decider.effective('demo', agent);
    expect(effective.requester).toEqual({ id: agent, kind: 'agent' });
    expect(effective.allowedTools).toContain('idea_stop_agent');
    const anonymous = await pdp.decider.effective('demo', '');
    expect(anonymous.requester.kind).toBe('anonymous');
    const view = await pdp.admin.deleteAgent('demo', agent);
    expect(view.permissions.agents.map((entry) => entry.agentId)).not.toContain(agent);
  });

  it('replaces a whole document and manages ephemeral policies', async () => {
    await pdp.admin.putDocument('sandbox', { version: 1, projectDefault: { allowedTools: ['idea_ticket_list'] } });
    expect((await pdp.decider.effective('sandbox', 'Main')).allowedTools).toEqual(['idea_ticket_list']);
    const requester = 'ticket-assistant:sandbox:7';
    const policy = await pdp.admin.putEphemeral('sandbox', requester, { allowedTools: ['idea_ticket_update'], boundIssue: '#7' });
    expect(policy).toMatchObject({ project: 'sandbox', requester, boundIssue: '#7' });
    expect((await pdp.decider.listEphemeral('sandbox')).map((entry) => entry.requester)).toEqual([requester]);
    await pdp.admin.deleteEphemeral('sandbox', requester);
    expect(await pdp.decider.listEphemeral('sandbox')).toEqual([]);
    expect(await pdpError(pdp.admin.putEphemeral('sandbox', 'QA', { allowedTools: [] }))).toMatchObject({
      code: 'invalid_requester',
    });
  });

  it('lists recent decisions, newest first, filtered by outcome', async () => {
    await pdp.decider.decide({ project: 'demo', requester: 'Git', tool: 'idea_create_skill' });
    const recent = await pdp.decider.recentDecisions('demo', { allow: false, limit: 3 });
    expect(recent.length).toBeGreaterThan(0);
    expect(recent.length).toBeLessThanOrEqual(3);
    expect(recent[0]).toMatchObject({ requester: 'Git', tool: 'idea_create_skill', allow: false });
    expect(recent.every((entry) => !entry.allow)).toBe(true);
  });
});
