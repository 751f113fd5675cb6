import { describe, expect, it } from 'vitest';
import { RecentDecisions } from '../../server/decisions/recent-decisions.js';

describe('recent decisions ring', () => {
  it('keeps the last entries, newest first, with the right names after many distinct requesters', () => {
    const ring = new RecentDecisions((sequence) => `id-${sequence}`, 100);
    for (let sequence = 1; sequence <= 5000; sequence++) {
      ring.record('demo', {
        sequence,
        requester: `agent-${sequence}`,
        tool: sequence % 2 === 0 ? 'idea_memory_write' : `unknown_${sequence}`,
        allow: sequence % 3 === 0,
        reason: sequence % 3 === 0 ? 'allowed' : 'not_in_allowlist',
        source: 'project-default',
      });
    }
    const all = ring.query('demo', undefined, 1000);
    expect(all).toHaveLength(100);
    expect(all[0]).toMatchObject({
      decisionId: 'id-5000',
      requester: 'agent-5000',
      tool: 'idea_memory_write',
      allow: false,
      reason: 'not_in_allowlist',
      source: 'project-default',
    });
    expect(all[99]).toMatchObject({ decisionId: 'id-4901', requester: 'agent-4901', tool: 'unknown_4901' });
    const allowed = ring.query('demo', true, 5);
    expect(allowed.map((entry) => entry.decisionId)).toEqual(['id-4998', 'id-4995', 'id-4992', 'id-4989', 'id-4986']);
    expect(allowed.every((entry) => entry.reason === 'allowed' && entry.allow)).toBe(true);
    expect(ring.query('other', undefined, 10)).toEqual([]);
  });
});
