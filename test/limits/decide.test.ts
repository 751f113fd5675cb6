/** docs/api.md#usage-limits: counting allowed calls per project × requester × tool over a sliding window, through the real routes. */
import { describe, expect, it } from 'vitest';
import type { Decision, DecideQuery, EffectivePolicy } from '../../schemas/index.js';
import { TestClock } from '../support/clocked-approvals.js';
import { buildTestApp, call, decide, decideBatch, defaultUrl, startTestServer, DECIDE_TOKEN } from '../support/app.js';
import { READ_TOOLS } from '../support/tools.js';

const ASK = { project: 'demo', requester: 'QA', tool: 'idea_ask_agent', arguments: { agentId: 'DevFrontend' } } as const;

function policy(limit: { max: number; per: string }, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    version: 1,
    projectDefault: { allowedTools: [...READ_TOOLS, 'idea_ask_agent'], limits: { idea_ask_agent: limit }, ...extra },
  });
}

async function outcomes(app: Parameters<typeof decide>[0], query: DecideQuery, times: number): Promise<string[]> {
  const reasons: string[] = [];
  for (let index = 0; index < times; index++) reasons.push((await decide(app, query)).reason);
  return reasons;
}

describe('a limited tool', () => {
  it('allows max calls in the window, then refuses with rate_limited, retryAfterSeconds and a message naming tool, agent and limit', async (t) => {
    const clock = new TestClock();
    const server = await buildTestApp(t, { demo: { policy: policy({ max: 3, per: '1h' }) } }, { clock });
    for (let minute = 0; minute < 3; minute++) {
      expect((await decide(server.app, ASK)).reason).toBe('allowed');
      clock.advance(60_000);
    }
    clock.advance(7 * 60_000);
    const refused = await decide(server.app, ASK);
    expect(refused).toMatchObject({ allow: false, reason: 'rate_limited', source: 'project-default', retryAfterSeconds: 3000 });
    expect(refused.message).toBe(
      'Tool idea_ask_agent is denied for agent QA in project demo (policy: project-default): usage limit reached, at most 3 calls per 1h; retry in 3000 s. Raise the limit in Permissions > Tools MCP IdeA.',
    );
    // Sliding: the first call leaves the window an hour after it was made, and one call is allowed again, not two.
    clock.advance(50 * 60_000 - 1);
    expect((await decide(server.app, ASK)).reason).toBe('rate_limited');
    clock.advance(1);
    expect(await outcomes(server.app, ASK, 2)).toEqual(['allowed', 'rate_limited']);
    // The ring keeps the refusals.
    const recent = (await call(server.app, 'GET', '/projects/demo/decisions?allow=false')).json<{ decisions: { reason: string }[] }>();
    expect(recent.decisions.map((one) => one.reason)).toEqual(['rate_limited', 'rate_limited', 'rate_limited']);
  });

  it('counts per requester and per tool, and only allowed calls (a call outside a condition counts nothing)', async (t) => {
    const conditioned = policy({ max: 2, per: '1m' }, { conditions: { idea_ask_agent: { agentId: { in: ['DevFrontend'] } } } });
    const server = await buildTestApp(t, { demo: { policy: conditioned } });
    const outside = { ...ASK, arguments: { agentId: 'Main' } };
    expect(await outcomes(server.app, outside, 5)).toEqual(Array(5).fill('argument_not_allowed'));
    expect(await outcomes(server.app, ASK, 3)).toEqual(['allowed', 'allowed', 'rate_limited']);
    expect(await outcomes(server.app, { ...ASK, requester: 'Git' }, 2)).toEqual(['allowed', 'allowed']);
    // Another tool of the same agent is not limited, and refused calls of it never count.
    expect(await outcomes(server.app, { ...ASK, tool: 'idea_ticket_read', arguments: {} }, 5)).toEqual(Array(5).fill('allowed'));
    expect(await outcomes(server.app, outside, 1)).toEqual(['argument_not_allowed']);
  });

  it('is never lifted by a grant, a once answer or an approval, and a call on ask beyond it opens no request', async (t) => {
    const document = JSON.stringify({
      version: 1,
      projectDefault: { allowedTools: [...READ_TOOLS], askTools: ['idea_ask_agent'], limits: { idea_ask_agent: { max: 2, per: '1h' } } },
    });
    const server = await buildTestApp(t, { demo: { policy: document } });
    const asked = await decide(server.app, ASK);
    expect(asked.reason).toBe('approval_required');
    const once = await call(server.app, 'POST', `/projects/demo/approvals/${asked.approval?.id ?? ''}`, {
      auth: true,
      body: { answer: 'once' },
    });
    expect(once.statusCode).toBe(200);
    expect(await decide(server.app, ASK)).toMatchObject({ allow: true, source: 'approval' });
    const grant = await call(server.app, 'POST', '/projects/demo/grants', {
      auth: true,
      body: { requester: 'QA', tools: ['idea_ask_agent'], ttlSeconds: 3600 },
    });
    expect(grant.statusCode).toBe(200);
    expect(await decide(server.app, ASK)).toMatchObject({ allow: true, source: 'grant' });
    expect(await decide(server.app, ASK)).toMatchObject({ allow: false, reason: 'rate_limited' });
    // Git, on ask too, has its own window: asked, not refused; QA's full window opened no request.
    expect((await decide(server.app, { ...ASK, requester: 'Git' })).reason).toBe('approval_required');
    const pending = (await call(server.app, 'GET', '/projects/demo/approvals?status=pending')).json<{
      approvals: { requester: string }[];
    }>();
    expect(pending.approvals.map((one) => one.requester)).toEqual(['Git']);
  });

  it('a /decide/batch counts each allowed query in order', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policy({ max: 3, per: '1h' }) } });
    const queries = [ASK, { ...ASK, tool: 'idea_ticket_read' }, ASK, ASK, ASK, { ...ASK, requester: 'Git' }];
    expect((await decideBatch(server.app, queries)).map((one) => one.reason)).toEqual([
      'allowed',
      'allowed',
      'allowed',
      'allowed',
      'rate_limited',
      'allowed',
    ]);
  });

  it('a lower cap applies to the calls already counted; GET .../effective shows the calls left', async (t) => {
    const clock = new TestClock();
    const server = await buildTestApp(t, { demo: { policy: policy({ max: 5, per: '1h' }) } }, { clock });
    expect(await outcomes(server.app, ASK, 3)).toEqual(['allowed', 'allowed', 'allowed']);
    const effective = (await call(server.app, 'GET', '/projects/demo/requesters/QA/effective')).json<EffectivePolicy>();
    expect(effective.limits).toEqual([{ tool: 'idea_ask_agent', max: 5, per: '1h', remaining: 2 }]);
    const lowered = await call(server.app, 'PUT', defaultUrl('demo'), {
      auth: true,
      body: { allowedTools: [...READ_TOOLS, 'idea_ask_agent'], limits: { idea_ask_agent: { max: 2, per: '1h' } } },
    });
    expect(lowered.statusCode).toBe(200);
    clock.advance(60_000);
    expect(await decide(server.app, ASK)).toMatchObject({ reason: 'rate_limited', retryAfterSeconds: 3540 });
    const after = (await call(server.app, 'GET', '/projects/demo/requesters/QA/effective')).json<EffectivePolicy>();
    expect(after.limits).toEqual([{ tool: 'idea_ask_agent', max: 2, per: '1h', remaining: 0, retryAfterSeconds: 3540 }]);
    // Git has counted nothing; an agent without limits gets no `limits` field.
    expect((await call(server.app, 'GET', '/projects/demo/requesters/Git/effective')).json<EffectivePolicy>().limits).toEqual([
      { tool: 'idea_ask_agent', max: 2, per: '1h', remaining: 2 },
    ]);
    expect((await call(server.app, 'GET', '/projects/demo/requesters/mcp/effective')).json<EffectivePolicy>().limits).toBeUndefined();
  });
});

describe('concurrency', () => {
  it('50 parallel /decide calls over HTTP against a cap of 10 allow exactly 10', async (t) => {
    const server = await startTestServer(t, { demo: { policy: policy({ max: 10, per: '1h' }) } }, { decideToken: DECIDE_TOKEN });
    const one = async (): Promise<Decision> => {
      const response = await fetch(`${server.baseUrl}/decide`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${DECIDE_TOKEN}` },
        body: JSON.stringify(ASK),
      });
      return (await response.json()) as Decision;
    };
    const decisions = await Promise.all(Array.from({ length: 50 }, one));
    expect(decisions.filter((decision) => decision.allow)).toHaveLength(10);
    expect(decisions.filter((decision) => decision.reason === 'rate_limited')).toHaveLength(40);
  });
});
