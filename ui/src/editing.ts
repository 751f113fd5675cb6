/**
 * Draft edits of the selected target: tool states (Autorisé, Demander, Refusé), group actions, quick grants, the inline
 * confirmation of write tools on the project default, and the group toolbars' roving focus.
 */
import { basisOf } from './draft-rebase.js';
import { groupTools, sameSet, toolControlId, toolState, type ToolGroupView, type ToolState } from './model.js';
import type { Panel } from './panel.js';
import { quickGrantState, quickGrants } from './quick-grants.js';
import type { Draft, WriteConfirmation } from './state.js';

/** The items of a group's toolbar, in order: the group button, then its three actions. */
export const TOOLBAR_ITEMS = ['group-toggle', 'group-all', 'group-ask', 'group-none'] as const;

/** Puts one tool in one state: in at most one of the two lists (the API refuses a name in both). */
function place(allowed: Set<string>, ask: Set<string>, name: string, wanted: ToolState): void {
  allowed.delete(name);
  ask.delete(name);
  if (wanted === 'allow') allowed.add(name);
  else if (wanted === 'ask') ask.add(name);
}

export class Editing {
  constructor(private readonly panel: Panel) {}

  /** Starts an override of an inheriting agent from its effective state: a replacement, not a patch. */
  createOverride(focus = true): void {
    const { state } = this.panel;
    const saved = this.panel.saved();
    if (saved === undefined || state.view === null || !this.panel.canWrite() || state.target.kind !== 'agent') return;
    if (this.panel.overrideRefusal() !== null) return;
    state.draft = {
      target: state.target,
      allowed: new Set(saved.allowed),
      ask: new Set(saved.ask),
      createsOverride: true,
      dropsUnknown: false,
      base: basisOf(state.view, state.target, true),
    };
    if (focus) state.focusAfterRender = 'editor-title';
    this.panel.changed();
  }

  /** Autorisé, Demander or Refusé for one tool; a new write grant on the default waits for confirmation. */
  setTool(name: string, wanted: ToolState): void {
    const tool = this.panel.state.catalog?.tools.find((entry) => entry.name === name);
    if (tool === undefined || !this.panel.editable()) return;
    if (wanted === 'allow' && this.needsConfirmation(name)) {
      this.panel.state.confirmation = { groupId: tool.group, tools: [name] };
      this.panel.changed();
      return;
    }
    this.change((allowed, ask) => place(allowed, ask, name, wanted));
  }

  /** "Tout autoriser / Tout demander / Tout retirer dans ce groupe". New write grants on the default wait for confirmation. */
  setGroup(groupId: string, wanted: ToolState): void {
    const group = this.group(groupId);
    if (group === undefined || !this.panel.editable()) return;
    const names = group.tools.map((tool) => tool.name);
    const shown = this.panel.shownAllowed();
    const toConfirm = wanted === 'allow' ? names.filter((name) => !shown.has(name) && this.needsConfirmation(name)) : [];
    this.change((allowed, ask) => {
      for (const name of names) if (!toConfirm.includes(name)) place(allowed, ask, name, wanted);
    });
    if (toConfirm.length > 0) {
      this.panel.state.confirmation = { groupId, tools: toConfirm };
      this.panel.changed();
    }
  }

  /** A quick grant puts its whole bundle in one state; on an inheriting agent it starts the override. */
  setQuickGrant(grantId: string, wanted: ToolState): void {
    const { state } = this.panel;
    if (state.catalog === null || state.target.kind !== 'agent' || !this.panel.canWrite() || this.panel.overrideRefusal() !== null) return;
    const grant = quickGrants(state.catalog).find((entry) => entry.id === grantId);
    if (grant === undefined) return;
    if (!this.panel.overriding()) this.createOverride(false);
    if (quickGrantState(grant, this.panel.shownAllowed(), this.panel.shownAsk()) === wanted) return this.panel.changed();
    this.change((allowed, ask) => {
      for (const name of grant.tools) place(allowed, ask, name, wanted);
    });
  }

