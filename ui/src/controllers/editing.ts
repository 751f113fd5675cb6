/**
 * Draft edits of the selected target: a tool's checkbox (Autorisé) and its "Sur demande" toggle,
 * group actions, quick grants, fixes offered on recent refusals, the inline confirmation of write
 * tools on the project default, and the group toolbars' roving focus. Built from the store alone.
 */
import { copyRows, rowsDiffer, rowsOf, type ConditionRow } from '../model/conditions-model.js';
import { basisOf } from '../model/draft-rebase.js';
import { shownLimits } from '../state/limit-selectors.js';
import { copyLimitRows, limitRowsOf, limitsDiffer, savedLimits, type LimitRow } from '../model/limits-model.js';
import { TOOLBAR_ITEMS, groupTools, sameSet, toolControlId, type ToolGroupView, type ToolState } from '../model/model.js';
import { quickGrantState, quickGrants } from '../model/quick-grants.js';
import { canWrite, editable, overrideRefusal, overriding, saved, shownAllowed, shownAsk, shownConditions } from '../state/selectors.js';
import { clearEditing, type Draft, type PanelState, type WriteConfirmation } from '../state/state.js';
import type { Store } from '../state/store.js';

/** Puts one tool in one state: in at most one of the two lists (the API refuses a name in both). */
function place(allowed: Set<string>, ask: Set<string>, name: string, wanted: ToolState): void {
  allowed.delete(name);
  ask.delete(name);
  if (wanted === 'allow') allowed.add(name);
  else if (wanted === 'ask') ask.add(name);
}

export class Editing {
  constructor(private readonly store: Store) {}

  private get state(): Readonly<PanelState> {
    return this.store.state;
  }

  /** Starts an override of an inheriting agent from its effective state: a replacement, not a patch. */
  createOverride(focus = true): void {
    const savedNow = saved(this.state);
    if (savedNow === undefined || this.state.view === null || !canWrite(this.state) || this.state.target.kind !== 'agent') return;
    if (overrideRefusal(this.state) !== null) return;
    const draft: Draft = {
      target: this.state.target,
      allowed: new Set(savedNow.allowed),
      ask: new Set(savedNow.ask),
      conditions: rowsOf(savedNow.conditions),
      limits: limitRowsOf(savedLimits(this.state.view, this.state.target)),
      createsOverride: true,
      dropsUnknown: false,
      base: basisOf(this.state.view, this.state.target, true),
    };
    this.store.update((state) => {
      state.draft = draft;
      if (focus) state.focusAfterRender = 'editor-title';
    });
  }

  /** Autorisé (checked), Sur demande (toggle pressed) or Refusé for one tool; a new write grant on the default waits for confirmation. */
  setTool(name: string, wanted: ToolState): void {
    const tool = this.state.catalog?.tools.find((entry) => entry.name === name);
    if (tool === undefined || !editable(this.state)) return;
    if (wanted === 'allow' && this.needsConfirmation(name)) {
      this.store.update((state) => {
        state.confirmation = { groupId: tool.group, tools: [name] };
      });
      return;
    }
    this.change((allowed, ask) => {
      place(allowed, ask, name, wanted);
    });
  }

  /**
   * "Tout autoriser / Tout retirer dans ce groupe", and "Tout demander" from "Autres actions". New
   * write grants on the default wait for confirmation.
   */
  setGroup(groupId: string, wanted: ToolState): void {
    const group = this.group(groupId);
    if (group === undefined || !editable(this.state)) return;
    const names = group.tools.map((tool) => tool.name);
    const shown = shownAllowed(this.state);
    this.store.stage((state) => {
      state.moreActionsFor = null;
    });
    const toConfirm = wanted === 'allow' ? names.filter((name) => !shown.has(name) && this.needsConfirmation(name)) : [];
    this.change((allowed, ask) => {
      for (const name of names) if (!toConfirm.includes(name)) place(allowed, ask, name, wanted);
    });
    if (toConfirm.length > 0) {
      this.store.update((state) => {
        state.confirmation = { groupId, tools: toConfirm };
      });
    }
  }

  /** A quick grant's checkbox: its whole bundle allowed, or none of it; editable only once the agent has an override. */
  setQuickGrant(grantId: string, checked: boolean): void {
    const catalog = this.state.catalog;
    if (catalog === null || this.state.target.kind !== 'agent' || !editable(this.state)) return;
    const grant = quickGrants(catalog).find((entry) => entry.id === grantId);
    if (grant === undefined) return;
    const wanted: ToolState = checked ? 'allow' : 'deny';
    if (quickGrantState(grant, shownAllowed(this.state), shownAsk(this.state)) === wanted) {
      this.store.changed();
      return;
    }
    this.change((allowed, ask) => {
      for (const name of grant.tools) place(allowed, ask, name, wanted);
    });
  }

  /**
   * "Autoriser" / "Sur demande" on a recent refusal: the same change as the row's checkbox or its
   * toggle; on an agent that inherits, the override is created first (« Créer un override et autoriser »).
   */
  fixDenial(name: string, wanted: 'allow' | 'ask'): void {
    if (this.state.target.kind === 'agent' && !overriding(this.state)) {
      if (!canWrite(this.state) || overrideRefusal(this.state) !== null) return;
      this.createOverride(false);
    }
    this.setTool(name, wanted);
  }

  /** A write tool newly granted on the project default reaches every agent without an override. */
  private needsConfirmation(name: string): boolean {
    if (this.state.target.kind !== 'default') return false;
    const tool = this.state.catalog?.tools.find((entry) => entry.name === name);
    return tool?.access === 'write' && !(saved(this.state)?.allowed.has(name) ?? false);
  }

