/** "Refus récents", pure part: whose denials a target shows, grouping by tool, French reasons and times. */
import { describe, expect, it } from 'vitest';
import type { PermissionsView, RecentDecision } from '../../schemas/api.js';
import { DENIAL_REASONS, agoText, denialsOf, groupDenials } from '../../ui/src/model/denials-model.js';
import { DECISION_REASONS } from '../../schemas/api.js';

const decision = (requester: string, tool: string, reason: RecentDecision['reason'], at: string): RecentDecision => ({
  decisionId: `${requester}-${tool}-${at}`,
  at,
  requester,
  tool,
  allow: false,
  reason,
  source: 'project-default',
});

const view = {
  agents: [
    { agentId: 'QA', mode: 'inherit' },
    { agentId: 'DevFrontend', mode: 'override' },
  ],
} as unknown as PermissionsView;

describe('Refus récents', () => {
  const decisions = [
    decision('QA', 'idea_memory_write', 'not_in_allowlist', '2026-12-01T10:05:00Z'),
    decision('DevFrontend', 'idea_ask_agent', 'not_in_allowlist', '2026-12-01T10:04:00Z'),
    decision('QA', 'idea_nope', 'unknown_tool', '2026-12-01T10:03:00Z'),
    decision('QA', 'idea_memory_write', 'approval_denied', '2026-12-01T10:02:00Z'),
    decision('', 'idea_memory_write', 'not_in_allowlist', '2026-12-01T10:01:00Z'),
    decision('Newcomer', 'idea_ticket_create', 'not_in_allowlist', '2026-12-01T10:00:00Z'),
  ];

  it('shows an agent its own denials, and the project default those of agents without an override', () => {
    expect(denialsOf(view, { kind: 'agent', agentId: 'QA' }, decisions).map((entry) => entry.tool)).toEqual([
      'idea_memory_write',
      'idea_nope',
      'idea_memory_write',
    ]);
    // DevFrontend has an override and the anonymous requester never follows the default; an undeclared agent does.
    expect(denialsOf(view, { kind: 'default' }, decisions).map((entry) => entry.requester)).toEqual(['QA', 'QA', 'QA', 'Newcomer']);
  });

  it('groups by tool, newest first, counts, and offers a fix only when a policy change can fix every denial', () => {
    const groups = groupDenials(denialsOf(view, { kind: 'agent', agentId: 'QA' }, decisions));
    expect(groups).toEqual([
      {
        tool: 'idea_memory_write',
        count: 2,
        lastAt: '2026-12-01T10:05:00Z',
        reasons: ['not_in_allowlist', 'approval_denied'],
        requesters: ['QA'],
        fixable: true,
        arguments: [],
      },
      {
        tool: 'idea_nope',
        count: 1,
        lastAt: '2026-12-01T10:03:00Z',
        reasons: ['unknown_tool'],
        requesters: ['QA'],
        fixable: false,
        arguments: [],
      },
    ]);
    expect(groupDenials([decision('QA', 'idea_ticket_update', 'issue_out_of_bounds', '2026-12-01T10:00:00Z')])[0]?.fixable).toBe(false);
  });

  it('says every reason in French, and the time as « il y a … »', () => {
    for (const reason of DECISION_REASONS) expect(DENIAL_REASONS[reason]).toMatch(/^[a-zà-ÿ’' ]+$/);
    expect(DENIAL_REASONS.not_in_allowlist).toBe('pas dans la liste autorisée');
    expect(DENIAL_REASONS.policy_invalid).toBe('fichier de permissions invalide');
    expect(DENIAL_REASONS.issue_out_of_bounds).toBe('hors du ticket');
    const now = Date.parse('2026-12-01T10:05:00Z');
    expect(agoText('2026-12-01T10:04:58Z', now)).toBe('à l\u2019instant');
    expect(agoText('2026-12-01T10:04:18Z', now)).toBe('il y a 42 s');
    expect(agoText('2026-12-01T10:02:00Z', now)).toBe('il y a 3 min');
    expect(agoText('2026-12-01T07:05:00Z', now)).toBe('il y a 3 h');
  });
});