  /** A write tool newly granted on the project default reaches every agent without an override. */
  private needsConfirmation(name: string): boolean {
    if (this.panel.state.target.kind !== 'default') return false;
    const tool = this.panel.state.catalog?.tools.find((entry) => entry.name === name);
    return tool?.access === 'write' && !(this.panel.saved()?.allowed.has(name) ?? false);
  }

  confirmWriteTools(): void {
    const confirmation = this.panel.state.confirmation;
    this.panel.state.confirmation = null;
    if (confirmation === null) return this.panel.changed();
    this.panel.state.focusAfterRender = this.confirmationFocus(confirmation);
    this.change((allowed, ask) => {
      for (const name of confirmation.tools) place(allowed, ask, name, 'allow');
    });
  }

  cancelWriteTools(): void {
    const confirmation = this.panel.state.confirmation;
    this.panel.state.confirmation = null;
    if (confirmation !== null) this.panel.state.focusAfterRender = this.confirmationFocus(confirmation);
    this.panel.changed();
  }

  private confirmationFocus(confirmation: WriteConfirmation): string {
    const [only] = confirmation.tools;
    if (confirmation.tools.length !== 1 || only === undefined) return `group-toggle-${confirmation.groupId}`;
    return toolControlId(only, toolState(only, this.panel.shownAllowed(), this.panel.shownAsk()));
  }

  /** Asks for the unknown names to be dropped (the next save only keeps catalog tools anyway). */
  dropUnknown(): void {
    this.change(() => undefined, true);
  }

  private change(mutate: (allowed: Set<string>, ask: Set<string>) => void, dropsUnknown = false): void {
    const { state } = this.panel;
    const saved = this.panel.saved();
    // A save in flight sends a snapshot: edits made meanwhile would be lost when it succeeds.
    if (saved === undefined || state.view === null || state.saving) return this.panel.changed();
    const current = state.draft;
    const allowed = new Set(this.panel.shownAllowed());
    const ask = new Set(this.panel.shownAsk());
    mutate(allowed, ask);
    const draft: Draft = {
      target: state.target,
      allowed,
      ask,
      createsOverride: current?.createsOverride ?? false,
      dropsUnknown: dropsUnknown || (current?.dropsUnknown ?? false),
      base: current?.base ?? basisOf(state.view, state.target, false),
    };
    // Back to exactly the saved state: nothing to save any more.
    const clean = !draft.createsOverride && !draft.dropsUnknown && sameSet(allowed, saved.allowed) && sameSet(ask, saved.ask);
    state.draft = clean ? null : draft;
    if (clean) state.drift = null;
    state.problem = null;
    this.panel.changed();
  }

  /** "Annuler": the draft is dropped; focus stays on the action bar (Enregistrer stays focusable). */
  cancelDraft(): void {
    if (this.panel.state.saving) return;
    this.panel.clearEditing();
    this.panel.state.focusAfterRender = this.panel.editable() ? 'save' : 'editor-title';
    this.panel.changed();
  }

  private group(groupId: string): ToolGroupView | undefined {
    const catalog = this.panel.state.catalog;
    return catalog === null ? undefined : groupTools(catalog).find((entry) => entry.id === groupId);
  }

  /** Arrow keys in a group's toolbar: one Tab stop per group, the actions one arrow away. */
  moveToolbarFocus(groupId: string, key: string): boolean {
    const { state } = this.panel;
    const count = this.panel.editable() ? TOOLBAR_ITEMS.length : 1;
    const current = Math.min(state.toolbarFocus.get(groupId) ?? 0, count - 1);
    const moves: Record<string, number> = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: count - 1 };
    const wanted = moves[key];
    if (wanted === undefined) return false;
    const next = (wanted + count) % count;
    state.toolbarFocus.set(groupId, next);
    state.focusAfterRender = `${TOOLBAR_ITEMS[next] ?? 'group-toggle'}-${groupId}`;
    this.panel.changed();
    return true;
  }

  /** The item that holds the Tab stop of a group's toolbar. */
  toolbarStop(groupId: string): number {
    return this.panel.editable() ? (this.panel.state.toolbarFocus.get(groupId) ?? 0) : 0;
  }
}
