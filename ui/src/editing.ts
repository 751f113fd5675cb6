/**
 * Draft edits of the selected target: ticking tools, group actions, quick grants, the inline
 * confirmation of write tools on the project default, and the group toolbars' roving focus.
 */
import { basisOf } from './draft-rebase.js';
import { groupTools, sameSet, type ToolGroupView } from './model.js';
import type { Panel } from './panel.js';
import { quickGrantState, quickGrants } from './quick-grants.js';
import type { Draft, WriteConfirmation } from './state.js';

/** The items of a group's toolbar, in order: the group button, then its two actions. */
export const TOOLBAR_ITEMS = ['group-toggle', 'group-all', 'group-none'] as const;

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
      createsOverride: true,
      dropsUnknown: false,
      base: basisOf(state.view, state.target, true),
    };
    if (focus) state.focusAfterRender = 'editor-title';
    this.panel.changed();
  }

  toggleTool(name: string, allowed: boolean): void {
    const tool = this.panel.state.catalog?.tools.find((entry) => entry.name === name);
    if (tool === undefined || !this.panel.editable()) return;
    if (allowed && this.needsConfirmation(name)) {
      this.panel.state.confirmation = { groupId: tool.group, tools: [name] };
      this.panel.changed();
      return;
    }
    this.changeAllowed((next) => (allowed ? next.add(name) : next.delete(name)));
  }

  /** "Tout autoriser / Tout retirer dans ce groupe". New write grants on the default wait for confirmation. */
  setGroup(groupId: string, allowed: boolean): void {
    const group = this.group(groupId);
    if (group === undefined || !this.panel.editable()) return;
    const names = group.tools.map((tool) => tool.name);
    const toConfirm = allowed ? names.filter((name) => !this.panel.shownAllowed().has(name) && this.needsConfirmation(name)) : [];
    this.changeAllowed((next) => {
      for (const name of names) {
        if (!allowed) next.delete(name);
        else if (!toConfirm.includes(name)) next.add(name);
      }
    });
    if (toConfirm.length > 0) {
      this.panel.state.confirmation = { groupId, tools: toConfirm };
      this.panel.changed();
    }
  }

  /** A quick grant adds or removes its whole bundle; on an inheriting agent it starts the override. */
  setQuickGrant(grantId: string, allowed: boolean): void {
    const { state } = this.panel;
    if (state.catalog === null || state.target.kind !== 'agent' || !this.panel.canWrite() || this.panel.overrideRefusal() !== null) return;
    const grant = quickGrants(state.catalog).find((entry) => entry.id === grantId);
    if (grant === undefined) return;
    if (!this.panel.overriding()) this.createOverride(false);
    if (allowed === (quickGrantState(grant, this.panel.shownAllowed()) === 'all')) return this.panel.changed();
    this.changeAllowed((next) => {
      for (const name of grant.tools) {
        if (allowed) next.add(name);
        else next.delete(name);
      }
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
    this.changeAllowed((next) => {
      for (const name of confirmation.tools) next.add(name);
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
    return confirmation.tools.length === 1 && only !== undefined ? `tool-${only}` : `group-toggle-${confirmation.groupId}`;
  }

  /** Asks for the unknown names to be dropped (the next save only keeps catalog tools anyway). */
  dropUnknown(): void {
    this.changeAllowed(() => undefined, true);
  }

  private changeAllowed(mutate: (next: Set<string>) => void, dropsUnknown = false): void {
    const { state } = this.panel;
    const saved = this.panel.saved();
    // A save in flight sends a snapshot: edits made meanwhile would be lost when it succeeds.
    if (saved === undefined || state.view === null || state.saving) return this.panel.changed();
    const current = state.draft;
    const next = new Set(this.panel.shownAllowed());
    mutate(next);
    const draft: Draft = {
      target: state.target,
      allowed: next,
      createsOverride: current?.createsOverride ?? false,
      dropsUnknown: dropsUnknown || (current?.dropsUnknown ?? false),
      base: current?.base ?? basisOf(state.view, state.target, false),
    };
    // Back to exactly the saved state: nothing to save any more.
    const clean = !draft.createsOverride && !draft.dropsUnknown && sameSet(next, saved.allowed);
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
