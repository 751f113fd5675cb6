/**
 * A call whose arguments are larger than the service's decision body limit (64 KiB) is denied, never
 * allowed undecided, and alone: in a batch, its neighbours are decided as `decide` would decide them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

// QA may read tickets in the demo projects.
const query = (text: string) => ({ project: 'demo', requester: 'QA', tool: 'idea_ticket_read', arguments: { issueRef: '#82', text } });
const large = 'x'.repeat(70 * 1024);

describe('arguments beyond the decision body limit', () => {
  it('decide() allows the small call and denies the large one as too large', async () => {
    expect(await pdp.decider.decide(query('small'))).toMatchObject({ allow: true });
    const refused = await pdp.decider.decide(query(large));
    expect(refused).toMatchObject({ allow: false, reason: 'pdp_rejected' });
    expect(refused.message).toContain('the query is too large');
  });

  it('decideBatch() denies only the query that is too large, and decides queries that fit 64 KiB only together in several batches', async () => {
    const medium = 'y'.repeat(20 * 1024);
    const queries = [query('small'), query(large), query(medium), query(medium), query(medium), query('last')];
    const decisions = await pdp.decider.decideBatch(queries);
    expect(decisions.map((decision) => decision.allow)).toEqual([true, false, true, true, true, true]);
    expect(decisions[1]).toMatchObject({ reason: 'pdp_rejected' });
    expect(decisions[1]?.message).toContain('the query is too large');
  });
});
