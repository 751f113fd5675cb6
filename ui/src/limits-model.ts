/**
 * Usage limits on a tool row (docs/api.md#usage-limits), pure part: the French text a limited row
 * says, « au plus 20 appels par heure », from the target's saved limits in the permissions view.
 */
import type { Limit, PolicyLimits } from '../../schemas/limits.js';
import type { PermissionsView } from '../../schemas/api.js';
import type { TargetKey } from './model.js';

const UNITS = { s: ['seconde', 'secondes'], m: ['minute', 'minutes'], h: ['heure', 'heures'], d: ['jour', 'jours'] } as const;

/** « par heure », « par 10 minutes », « par jour »: the window of a limit in French. */
export function perText(per: string): string {
  const count = Number(per.slice(0, -1));
  const letter = per.at(-1);
  const unit = letter === 'm' || letter === 'h' || letter === 'd' ? UNITS[letter] : UNITS.s;
  return count === 1 ? `par ${unit[0]}` : `par ${count} ${unit[1]}`;
}

/** « au plus 20 appels par heure » (« au plus 1 appel par jour »). */
export function limitText(limit: Limit): string {
  return `au plus ${limit.max} appel${limit.max === 1 ? '' : 's'} ${perText(limit.per)}`;
}

/** The saved limits of the selected target (effective, for an agent that inherits); {} without any. */
export function savedLimits(view: PermissionsView | null, target: TargetKey): Readonly<PolicyLimits> {
  if (view === null) return {};
  if (target.kind === 'default') return view.projectDefault.limits ?? {};
  return view.agents.find((agent) => agent.agentId === target.agentId)?.limits ?? {};
}
