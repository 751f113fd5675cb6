/** docs/api.md#inspection: effective policy of a requester, and recent decisions. */
import { describe, expect, it } from 'vitest';
import type { EffectivePolicy, RecentDecision } from '../../schemas/index.js';
import { buildTestApp, call, decide, ephemeralUrl, errorCode } from '../support/app.js';
import { policyDoc } from '../support/files.js';
import { ALL_TOOLS, READ_TOOLS } from '../support/tools.js';

const effectiveUrl = (project: string, requester: string) =>
  `/projects/${encodeURIComponent(project)}/requesters/${encodeURIComponent(requester)}/effective`;

describe('GET /projects/:project/requesters/:requester/effective', () => {
  it('resolves like /decide: override, default, anonymous, ticket-assistant with an ephemeral policy', async (t) => {
    const projectDefault = [...READ_TOOLS, 'idea_memory_write'];
    const { app } = await buildTestApp(t, { demo: { policy: policyDoc(projectDefault, { QA: ['idea_ask_agent', 'idea_ticket_list'] }) } });
    const get = async (requester: string, rawUrl?: string) => {
      const response = await call(app, 'GET', rawUrl ?? effectiveUrl('demo', requester));
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<EffectivePolicy>();
      // allowed + denied is the whole catalog, both in catalog order.
      expect([...body.allowedTools, ...body.deniedTools].sort()).toEqual([...ALL_TOOLS].sort());
      expect(body.allowedTools).toEqual(ALL_TOOLS.filter((t) => body.allowedTools.includes(t)));
      expect(body.deniedTools).toEqual(ALL_TOOLS.filter((t) => body.deniedTools.includes(t)));
      return body;
    };

    const qa = await get('QA');
    expect(qa).toMatchObject({
      project: 'demo',
      requester: { id: 'QA', kind: 'agent' },
      source: 'agent-override',
      allowedTools: ['idea_ticket_list', 'idea_ask_agent'],
    });
    const main = await get('Main');
    expect(main).toMatchObject({ requester: { id: 'Main', kind: 'agent' }, source: 'project-default', allowedTools: projectDefault });
    const decision = await decide(app, { project: 'demo', requester: 'Main', tool: 'idea_memory_write' });
    expect(main.revision).toBe(decision.revision);
    const anonymous = await get('mcp');
    expect(anonymous).toMatchObject({
      requester: { id: 'mcp', kind: 'anonymous' },
      source: 'builtin-read-only',
      allowedTools: [...READ_TOOLS],
    });

    const ta = 'ticket-assistant:demo:82';
    const registered = await call(app, 'PUT', ephemeralUrl('demo', ta), {
      body: { allowedTools: ['idea_ticket_update_carnet', 'idea_ticket_read'], boundIssue: '#82' },
      auth: true,
    });
    expect(registered.statusCode).toBeLessThan(300);
    const viaEncoded = await get(ta, '/projects/demo/requesters/ticket-assistant%3Ademo%3A82/effective');
    expect(viaEncoded).toMatchObject({
      requester: { id: ta, kind: 'ticket-assistant' },
      source: 'ephemeral',
      allowedTools: ['idea_ticket_read', 'idea_ticket_update_carnet'],
    });
    const other = await get('ticket-assistant:demo:83');
    expect(other).toMatchObject({ source: 'builtin-read-only', allowedTools: [...READ_TOOLS] });
  });

  it('shows nothing allowed for an invalid policy, and 404 unknown_project for an unknown project', async (t) => {
    const { app } = await buildTestApp(t, { demo: { policy: '{"version": 1,' } });
    const invalid = await call(app, 'GET', effectiveUrl('demo', 'Main'));
    if (invalid.statusCode === 200) {
      expect(invalid.json<EffectivePolicy>().allowedTools).toEqual([]);
    } else {
      expect(invalid.statusCode).toBe(409);
      expect(errorCode(invalid)).toBe('policy_invalid');
    }
    const unknown = await call(app, 'GET', effectiveUrl('nope', 'Main'));
    expect(unknown.statusCode).toBe(404);
    expect(errorCode(unknown)).toBe('unknown_project');
  });
});

