/**
 * Taking a newer permissions view into the state: the view and its revision, then the open draft
 * re-based on it (nothing it depends on changed) or turned into a conflict the user settles.
 */
import type { PanelView, VersionedView } from '../api/api.js';
import { conditionsToSave } from '../model/conditions-model.js';
import { limitsToSave } from '../model/limits-model.js';
import { basisOf, conflictSides, sameBasis } from '../model/draft-rebase.js';
import { DEFAULT_TARGET, findAgent } from '../model/model.js';
import type { PanelState } from './state.js';

/** Takes a newer view without looking at the draft (the writes do their own reconciliation). */
export function applyView(state: PanelState, result: VersionedView): void {
  state.view = result.view;
  state.revision = result.revision;
  const target = state.target;
  if (target.kind === 'agent' && findAgent(result.view, target.agentId) === undefined && state.draft === null) {
    state.target = DEFAULT_TARGET;
  }
}

/** Takes a newer view; an open draft is re-based on it or turned into a conflict. */
export function adoptView(state: PanelState, result: VersionedView): void {
  applyView(state, result);
  reconcileDraft(state, result.view);
}

function reconcileDraft(state: PanelState, view: PanelView): void {
  const { draft, catalog } = state;
  if (draft === null || catalog === null || view.status !== 'ok') return;
  const after = basisOf(view, draft.target, draft.createsOverride);
  if (sameBasis(draft.base, after)) {
    draft.base = after;
    state.conflict = null;
    return;
  }
  const fromSave = state.conflict?.fromSave ?? false;
  state.conflict = {
    target: draft.target,
    sides: conflictSides(catalog, draft.target, draft.base, after, {
      allowed: [...draft.allowed],
      ask: [...draft.ask],
      conditions: conditionsToSave(draft.conditions, new Set([...draft.allowed, ...draft.ask])),
      limits: limitsToSave(draft.limits, new Set([...draft.allowed, ...draft.ask])),
    }),
    after,
    fromSave,
  };
}
