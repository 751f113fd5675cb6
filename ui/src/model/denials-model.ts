/**
 * "Refus récents", pure part: which denials belong to the selected target, grouped by tool
 * (newest first), the French reason of each, and which of them a grant could fix.
 */
import type { DecisionReason, PermissionsView, RecentDecision } from '../../../schemas/api.js';
import { parseRequester } from '../../../schemas/requester.js';
import type { TargetKey } from './model.js';

/** The reasons in French, as the panel says them. */
export const DENIAL_REASONS: Readonly<Record<DecisionReason, string>> = {
  allowed: 'autorisé',
  not_in_allowlist: 'pas dans la liste autorisée',
  unknown_tool: 'tool inconnu du catalogue',
  unknown_project: 'projet inconnu',
  policy_invalid: 'fichier de permissions invalide',
  requester_project_mismatch: 'demandeur d\u2019un autre projet',
  issue_out_of_bounds: 'hors du ticket',
  invalid_requester: 'demandeur invalide',
  approval_required: 'en attente d\u2019approbation',
  approval_denied: 'approbation refusée',
  argument_not_allowed: 'hors des conditions de ses arguments',
  invalid_arguments: 'arguments invalides',
  rate_limited: 'limite atteinte',
};

/** Reasons a change of the policy can fix; the others (unknown tool, bad requester…) get no button. */
const FIXABLE: ReadonlySet<DecisionReason> = new Set(['not_in_allowlist', 'approval_required', 'approval_denied']);

export interface DenialGroup {
  tool: string;
  count: number;
  /** ISO time of the newest denial of the group. */
  lastAt: string;
  /** Distinct reasons, newest first. */
  reasons: DecisionReason[];
  /** Distinct requesters, newest first (several only on the project default). */
  requesters: string[];
  /** Every denial of the group had a reason a policy change can fix. */
  fixable: boolean;
  /** The arguments whose condition refused a call of the group (`argument_not_allowed`), newest first. */
  arguments: string[];
}

/**
 * The denials of `target`: an agent's own, or, for the project default, those of agents without
 * an override (the default is what decides for them). Anonymous and ticket-assistant requesters
 * never follow the default and are left out.
 */
export function denialsOf(view: PermissionsView, target: TargetKey, decisions: readonly RecentDecision[]): RecentDecision[] {
  if (target.kind === 'agent') return decisions.filter((entry) => !entry.allow && entry.requester === target.agentId);
  const overrides = new Set(view.agents.filter((agent) => agent.mode === 'override').map((agent) => agent.agentId));
  return decisions.filter((entry) => !entry.allow && !overrides.has(entry.requester) && parseRequester(entry.requester).kind === 'agent');
}

/** Groups denials (newest first) by tool, the group of the newest denial first. */
export function groupDenials(decisions: readonly RecentDecision[]): DenialGroup[] {
  const groups = new Map<string, DenialGroup>();
  for (const entry of decisions) {
    const group = groups.get(entry.tool);
    if (group === undefined) {
      groups.set(entry.tool, {
        tool: entry.tool,
        count: 1,
        lastAt: entry.at,
        reasons: [entry.reason],
        requesters: [entry.requester],
        fixable: FIXABLE.has(entry.reason),
        arguments: entry.argument === undefined ? [] : [entry.argument],
      });
      continue;
    }
    if (entry.argument !== undefined && !group.arguments.includes(entry.argument)) group.arguments.push(entry.argument);
    group.count += 1;
    if (!group.reasons.includes(entry.reason)) group.reasons.push(entry.reason);
    if (!group.requesters.includes(entry.requester)) group.requesters.push(entry.requester);
    if (!FIXABLE.has(entry.reason)) group.fixable = false;
  }
  return [...groups.values()];
}

/** "à l'instant", "il y a 42 s", "il y a 3 min", "il y a 2 h", "il y a 3 j". */
export function agoText(iso: string, now: number = Date.now()): string {
  const seconds = Math.floor((now - Date.parse(iso)) / 1000);
  if (Number.isNaN(seconds)) return iso;
  if (seconds < 5) return 'à l\u2019instant';
  if (seconds < 60) return `il y a ${seconds} s`;
  if (seconds < 3600) return `il y a ${Math.floor(seconds / 60)} min`;
  if (seconds < 86_400) return `il y a ${Math.floor(seconds / 3600)} h`;
  return `il y a ${Math.floor(seconds / 86_400)} j`;
}

/** "1 refus", "4 refus" (invariable), spoken with the tool. */
export function countText(count: number): string {
  return `${count} refus`;
}

/**
 * The reasons of a group in French; a refusal by a condition names its argument(s): « hors des
 * conditions de ses arguments (argument agentId) ».
 */
export function reasonsText(group: Pick<DenialGroup, 'reasons' | 'arguments'>): string {
  return group.reasons
    .map((reason) => {
      const text = DENIAL_REASONS[reason];
      if (reason !== 'argument_not_allowed' || group.arguments.length === 0) return text;
      const names = group.arguments.join(', ');
      return `${text} (${group.arguments.length > 1 ? 'arguments' : 'argument'} ${names})`;
    })
    .join(', ');
}
