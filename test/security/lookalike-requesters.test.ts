/**
 * docs/api.md#resolving-a-decision: a requester that a policy file could not hold as an agent id (a lookalike of an
 * agent) is `invalid_requester` at /decide, never a separate agent given the project default.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, decide, decideBatch, suiteScope, type TestApp } from '../support/app.js';
import { policyDoc } from '../support/files.js';

// The project default gives memory writes; QA's override takes them away.
const suite = suiteScope();
let server: TestApp;
beforeAll(async () => {
  server = await buildTestApp(suite, {
    demo: { policy: policyDoc(['idea_memory_read', 'idea_memory_write', 'idea_ticket_read'], { QA: ['idea_ticket_read'] }) },
  });
});

const LOOKALIKES = [
  ['zero-width space', 'QA\u200b'],
  ['Cyrillic А', 'Q\u0410'],
  ['fullwidth', '\uff31\uff21'],
  ['trailing space', 'QA '],
  ['lone surrogate', 'QA\ud800'],
  ['no-break space', 'Q\u00a0A'],
  ['right-to-left override', '\u202eAQ'],
  ['Greek Α', '\u0391QA'],
] as const;

describe('lookalike requesters at /decide', () => {
  it.each(LOOKALIKES)('denies %s (%j) with invalid_requester, for a write tool and a read tool', async (_name, requester) => {
    const { app } = server;
    for (const tool of ['idea_memory_write', 'idea_memory_read']) {
      const decision = await decide(app, { project: 'demo', requester, tool });
      expect(decision, `${JSON.stringify(requester)} ${tool}`).toMatchObject({
        allow: false,
        reason: 'invalid_requester',
        source: 'none',
        requester: { id: requester, kind: 'invalid' },
      });
    }
  });

  it('answers the same in a batch, and keeps QA itself on its override', async () => {
    const { app } = server;
    const decisions = await decideBatch(app, [
      ...LOOKALIKES.map(([, requester]) => ({ project: 'demo', requester, tool: 'idea_memory_write' })),
      { project: 'demo', requester: 'QA', tool: 'idea_memory_write' },
      { project: 'demo', requester: 'QA', tool: 'idea_ticket_read' },
    ]);
    expect(decisions.slice(0, LOOKALIKES.length).every((decision) => decision.reason === 'invalid_requester')).toBe(true);
    expect(decisions.at(-2)).toMatchObject({ allow: false, source: 'agent-override' });
    expect(decisions.at(-1)).toMatchObject({ allow: true, source: 'agent-override' });
  });

  it('keeps real agent names in one script, accented or not, as agents', async () => {
    const { app } = server;
    for (const requester of ['Qualité', 'Агент', 'Ωμέγα', 'release-2.1', 'Q A']) {
      const decision = await decide(app, { project: 'demo', requester, tool: 'idea_memory_write' });
      expect(decision, requester).toMatchObject({ allow: true, source: 'project-default', requester: { kind: 'agent' } });
    }
  });
});
