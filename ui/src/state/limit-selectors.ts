/** What the views and controllers derive from the state about usage limits (docs/api.md#usage-limits). Pure. */
import { limitOfRow, limitRowsOf, savedLimits, type LimitRow, type LimitRows } from '../model/limits-model.js';
import type { Limit } from '../../../schemas/limits.js';
import { sameTarget } from '../model/model.js';
import type { PanelState } from './state.js';

/** The limits the editor shows, by tool: the draft's rows if there is one, else the saved ones. */
export function shownLimits(state: PanelState): LimitRows {
  const draft = state.draft;
  if (draft !== null && sameTarget(draft.target, state.target)) return draft.limits;
  return limitRowsOf(savedLimits(state.view, state.target));
}

/** The row of one tool's limit as shown, or undefined without one. */
export function shownLimitRow(state: PanelState, tool: string): LimitRow | undefined {
  return shownLimits(state).get(tool);
}

/** The valid limit of one tool as shown (null: none, or one still being typed). */
export function shownLimit(state: PanelState, tool: string): Limit | null {
  const row = shownLimitRow(state, tool);
  return row === undefined ? null : limitOfRow(row);
}

/** The saved limit of one tool for the selected target, or undefined. */
export function savedLimit(state: PanelState, tool: string): Limit | undefined {
  return savedLimits(state.view, state.target)[tool];
}
