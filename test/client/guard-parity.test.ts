/**
 * Parity of the two guards, real service: the same call through the MCP guard and the OpenAI guard
 * gets the same decision and the same refusal text, with the default wording, with the host's
 * `formatRefusal`, for the SDK's own denials (rejected, unreachable, invalid requester), and for
 * approvals (asked, waited for, granted, denied).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  PdpClient,
  type ApprovalWaitOptions,
  type ClientDecision,
  type DecideQuery,
  type FormatRefusal,
  type GuardClient,
} from '../../client/index.js';
import { guardOpenAiToolCalls } from '../../client/openai.js';
import { closedPortUrl } from './fake-pdp.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
  await pdp.admin.putEphemeral('demo', 'ticket-assistant:demo:82', { allowedTools: ['idea_ticket_update'], boundIssue: '#82' });
});

interface Call {
  project: string;
  requester: string;
  tool: string;
  args: Record<string, unknown>;
}

const cases: Call[] = [
  { project: 'demo', requester: 'QA', tool: 'idea_memory_write', args: { text: 'x' } },
  { project: 'demo', requester: 'QA', tool: 'idea_ticket_read', args: { issueRef: '#1' } },
  { project: 'demo', requester: 'QA', tool: 'idea_does_not_exist', args: {} },
  { project: 'demo', requester: 'mcp', tool: 'idea_ticket_create', args: {} },
  { project: 'demo', requester: 'DevFrontend', tool: 'idea_ticket_update_carnet', args: { issueRef: '#9' } },
  { project: 'demo', requester: 'ticket-assistant:demo:82', tool: 'idea_ticket_update', args: { issueRef: '#83' } },
  { project: 'demo', requester: 'ticket-assistant:other:82', tool: 'idea_ticket_read', args: {} },
  { project: 'demo', requester: 'QA:x', tool: 'idea_ticket_read', args: {} },
  { project: 'ghost', requester: 'QA', tool: 'idea_ticket_read', args: {} },
];

const strip = (decision: ClientDecision | undefined) => {
  const { decisionId: _ignored, ...rest } = decision ?? ({} as ClientDecision);
  return rest;
};

/** Runs `call` through both guards; asserts they agree; answers the decision and the text. */
async function throughBothGuards(client: GuardClient, call: Call, formatRefusal?: FormatRefusal, approval?: ApprovalWaitOptions) {
  let mcpDecision: ClientDecision | undefined;
  const mcp = await connectGuardedIdeaServer({
    client,
    project: call.project,
    requester: call.requester,
    formatRefusal,
    approval,
    onDecision: (decision) => (mcpDecision = decision),
  });
  const mcpResult = await mcp.call(call.tool, call.args);
  await mcp.close();

  const { outputs, decisions } = await guardOpenAiToolCalls(
    [{ id: 'c', type: 'function', function: { name: call.tool, arguments: JSON.stringify(call.args) } }],
    { client, project: call.project, requester: call.requester, formatRefusal, approval, invoke: (name) => `${name} done` },
  );
  expect(strip(decisions[0])).toEqual(strip(mcpDecision));
  expect(mcpResult.isError).toBe(!mcpDecision?.allow);
  // A refusal is the same text; an allowed call gets the identical "<tool> done" of both stubs.
  expect(outputs[0]?.content).toBe(mcpResult.text);
  return { decision: mcpDecision as ClientDecision, text: mcpResult.text };
}