  confirmWriteTools(): void {
    const confirmation = this.state.confirmation;
    if (confirmation === null) {
      this.store.changed();
      return;
    }
    this.store.stage((state) => {
      state.confirmation = null;
      state.focusAfterRender = this.confirmationFocus(confirmation);
    });
    this.change((allowed, ask) => {
      for (const name of confirmation.tools) place(allowed, ask, name, 'allow');
    });
  }

  cancelWriteTools(): void {
    const confirmation = this.state.confirmation;
    this.store.update((state) => {
      state.confirmation = null;
      if (confirmation !== null) state.focusAfterRender = this.confirmationFocus(confirmation);
    });
  }

  private confirmationFocus(confirmation: WriteConfirmation): string {
    const [only] = confirmation.tools;
    if (confirmation.tools.length !== 1 || only === undefined) return `group-toggle-${confirmation.groupId}`;
    return toolControlId(only);
  }

  /** Asks for the unknown names to be dropped (the next save only keeps catalog tools anyway). */
  dropUnknown(): void {
    this.change(() => undefined, true);
  }

  /**
   * Changes the condition rows of one tool in the draft (the inline editor); false when nothing
   * can change now (not editable, or a save in flight).
   */
  changeConditions(tool: string, mutate: (rows: ConditionRow[]) => void): boolean {
    if (!editable(this.state) || this.state.saving) return false;
    this.change((_allowed, _ask, conditions) => {
      const rows = conditions.get(tool) ?? [];
      mutate(rows);
      if (rows.length === 0) conditions.delete(tool);
      else conditions.set(tool, rows);
    });
    return true;
  }

  /** Sets (or, with null, removes) one tool's usage limit in the draft; false when nothing can change now. */
  changeLimit(tool: string, row: LimitRow | null): boolean {
    if (!editable(this.state) || this.state.saving) return false;
    this.change((_allowed, _ask, _conditions, limits) => {
      if (row === null) limits.delete(tool);
      else limits.set(tool, { ...row });
    });
    return true;
  }

  private change(
    mutate: (allowed: Set<string>, ask: Set<string>, conditions: Map<string, ConditionRow[]>, limits: Map<string, LimitRow>) => void,
    dropsUnknown = false,
  ): void {
    const savedNow = saved(this.state);
    // A save in flight sends a snapshot: edits made meanwhile would be lost when it succeeds.
    if (savedNow === undefined || this.state.view === null || this.state.saving) {
      this.store.changed();
      return;
    }
    const current = this.state.draft;
    const allowed = new Set(shownAllowed(this.state));
    const ask = new Set(shownAsk(this.state));
    const conditions = copyRows(shownConditions(this.state));
    const limits = copyLimitRows(shownLimits(this.state));
    mutate(allowed, ask, conditions, limits);
    const draft: Draft = {
      target: this.state.target,
      allowed,
      ask,
      conditions,
      limits,
      createsOverride: current?.createsOverride ?? false,
      dropsUnknown: dropsUnknown || (current?.dropsUnknown ?? false),
      base: current?.base ?? basisOf(this.state.view, this.state.target, false),
    };
    // Back to exactly the saved state: nothing to save any more.
    const listed = new Set([...allowed, ...ask]);
    const clean =
      !draft.createsOverride &&
      !draft.dropsUnknown &&
      sameSet(allowed, savedNow.allowed) &&
      sameSet(ask, savedNow.ask) &&
      !rowsDiffer(conditions, savedNow.conditions, listed) &&
      !limitsDiffer(limits, savedLimits(this.state.view, this.state.target), listed);
    this.store.update((state) => {
      state.draft = clean ? null : draft;
      if (clean) state.drift = null;
      state.problem = null;
    });
  }

  /** "Annuler": the draft is dropped; focus stays on the action bar (Enregistrer stays focusable). */
  cancelDraft(): void {
    if (this.state.saving) return;
    this.store.update((state) => {
      clearEditing(state);
      state.focusAfterRender = editable(state) ? 'save' : 'editor-title';
    });
  }

  private group(groupId: string): ToolGroupView | undefined {
    const catalog = this.state.catalog;
    return catalog === null ? undefined : groupTools(catalog).find((entry) => entry.id === groupId);
  }

  /** "Autres actions" of a group: shows or hides its "Tout demander dans ce groupe". */
  toggleMoreActions(groupId: string): void {
    const open = this.state.moreActionsFor === groupId;
    this.store.update((state) => {
      state.moreActionsFor = open ? null : groupId;
      state.focusAfterRender = open ? `group-more-${groupId}` : `group-ask-${groupId}`;
    });
  }

  /** Arrow keys in a group's toolbar: one Tab stop per group, the actions one arrow away. */
  moveToolbarFocus(groupId: string, key: string): boolean {
    const count = editable(this.state) ? TOOLBAR_ITEMS.length : 1;
    const current = Math.min(this.state.toolbarFocus.get(groupId) ?? 0, count - 1);
    const moves: Record<string, number> = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: count - 1 };
    const wanted = moves[key];
    if (wanted === undefined) return false;
    const next = (wanted + count) % count;
    this.store.update((state) => {
      state.toolbarFocus.set(groupId, next);
      state.focusAfterRender = `${TOOLBAR_ITEMS[next] ?? 'group-toggle'}-${groupId}`;
    });
    return true;
  }

  /** The toolbar item that got the focus holds the group's Tab stop from now on (the focus is already there: no render). */
  rememberToolbarFocus(groupId: string, index: number): void {
    this.store.stage((state) => {
      state.toolbarFocus.set(groupId, index);
    });
  }
}
