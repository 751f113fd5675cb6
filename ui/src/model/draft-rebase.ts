/**
 * Concurrent changes: what a draft was based on, whether a newer view changed it, and what changed
 * on each side. A draft is re-applied on a newer revision only when the newer view leaves its
 * basis untouched; otherwise the user sees both sides and chooses. Pure, unit-tested.
 */
import type { CatalogResponse, PermissionsView } from '../../../schemas/api.js';
import type { PolicyConditions } from '../../../schemas/conditions.js';
import { sameConditions } from './conditions-model.js';
import { sameLimits } from './limits-model.js';
import type { PolicyLimits } from '../../../schemas/limits.js';
import { conditionsOf, findAgent, toolState, type TargetKey } from './model.js';

/** The part of a view one target's draft depends on. */
export interface TargetBasis {
  /** The target's own state: `null` for an agent without override, else its lists (and unknown names). */
  own: { allowed: string[]; ask: string[]; conditions?: PolicyConditions; limits?: PolicyLimits; unknown: string[] } | null;
  /** The agent exists in the view (declared or with an override). Always true for the default. */
  exists: boolean;
  /** The project default, when the draft was seeded from it (a new override of an inheriting agent). */
  seededFrom: ToolLists | null;
  /** The effective lists the user saw. */
  effective: ToolLists;
}

/** Allowed and asked tools, as the view lists them, their conditions and usage limits. */
export interface ToolLists {
  allowed: string[];
  ask: string[];
  /** Absent: none. */
  conditions?: PolicyConditions;
  /** Absent: none. */
  limits?: PolicyLimits;
}

export function basisOf(view: PermissionsView, target: TargetKey, seededFromDefault: boolean): TargetBasis {
  const defaults = listsOf(view.projectDefault);
  const seededFrom = seededFromDefault ? defaults : null;
  if (target.kind === 'default') {
    const own = view.projectDefault.mode === 'custom' ? { ...defaults, unknown: [...view.projectDefault.unknownTools] } : null;
    return { own, exists: true, seededFrom, effective: defaults };
  }
  const agent = findAgent(view, target.agentId);
  const lists = agent === undefined ? { allowed: [], ask: [] } : listsOf(agent);
  const own = agent?.mode === 'override' ? { ...lists, unknown: [...agent.unknownTools] } : null;
  return { own, exists: agent !== undefined, seededFrom, effective: lists };
}

function listsOf(entry: {
  allowedTools: readonly string[];
  askTools?: readonly string[] | undefined;
  limits?: PolicyLimits | undefined;
}): ToolLists {
  const conditions = conditionsOf(entry);
  const lists: ToolLists = { allowed: [...entry.allowedTools], ask: [...(entry.askTools ?? [])] };
  if (Object.keys(conditions).length > 0) lists.conditions = conditions;
  if (Object.keys(entry.limits ?? {}).length > 0) lists.limits = { ...entry.limits };
  return lists;
}

/** True when nothing the draft depends on changed between the two bases. */
export function sameBasis(a: TargetBasis, b: TargetBasis): boolean {
  return JSON.stringify([a.own, a.exists, a.seededFrom]) === JSON.stringify([b.own, b.exists, b.seededFrom]);
}

/** The tools whose state changed, by their new state. */
export interface Change {
  /** Now allowed. */
  added: string[];
  /** Now on ask. */
  asked: string[];
  /** Now denied. */
  removed: string[];
  /** Listed before and after, with other conditions on its arguments. */
  conditions: string[];
  /** Listed before and after, with another usage limit (or one added or removed); absent when none. */
  limits?: string[];
}

/** What changed from `before` to `after`, in catalog order. */
export function changeBetween(catalog: CatalogResponse, before: ToolLists, after: ToolLists): Change {
  const change: Change = { added: [], asked: [], removed: [], conditions: [] };
  const fromAllowed = new Set(before.allowed);
  const fromAsk = new Set(before.ask);
  const toAllowed = new Set(after.allowed);
  const toAsk = new Set(after.ask);
  for (const { name } of catalog.tools) {
    const from = toolState(name, fromAllowed, fromAsk);
    const to = toolState(name, toAllowed, toAsk);
    if (from === to) {
      const condition = (lists: ToolLists) => ({ [name]: lists.conditions?.[name] ?? {} });
      if (to !== 'deny' && !sameConditions(condition(before), condition(after))) change.conditions.push(name);
      if (to !== 'deny' && !sameLimits(before.limits, after.limits, new Set([name]))) (change.limits ??= []).push(name);
      continue;
    }
    if (to === 'allow') change.added.push(name);
    else if (to === 'ask') change.asked.push(name);
    else change.removed.push(name);
  }
  return change;
}

/** "+ idea_memory_write ; ? idea_ask_agent (sur demande) ; − idea_stop_agent", or "aucun changement de tools". */
export function changeText(change: Change): string {
  const parts = [
    ...change.added.map((name) => `+ ${name}`),
    ...change.asked.map((name) => `? ${name} (sur demande)`),
    ...change.removed.map((name) => `\u2212 ${name}`),
    ...change.conditions.map((name) => `~ ${name} (conditions)`),
    ...(change.limits ?? []).map((name) => `~ ${name} (limite)`),
  ];
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
  draft: ToolLists,
): ConflictSides {
  const defaultChanged =
    before.seededFrom !== null && after.seededFrom !== null && JSON.stringify(before.seededFrom) !== JSON.stringify(after.seededFrom)
      ? changeBetween(catalog, before.seededFrom, after.seededFrom)
      : null;
  return {
    mine: changeBetween(catalog, before.effective, draft),
    theirs: changeBetween(catalog, before.effective, after.effective),
    theirsMode: modeChangeText(target, before, after),
    defaultChanged,
  };
}