describe('parity of the two guards, real service', () => {
  it('gives the same decision and the same refusal text for the same call', async () => {
    const reasons: string[] = [];
    for (const call of cases) {
      const { decision, text } = await throughBothGuards(pdp.decider, call);
      if (!decision.allow) expect(text).toBe(decision.message);
      reasons.push(decision.reason);
    }
    // The cases cover allows and every kind of denial the service gives.
    expect(reasons).toEqual([
      'not_in_allowlist',
      'allowed',
      'unknown_tool',
      'not_in_allowlist',
      'allowed',
      'issue_out_of_bounds',
      'requester_project_mismatch',
      'invalid_requester',
      'unknown_project',
    ]);
  });

  it('words every refusal with the same formatRefusal in both guards, and leaves allowed calls alone', async () => {
    const formatRefusal: FormatRefusal = (decision) => `[${decision.reason}] ${decision.tool.name} is not available to you.`;
    for (const call of cases) {
      const { decision, text } = await throughBothGuards(pdp.decider, call, formatRefusal);
      expect(text).toBe(decision.allow ? `${call.tool} done` : formatRefusal(decision));
    }
  });

  it('falls back to the decision message when formatRefusal throws or returns no text', async () => {
    const call = cases[0] as Call;
    for (const broken of [
      () => {
        throw new Error('formatter bug');
      },
      () => '',
      () => undefined as unknown as string,
    ]) {
      const { decision, text } = await throughBothGuards(pdp.decider, call, broken);
      expect(decision.allow).toBe(false);
      expect(text).toBe(decision.message);
    }
  });

  it('gives the same local denial in both guards: rejected (wrong token) and unreachable', async () => {
    const wrongToken = new PdpClient({ baseUrl: pdp.url, token: 'not-the-decide-token', timeoutMs: 2000 });
    const nobody = new PdpClient({ baseUrl: await closedPortUrl(), timeoutMs: 2000 });
    try {
      const rejected = await throughBothGuards(wrongToken, cases[1] as Call);
      expect(rejected.decision.reason).toBe('pdp_rejected');
      expect(rejected.text).toBe(
        'Tool idea_ticket_read (agent QA, project demo) denied: policy service rejected the request (401 unauthorized: decide token missing or wrong)',
      );
      const unreachable = await throughBothGuards(nobody, cases[1] as Call);
      expect(unreachable.decision.reason).toBe('pdp_unavailable');
      expect(unreachable.text).toMatch(
        /^Tool idea_ticket_read \(agent QA, project demo\) denied: policy service unreachable \(connection refused/,
      );
    } finally {
      await Promise.all([wrongToken.close(), nobody.close()]);
    }
  });
});

describe('parity of the two guards for the arguments they send', () => {
  it('sends the same whole arguments from both guards, which the service reads', async () => {
    const queries: DecideQuery[] = [];
    const recording: GuardClient = {
      timeoutMs: pdp.decider.timeoutMs,
      effective: (...args) => pdp.decider.effective(...args),
      decide: (query, options) => {
        queries.push(query);
        return pdp.decider.decide(query, options);
      },
      decideBatch: (batch, options) => {
        queries.push(...batch);
        return pdp.decider.decideBatch(batch, options);
      },
    };
    const call: Call = {
      project: 'demo',
      requester: 'DevFrontend',
      tool: 'idea_ticket_update_carnet',
      args: { issueRef: '#9', text: 'note', tags: ['a', 'b'], count: 2, done: false, none: null },
    };
    const { decision } = await throughBothGuards(recording, call);
    expect(decision.allow).toBe(true);
    expect(queries).toHaveLength(2);
    expect(queries[0]).toEqual({ project: 'demo', requester: 'DevFrontend', tool: 'idea_ticket_update_carnet', arguments: call.args });
    expect(queries[1]).toEqual(queries[0]);
  });

  it('refuses an OpenAI arguments string that is not a JSON object with invalid_arguments, without asking the service', async () => {
    const asked: DecideQuery[] = [];
    const client: GuardClient = {
      timeoutMs: 1000,
      effective: (...args) => pdp.decider.effective(...args),
      decide: (query) => {
        asked.push(query);
        return pdp.decider.decide(query);
      },
      decideBatch: (batch) => {
        asked.push(...batch);
        return pdp.decider.decideBatch(batch);
      },
    };
    for (const raw of ['"a string"', '[1]', 'null', '{not json', '42']) {
      const { outputs, decisions } = await guardOpenAiToolCalls(
        [{ id: 'c', type: 'function', function: { name: 'idea_ticket_read', arguments: raw } }],
        {
          client,
          project: 'demo',
          requester: 'QA',
          invoke: () => 'ran',
        },
      );
      expect(decisions[0]?.reason).toBe('invalid_arguments');
      expect(outputs[0]?.content).toMatch(
        /^Tool idea_ticket_read \(agent QA, project demo\) denied: the arguments are not (valid JSON|a JSON object)$/,
      );
    }
    expect(asked).toEqual([]);
  });
});

describe('parity of the two guards for approvals, real service', () => {
  it('refuses a call on ask with the same decision and text, without a wait and after a wait nobody answered', async () => {
    await pdp.admin.putAgent('demo', 'Reviewer', ['idea_ticket_read'], { askTools: ['idea_memory_write'] });
    const call: Call = { project: 'demo', requester: 'Reviewer', tool: 'idea_memory_write', args: { text: 'x' } };
    const now = await throughBothGuards(pdp.decider, call);
    expect(now.decision).toMatchObject({ allow: false, reason: 'approval_required', approval: { status: 'pending' } });
    expect(now.text).toMatch(/approval was requested.*retried once it is granted/);

    const started = performance.now();
    const waited = await throughBothGuards(pdp.decider, call, undefined, { waitMs: 300 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * 290); // each guard waited
    expect(strip(waited.decision)).toEqual(strip(now.decision)); // the same request, reused
    expect(waited.text).toBe(now.text);
  });

  it('runs the call in both guards once the user allowed it, and refuses it in both after a denial', async () => {
    await pdp.admin.putAgent('demo', 'Scribe', ['idea_ticket_read'], { askTools: ['idea_memory_write'] });
    const call: Call = { project: 'demo', requester: 'Scribe', tool: 'idea_memory_write', args: { text: 'x' } };
    const first = await pdp.decider.decide({ project: 'demo', requester: 'Scribe', tool: 'idea_memory_write' });
    await pdp.admin.answerApproval('demo', first.approval?.id ?? '', 'for', 60);
    const allowed = await throughBothGuards(pdp.decider, call, undefined, { waitMs: 5_000 });
    expect(allowed.decision).toMatchObject({ allow: true, source: 'grant' });
    expect(allowed.text).toBe('idea_memory_write done');

    await pdp.admin.putAgent('demo', 'Censor', ['idea_ticket_read'], { askTools: ['idea_memory_write'] });
    const denied = { ...call, requester: 'Censor' };
    const opened = await pdp.decider.decide({ project: 'demo', requester: 'Censor', tool: 'idea_memory_write' });
    await pdp.admin.answerApproval('demo', opened.approval?.id ?? '', 'deny');
    const refused = await throughBothGuards(pdp.decider, denied, undefined, { waitMs: 5_000 });
    expect(refused.decision.reason).toBe('approval_denied');
  });
});
