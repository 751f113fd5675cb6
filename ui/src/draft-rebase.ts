/**
 * Concurrent changes: what a draft was based on, whether a newer view changed it, and what changed
 * on each side. A draft is re-applied on a newer revision only when the newer view leaves its
 * basis untouched; otherwise the user sees both sides and chooses. Pure, unit-tested.
 */
import type { CatalogResponse, PermissionsView } from '../../schemas/api.js';
import { findAgent, type TargetKey } from './model.js';

/** The part of a view one target's draft depends on. */
export interface TargetBasis {
  /** The target's own state: `null` for an agent without override, else its allowlist (and unknown names). */
  own: { allowed: string[]; unknown: string[] } | null;
  /** The agent exists in the view (declared or with an override). Always true for the default. */
  exists: boolean;
  /** The project default, when the draft was seeded from it (a new override of an inheriting agent). */
  seededFrom: string[] | null;
  /** The effective allowlist the user saw. */
  effective: string[];
}

export function basisOf(view: PermissionsView, target: TargetKey, seededFromDefault: boolean): TargetBasis {
  const seededFrom = seededFromDefault ? [...view.projectDefault.allowedTools] : null;
  if (target.kind === 'default') {
    const own =
      view.projectDefault.mode === 'custom'
        ? { allowed: [...view.projectDefault.allowedTools], unknown: [...view.projectDefault.unknownTools] }
        : null;
    return { own, exists: true, seededFrom, effective: [...view.projectDefault.allowedTools] };
  }
  const agent = findAgent(view, target.agentId);
  const own = agent?.mode === 'override' ? { allowed: [...agent.allowedTools], unknown: [...agent.unknownTools] } : null;
  return { own, exists: agent !== undefined, seededFrom, effective: [...(agent?.allowedTools ?? [])] };
}

/** True when nothing the draft depends on changed between the two bases. */
export function sameBasis(a: TargetBasis, b: TargetBasis): boolean {
  return JSON.stringify([a.own, a.exists, a.seededFrom]) === JSON.stringify([b.own, b.exists, b.seededFrom]);
}

export interface Change {
  added: string[];
  removed: string[];
}

/** Tools added and removed from `before` to `after`, in catalog order. */
export function changeBetween(catalog: CatalogResponse, before: Iterable<string>, after: Iterable<string>): Change {
  const from = new Set(before);
  const to = new Set(after);
  const names = catalog.tools.map((tool) => tool.name);
  return {
    added: names.filter((name) => to.has(name) && !from.has(name)),
    removed: names.filter((name) => from.has(name) && !to.has(name)),
  };
}

/** "+ idea_memory_write ; − idea_ask_agent", or "aucun changement de tools". */
export function changeText(change: Change): string {
  const parts = [...change.added.map((name) => `+ ${name}`), ...change.removed.map((name) => `\u2212 ${name}`)];
  return parts.length === 0 ? 'aucun changement de tools' : parts.join(' ; ');
}

/** What happened to the target's mode elsewhere, in French, or null when its mode is unchanged. */
export function modeChangeText(target: TargetKey, before: TargetBasis, after: TargetBasis): string | null {
  if (target.kind === 'agent' && before.exists && !after.exists) return 'l\u2019agent n\u2019existe plus dans ce projet';
  if ((before.own === null) === (after.own === null)) return null;
  if (target.kind === 'default') return after.own === null ? 'défaut remis en lecture seule' : 'défaut personnalisé créé';
  return after.own === null ? 'override supprimé (l\u2019agent hérite du défaut)' : 'override créé';
}

/** Both sides of a conflict: what the user changed and what changed elsewhere. */
export interface ConflictSides {
  mine: Change;
  theirs: Change;
  theirsMode: string | null;
  /** The project default changed under a new override seeded from it. */
  defaultChanged: Change | null;
}

export function conflictSides(
  catalog: CatalogResponse,
  target: TargetKey,
  before: TargetBasis,
  after: TargetBasis,
  draftAllowed: Iterable<string>,
): ConflictSides {
  const defaultChanged =
    before.seededFrom !== null && after.seededFrom !== null && JSON.stringify(before.seededFrom) !== JSON.stringify(after.seededFrom)
      ? changeBetween(catalog, before.seededFrom, after.seededFrom)
      : null;
  return {
    mine: changeBetween(catalog, before.effective, draftAllowed),
    theirs: changeBetween(catalog, before.effective, after.effective),
    theirsMode: modeChangeText(target, before, after),
    defaultChanged,
  };
}
