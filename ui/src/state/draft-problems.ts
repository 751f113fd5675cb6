/** Why a draft cannot be saved yet: an incomplete condition or an invalid usage limit, said beside Enregistrer. */
import { firstProblem } from '../model/conditions-model.js';
import { firstLimitProblem } from '../model/limits-model.js';
import type { Draft } from './state.js';

/** The first problem of the draft's listed tools, in French, or null when it can be saved. */
export function draftProblem(draft: Draft): string | null {
  const listed = new Set([...draft.allowed, ...draft.ask]);
  return firstProblem(draft.conditions, listed) ?? firstLimitProblem(draft.limits, listed);
}
