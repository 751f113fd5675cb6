/**
 * "Accord rapide": the few grants a user gives most often, one checkbox each, for the selected
 * agent. A quick grant is a presentational bundle of catalog tools; whether a tool is a read or a
 * write tool still comes from the catalog, and a bundle shrinks to the tools the catalog has.
 */
import type { CatalogResponse } from '../../schemas/api.js';

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

export type QuickGrantState = 'all' | 'some' | 'none';

export function quickGrantState(grant: QuickGrant, allowed: ReadonlySet<string>): QuickGrantState {
  const count = grant.tools.filter((name) => allowed.has(name)).length;
  return count === grant.tools.length ? 'all' : count === 0 ? 'none' : 'some';
}

/** The text beside a quick grant: "Accordé", "Partiel : 1 sur 4" or "Non accordé". */
export function quickGrantText(grant: QuickGrant, allowed: ReadonlySet<string>): string {
  const count = grant.tools.filter((name) => allowed.has(name)).length;
  const state = quickGrantState(grant, allowed);
  return state === 'all' ? 'Accordé' : state === 'none' ? 'Non accordé' : `Partiel : ${count} sur ${grant.tools.length}`;
}
