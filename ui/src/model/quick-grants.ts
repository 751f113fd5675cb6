/**
 * "Accord rapide": the few grants a user gives most often, one checkbox each, for the selected
 * agent. A quick grant is a presentational bundle of catalog tools; whether a tool is a read or a
 * write tool still comes from the catalog, and a bundle shrinks to the tools the catalog has.
 */
import type { CatalogResponse } from '../../../schemas/api.js';
import { toolState, type ToolState } from './model.js';

export interface QuickGrant {
  id: string;
  label: string;
  tools: string[];
}

const QUICK_GRANTS: readonly QuickGrant[] = [
  { id: 'delegate', label: 'Déléguer à un agent', tools: ['idea_ask_agent'] },
  {
    id: 'tickets',
    label: 'Modifier les tickets',
    tools: ['idea_ticket_update', 'idea_ticket_update_status', 'idea_ticket_update_priority', 'idea_ticket_update_carnet'],
  },
  { id: 'memory', label: 'Écrire la mémoire', tools: ['idea_memory_write'] },
];

/** The quick grants whose tools are in the catalog (an empty bundle is not offered). */
export function quickGrants(catalog: CatalogResponse): QuickGrant[] {
  const known = new Set(catalog.tools.map((tool) => tool.name));
  return QUICK_GRANTS.map((grant) => ({ ...grant, tools: grant.tools.filter((name) => known.has(name)) })).filter(
    (grant) => grant.tools.length > 0,
  );
}

/** The state of a whole bundle: one state shared by all its tools, or `mixed`. */
export type QuickGrantState = ToolState | 'mixed';

export function quickGrantState(grant: QuickGrant, allowed: ReadonlySet<string>, ask: ReadonlySet<string> = new Set()): QuickGrantState {
  const states = new Set(grant.tools.map((name) => toolState(name, allowed, ask)));
  const [only] = states;
  return states.size === 1 && only !== undefined ? only : 'mixed';
}

/** The text beside a quick grant: "Accordé", "Sur demande", "Non accordé" or "Partiel : 1 sur 4" (", 2 sur demande"). */
export function quickGrantText(grant: QuickGrant, allowed: ReadonlySet<string>, ask: ReadonlySet<string> = new Set()): string {
  const state = quickGrantState(grant, allowed, ask);
  if (state === 'allow') return 'Accordé';
  if (state === 'ask') return 'Sur demande';
  if (state === 'deny') return 'Non accordé';
  const count = grant.tools.filter((name) => allowed.has(name)).length;
  const asked = grant.tools.filter((name) => !allowed.has(name) && ask.has(name)).length;
  return `Partiel : ${count} sur ${grant.tools.length}${asked > 0 ? `, ${asked} sur demande` : ''}`;
}