describe('GET /projects/:project/decisions', () => {
  it('lists recent decisions newest first, filters allow=false and honours limit', async (t) => {
    const { app } = await buildTestApp(t, { demo: {}, other: {} });
    const made = [];
    for (const [requester, tool] of [
      ['Main', 'idea_memory_read'],
      ['Main', 'idea_memory_write'],
      ['QA', 'idea_ticket_list'],
      ['mcp', 'idea_ask_agent'],
      ['QA', 'idea_teleport'],
    ] as const) {
      made.push(await decide(app, { project: 'demo', requester, tool }));
    }
    await decide(app, { project: 'other', requester: 'Main', tool: 'idea_memory_write' });

    const all = await call(app, 'GET', '/projects/demo/decisions');
    expect(all.statusCode).toBe(200);
    const decisions = all.json<{ decisions: RecentDecision[] }>().decisions;
    expect(decisions.map((d) => d.decisionId)).toEqual(made.map((d) => d.decisionId).reverse());
    expect(decisions[0]).toMatchObject({ requester: 'QA', tool: 'idea_teleport', allow: false, reason: 'unknown_tool' });
    expect(decisions[1]).toMatchObject({
      requester: 'mcp',
      tool: 'idea_ask_agent',
      allow: false,
      reason: 'not_in_allowlist',
      source: 'builtin-read-only',
    });
    for (const entry of decisions) {
      expect(Number.isNaN(Date.parse(entry.at))).toBe(false);
      expect(Object.keys(entry).sort()).toEqual(['allow', 'at', 'decisionId', 'reason', 'requester', 'source', 'tool']);
    }

    const denied = (await call(app, 'GET', '/projects/demo/decisions?allow=false')).json<{ decisions: RecentDecision[] }>().decisions;
    expect(denied.map((d) => d.decisionId)).toEqual(
      made
        .filter((d) => !d.allow)
        .map((d) => d.decisionId)
        .reverse(),
    );
    const allowed = (await call(app, 'GET', '/projects/demo/decisions?allow=true')).json<{ decisions: RecentDecision[] }>().decisions;
    expect(allowed.map((d) => d.decisionId)).toEqual(
      made
        .filter((d) => d.allow)
        .map((d) => d.decisionId)
        .reverse(),
    );
    const limited = (await call(app, 'GET', '/projects/demo/decisions?allow=false&limit=2')).json<{ decisions: RecentDecision[] }>()
      .decisions;
    expect(limited.map((d) => d.decisionId)).toEqual(denied.slice(0, 2).map((d) => d.decisionId));

    for (const query of ['limit=0', 'limit=abc', 'allow=maybe', 'limit=1001']) {
      const response = await call(app, 'GET', `/projects/demo/decisions?${query}`);
      expect(response.statusCode, query).toBe(400);
      expect(errorCode(response)).toBe('invalid_request');
    }
    const unknown = await call(app, 'GET', '/projects/nope/decisions');
    expect(unknown.statusCode).toBe(404);
    expect(errorCode(unknown)).toBe('unknown_project');
  });

  it('keeps at least the last 1,000 decisions of a project', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} });
    const query = { project: 'demo', requester: 'Main', tool: 'idea_memory_read' };
    const ids: string[] = [];
    for (let round = 0; round < 11; round += 1) {
      const response = await call(app, 'POST', '/decide/batch', { body: { queries: Array.from({ length: 100 }, () => query) } });
      ids.push(...response.json<{ decisions: { decisionId: string }[] }>().decisions.map((d) => d.decisionId));
    }
    const listed = (await call(app, 'GET', '/projects/demo/decisions?limit=1000')).json<{ decisions: RecentDecision[] }>().decisions;
    expect(listed).toHaveLength(1000);
    expect(listed.map((d) => d.decisionId)).toEqual(ids.slice(-1000).reverse());
  });
});
