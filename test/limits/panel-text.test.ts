/** docs/api.md#usage-limits: what a limited row of the panel says, in French. */
import { describe, expect, it } from 'vitest';
import { limitText, perText, savedLimits } from '../../ui/src/model/limits-model.js';
import { DENIAL_REASONS } from '../../ui/src/model/denials-model.js';
import type { PermissionsView } from '../../schemas/index.js';

describe('the panel’s words for limits', () => {
  it('says « au plus N appels par … » with the window in French', () => {
    expect(limitText({ max: 20, per: '1h' })).toBe('au plus 20 appels par heure');
    expect(limitText({ max: 5, per: '10m' })).toBe('au plus 5 appels par 10 minutes');
    expect(limitText({ max: 1, per: '1d' })).toBe('au plus 1 appel par jour');
    expect(perText('30s')).toBe('par 30 secondes');
    expect(DENIAL_REASONS.rate_limited).toBe('limite atteinte');
  });

  it('reads the selected target’s limits from the permissions view', () => {
    const view = {
      projectDefault: { limits: { idea_ask_agent: { max: 20, per: '1h' } } },
      agents: [{ agentId: 'QA', limits: { idea_ask_agent: { max: 2, per: '1h' } } }, { agentId: 'Git' }],
    } as unknown as PermissionsView;
    expect(savedLimits(view, { kind: 'default' })).toEqual({ idea_ask_agent: { max: 20, per: '1h' } });
    expect(savedLimits(view, { kind: 'agent', agentId: 'QA' })).toEqual({ idea_ask_agent: { max: 2, per: '1h' } });
    expect(savedLimits(view, { kind: 'agent', agentId: 'Git' })).toEqual({});
  });
});
