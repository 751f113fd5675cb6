/** docs/api.md#ephemeral-ticket-assistant-policies (and docs/api.md#resolving-a-decision ticket-assistant resolution): ephemeral ticket-assistant policies. */
import { describe, expect, it, vi } from 'vitest';
import type { DecideQuery } from '../../schemas/index.js';
import { buildTestApp, call, decide, ephemeralUrl, errorCode, type TestApp } from '../support/app.js';
import { policyDoc } from '../support/files.js';
import { READ_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';

const TA = 'ticket-assistant:demo:82';

async function register(app: TestApp['app'], body: unknown, requester = TA) {
  const response = await call(app, 'PUT', ephemeralUrl('demo', requester), { body, auth: true });
  expect(response.statusCode, response.body).toBeGreaterThanOrEqual(200);
  expect(response.statusCode, response.body).toBeLessThan(300);
  return response;
}

describe('ephemeral policies', () => {
  it('replaces the read-only set by the registered allowlist, with source ephemeral', async (t) => {
    const { app } = await buildTestApp(t, { demo: { policy: policyDoc([...READ_TOOLS, 'idea_memory_write']) } });
    await register(app, { allowedTools: ['idea_ticket_read', 'idea_ticket_update_carnet'] });
    expect(
      await decide(app, { project: 'demo', requester: TA, tool: 'idea_ticket_update_carnet', arguments: { issueRef: '#82' } }),
    ).toMatchObject({
      allow: true,
      reason: 'allowed',
      source: 'ephemeral',
      requester: { id: TA, kind: 'ticket-assistant' },
    });
    // Not in the ephemeral allowlist: denied even though it is a read tool / in the project default.
    for (const tool of ['idea_memory_read', 'idea_memory_write']) {
      expect(await decide(app, { project: 'demo', requester: TA, tool })).toMatchObject({
        allow: false,
        reason: 'not_in_allowlist',
        source: 'ephemeral',
      });
    }
    // Only exactly that requester: another ticket of the project is still read-only.
    expect(
      await decide(app, {
        project: 'demo',
        requester: 'ticket-assistant:demo:83',
        tool: 'idea_ticket_update_carnet',
        arguments: { issueRef: '#83' },
      }),
    ).toMatchObject({ allow: false, source: 'builtin-read-only' });
  });

  it('accepts issueRef "#82" and "82" for a boundIssue of "#82" or "82" (issue-scoped tools)', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    for (const [boundIssue, issueRef] of [
      ['#82', '82'],
      ['#82', '#82'],
      ['82', '#82'],
      ['82', '82'],
    ] as const) {
      await register(app, { allowedTools: ['idea_ticket_update_carnet', 'idea_ticket_read'], boundIssue });
      for (const tool of ['idea_ticket_update_carnet', 'idea_ticket_read']) {
        expect(
          await decide(app, { project: 'demo', requester: TA, tool, arguments: { issueRef } }),
          `${boundIssue} ${issueRef}`,
        ).toMatchObject({
          allow: true,
          reason: 'allowed',
          source: 'ephemeral',
        });
      }
      // Re-registering replaces the bound ticket.
      expect(await decide(app, { project: 'demo', requester: TA, tool: 'idea_ticket_read', arguments: { issueRef: '#83' } })).toMatchObject(
        {
          allow: false,
          reason: 'issue_out_of_bounds',
        },
      );
    }
    await register(app, { allowedTools: ['idea_ticket_read'], boundIssue: '#83' });
    expect(await decide(app, { project: 'demo', requester: TA, tool: 'idea_ticket_read', arguments: { issueRef: '#82' } })).toMatchObject({
      allow: false,
      reason: 'issue_out_of_bounds',
    });
  });

  it('denies an issue-scoped tool with issue_out_of_bounds when issueRef is missing or names another ticket', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    await register(app, { allowedTools: ['idea_ticket_update_carnet', 'idea_ticket_read', 'idea_ticket_list'], boundIssue: '#82' });
    const outOfBounds: DecideQuery['arguments'][] = [
      undefined,
      {},
      { issueRef: '#83' },
      { issueRef: '83' },
      { issueRef: '#820' },
      { issueRef: '8' },
      { issueRef: '' },
      { other: '#82' },
    ];
    for (const args of outOfBounds) {
      for (const tool of ['idea_ticket_update_carnet', 'idea_ticket_read']) {
        const d = await decide(app, { project: 'demo', requester: TA, tool, ...(args === undefined ? {} : { arguments: args }) });
        expect(d, `${tool} ${JSON.stringify(args)}`).toMatchObject({ allow: false, reason: 'issue_out_of_bounds', source: 'ephemeral' });
        expect(d.message).toContain(tool);
        expect(d.message).toContain(TA);
        expect(d.message).toContain('demo');
      }
    }
    // An issueRef that is neither a string nor a number is refused as such (docs/api.md#ephemeral-ticket-assistant-policies), never matched.
    for (const issueRef of [['#82'], { n: 82 }, null, true]) {
      const d = await decide(app, { project: 'demo', requester: TA, tool: 'idea_ticket_update_carnet', arguments: { issueRef } });
      expect(d, JSON.stringify(issueRef)).toMatchObject({ allow: false, reason: 'invalid_arguments', source: 'ephemeral' });
    }
    // A tool that is not issue-scoped does not need the issueRef.
    expect(await decide(app, { project: 'demo', requester: TA, tool: 'idea_ticket_list' })).toMatchObject({
      allow: true,
      source: 'ephemeral',
    });
  });

  it('denies with invalid_arguments an issueRef that is neither a string nor a number (a list naming the ticket included)', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    await register(app, { allowedTools: ['idea_ticket_update_carnet'], boundIssue: '#82' });
    for (const issueRef of [['#82'], ['82'], { id: '82' }, true, null]) {
      const d = await decide(app, { project: 'demo', requester: TA, tool: 'idea_ticket_update_carnet', arguments: { issueRef } });
      expect(d, JSON.stringify(issueRef)).toMatchObject({ allow: false, reason: 'invalid_arguments', source: 'ephemeral' });
      expect(d.message).toContain('issueRef');
    }
    expect(
      await decide(app, { project: 'demo', requester: TA, tool: 'idea_ticket_update_carnet', arguments: { issueRef: 82 } }),
    ).toMatchObject({
      allow: true,
    });
  });

  it('lists registered policies and removes one with DELETE', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    await register(app, { allowedTools: ['idea_ticket_update_carnet'], boundIssue: '#82', ttlSeconds: 600 });
    const listed = await call(app, 'GET', '/projects/demo/ephemeral-policies');
    expect(listed.statusCode).toBe(200);
    const policies = listed.json<{ policies: Record<string, unknown>[] }>().policies;
    expect(policies).toHaveLength(1);
    const [policy] = policies;
    expect(policy).toMatchObject({ project: 'demo', requester: TA, allowedTools: ['idea_ticket_update_carnet'] });
    expect(String(policy?.boundIssue).replace(/^#/, '')).toBe('82');
    const expiresAt = Date.parse(String(policy?.expiresAt));
    expect(expiresAt - Date.now()).toBeGreaterThan(500_000);
    expect(expiresAt - Date.now()).toBeLessThanOrEqual(600_000 + 1_000);

    const removed = await call(app, 'DELETE', ephemeralUrl('demo', TA), { auth: true });
    expect(removed.statusCode).toBeGreaterThanOrEqual(200);
    expect(removed.statusCode).toBeLessThan(300);
    expect(
      await decide(app, { project: 'demo', requester: TA, tool: 'idea_ticket_update_carnet', arguments: { issueRef: '#82' } }),
    ).toMatchObject({
      allow: false,
      source: 'builtin-read-only',
    });
    expect((await call(app, 'GET', '/projects/demo/ephemeral-policies')).json<{ policies: unknown[] }>().policies).toEqual([]);
  });

  it('defaults ttlSeconds to 3600 and a missing boundIssue to null', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    await register(app, { allowedTools: ['idea_ticket_update_carnet'] });
    const [policy] = (await call(app, 'GET', '/projects/demo/ephemeral-policies')).json<{
      policies: { expiresAt: string; boundIssue: unknown }[];
    }>().policies;
    expect(policy?.boundIssue).toBeNull();
    const remaining = Date.parse(policy?.expiresAt ?? '') - Date.now();
    expect(remaining).toBeGreaterThan(3_500_000);
    expect(remaining).toBeLessThanOrEqual(3_601_000);
    // Without a bound ticket, issue-scoped tools are not restricted to one issueRef.
    for (const issueRef of ['#1', '#82', undefined]) {
      expect(
        await decide(app, {
          project: 'demo',
          requester: TA,
          tool: 'idea_ticket_update_carnet',
          ...(issueRef === undefined ? {} : { arguments: { issueRef } }),
        }),
      ).toMatchObject({ allow: true, source: 'ephemeral' });
    }
  });

  it('expires after ttlSeconds: the requester is back to read-only', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    await register(app, { allowedTools: ['idea_memory_write'], ttlSeconds: 1 });
    const query = { project: 'demo', requester: TA, tool: 'idea_memory_write' };
    expect(await decide(app, query)).toMatchObject({ allow: true, source: 'ephemeral' });
    const waited = await waitFor(async () => !(await decide(app, query)).allow, 'ephemeral policy expiry', 4_000, 25);
    expect(waited).toBeGreaterThan(500);
    expect(await decide(app, query)).toMatchObject({ allow: false, reason: 'not_in_allowlist', source: 'builtin-read-only' });
    expect(await decide(app, { ...query, tool: 'idea_memory_read' })).toMatchObject({ allow: true, source: 'builtin-read-only' });
    const listed = (await call(app, 'GET', '/projects/demo/ephemeral-policies')).json<{ policies: unknown[] }>();
    expect(listed.policies).toEqual([]);
  });

  it('expires after ttlSeconds even when the wall clock is set back meanwhile (NTP, a resumed VM)', async (t) => {
    const realNow = Date.now.bind(Date);
    let offset = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() - offset);
    t.onTestFinished(() => {
      vi.restoreAllMocks();
    });
    const { app } = await buildTestApp(t, { demo: {} });
    await register(app, { allowedTools: ['idea_memory_write'], ttlSeconds: 1 });
    const query = { project: 'demo', requester: TA, tool: 'idea_memory_write' };
    expect(await decide(app, query)).toMatchObject({ allow: true, source: 'ephemeral' });
    offset = 3_600_000;
    const started = performance.now();
    await waitFor(async () => !(await decide(app, query)).allow, 'ephemeral policy expiry', 4_000, 25);
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(await decide(app, query)).toMatchObject({ allow: false, reason: 'not_in_allowlist', source: 'builtin-read-only' });
  });

  it('refuses a requester that is not a ticket-assistant of that project with 400 invalid_requester', async (t) => {
    const { app } = await buildTestApp(t, { demo: {}, other: {} });
    for (const requester of ['DevFrontend', 'ticket-assistant:other:82', 'mcp', 'ticket-assistant:demo']) {
      const response = await call(app, 'PUT', ephemeralUrl('demo', requester), {
        body: { allowedTools: ['idea_memory_write'] },
        auth: true,
      });
      expect(response.statusCode, requester).toBe(400);
      expect(errorCode(response), requester).toBe('invalid_requester');
    }
    // Nothing registered: DevFrontend still cannot write.
    expect(await decide(app, { project: 'demo', requester: 'DevFrontend', tool: 'idea_memory_write' })).toMatchObject({ allow: false });
    expect((await call(app, 'GET', '/projects/demo/ephemeral-policies')).json<{ policies: unknown[] }>().policies).toEqual([]);
  });

  it('validates the body: unknown tools, ttl above 86400, extra fields', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    const badTools = await call(app, 'PUT', ephemeralUrl('demo', TA), { body: { allowedTools: ['idea_teleport'] }, auth: true });
    expect(badTools.statusCode).toBe(400);
    expect(errorCode(badTools)).toBe('invalid_tools');
    for (const body of [
      { allowedTools: [], ttlSeconds: 86_401 },
      { allowedTools: [], ttlSeconds: 0 },
      { allowedTools: [], extra: true },
      { allowedTools: 'idea_memory_read' },
    ]) {
      const response = await call(app, 'PUT', ephemeralUrl('demo', TA), { body, auth: true });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(errorCode(response)).toBe('invalid_request');
    }
    expect((await call(app, 'GET', '/projects/demo/ephemeral-policies')).json<{ policies: unknown[] }>().policies).toEqual([]);
  });

  it('answers 404 unknown_project for an unknown project', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    const response = await call(app, 'PUT', ephemeralUrl('nope', 'ticket-assistant:nope:1'), { body: { allowedTools: [] }, auth: true });
    expect(response.statusCode).toBe(404);
    expect(errorCode(response)).toBe('unknown_project');
    const list = await call(app, 'GET', '/projects/nope/ephemeral-policies');
    expect(list.statusCode).toBe(404);
    expect(errorCode(list)).toBe('unknown_project');
  });

  it('is still denied with policy_invalid when the project file is invalid', async (t) => {
    const { app } = await buildTestApp(t, { demo: { policy: '{oops' } });
    await call(app, 'PUT', ephemeralUrl('demo', TA), { body: { allowedTools: ['idea_memory_write'] }, auth: true });
    expect(await decide(app, { project: 'demo', requester: TA, tool: 'idea_memory_write' })).toMatchObject({
      allow: false,
      reason: 'policy_invalid',
    });
  });
});
