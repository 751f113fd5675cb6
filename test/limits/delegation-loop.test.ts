/**
 * docs/api.md#usage-limits, as a user meets it: two agents allowed to delegate to each other with
 * idea_ask_agent, each capped, ping-pong through IdeA's MCP tools guarded by the real guard against
 * the real service; the loop stops at the cap and the model reads why.
 */
import { describe, expect, it } from 'vitest';
import { PdpClient } from '../../client/index.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { startTestServer } from '../support/app.js';
import { READ_TOOLS } from '../support/tools.js';

const policyFor = (other: string) => ({
  allowedTools: [...READ_TOOLS, 'idea_ask_agent'],
  conditions: { idea_ask_agent: { agentId: { in: [other] } } },
  limits: { idea_ask_agent: { max: 3, per: '1h' } },
});

describe('the delegation loop', () => {
  it('two agents asking each other stop at their caps, each refusal telling the model the limit', async (t) => {
    const document = {
      version: 1,
      agents: [
        { agentId: 'Architect', policy: policyFor('DevFrontend') },
        { agentId: 'DevFrontend', policy: policyFor('Architect') },
      ],
    };
    const service = await startTestServer(t, { demo: { policy: JSON.stringify(document) } });
    const client = new PdpClient({ baseUrl: service.baseUrl, timeoutMs: 2000 });
    t.onTestFinished(() => client.close());
    const architect = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'Architect' });
    const dev = await connectGuardedIdeaServer({ client, project: 'demo', requester: 'DevFrontend' });
    t.onTestFinished(async () => {
      await architect.close();
      await dev.close();
    });

    const turns: { who: string; isError: boolean; text: string }[] = [];
    for (let turn = 0; turn < 5; turn++) {
      turns.push({ who: 'Architect', ...(await architect.call('idea_ask_agent', { agentId: 'DevFrontend', prompt: `turn ${turn}` })) });
      turns.push({ who: 'DevFrontend', ...(await dev.call('idea_ask_agent', { agentId: 'Architect', prompt: `turn ${turn}` })) });
    }
    expect(turns.map((one) => one.isError)).toEqual([false, false, false, false, false, false, true, true, true, true]);
    // Only the allowed delegations ran.
    expect(architect.recorder.runs).toHaveLength(3);
    expect(dev.recorder.runs).toHaveLength(3);
    const refusal = turns[6]?.text ?? '';
    expect(refusal).toContain('Tool idea_ask_agent is denied for agent Architect in project demo');
    expect(refusal).toContain('at most 3 calls per 1h');
    // A delegation outside the condition is refused for it, and is not what stopped the loop.
    expect((await dev.call('idea_ask_agent', { agentId: 'QA' })).text).toContain('argument agentId');
  });
});
