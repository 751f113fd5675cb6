/**
 * The usage limit of a tool row (docs/api.md#usage-limits), edited in the row's inline editor
 * beside its conditions: adding one, each field typed, removing it, and « Relever la limite » from
 * Refus récents. Every edit changes the draft through {@link Editing}, so Enregistrer, the
 * preview and « Annuler » treat it like a checkbox; focus moves and announcements are decided here.
 */
import type { Editing } from './editing.js';
import { savedLimit, shownLimit, shownLimitRow } from '../state/limit-selectors.js';
import { NEW_LIMIT, limitIds, limitText, raisedLimit, rowOfLimit, type LimitRow, type LimitUnit } from '../model/limits-model.js';
import { targetId, toolState } from '../model/model.js';
import { editable, overriding, shownAllowed, shownAsk } from '../state/selectors.js';
import type { PanelState } from '../state/state.js';
import type { Store } from '../state/store.js';

export class LimitEdits {
  constructor(
    private readonly store: Store,
    private readonly editing: Editing,
  ) {}

  private get state(): Readonly<PanelState> {
    return this.store.state;
  }

  /** « Ajouter une limite »: 20 calls per hour to start from, focus on the number of calls. */
  add(tool: string): void {
    if (!this.editing.changeLimit(tool, NEW_LIMIT)) return;
    this.store.update((state) => {
      state.focusAfterRender = limitIds(tool).max;
      state.announcement = `Nouvelle limite pour ${tool} : au plus 20 appels par heure. Ajustez le nombre d\u2019appels et la fenêtre.`;
    });
  }

  setMax(tool: string, text: string): void {
    this.edit(tool, { max: text });
  }

  setCount(tool: string, text: string): void {
    this.edit(tool, { count: text });
  }

  setUnit(tool: string, unit: LimitUnit): void {
    this.edit(tool, { unit });
  }

  private edit(tool: string, part: Partial<LimitRow>): void {
    const row = shownLimitRow(this.state, tool);
    if (row !== undefined) this.editing.changeLimit(tool, { ...row, ...part });
  }

  /** « Retirer la limite »: the calls of the tool are no longer counted once saved; focus on « Ajouter une limite ». */
  remove(tool: string): void {
    if (!this.editing.changeLimit(tool, null)) return;
    this.store.update((state) => {
      state.focusAfterRender = limitIds(tool).add;
      state.announcement = `Limite de ${tool} retirée du brouillon : Enregistrer pour l\u2019appliquer.`;
    });
  }

  /**
   * « Relever la limite » on a `rate_limited` refusal: the override is created first for an agent
   * that inherits, the limit doubled in the draft, and the row's editor opened (its group too) with
   * the focus on the number of calls. Nothing is written before Enregistrer.
   */
  raise(tool: string): void {
    if (this.state.target.kind === 'agent' && !overriding(this.state)) this.editing.createOverride(false);
    if (!editable(this.state) || toolState(tool, shownAllowed(this.state), shownAsk(this.state)) === 'deny') return;
    const current = shownLimit(this.state, tool) ?? savedLimit(this.state, tool) ?? null;
    const raised = current === null ? null : raisedLimit(current);
    if (raised === null || !this.editing.changeLimit(tool, rowOfLimit(raised))) return;
    const group = this.state.catalog?.tools.find((entry) => entry.name === tool)?.group;
    this.store.update((state) => {
      const target = targetId(state.target);
      if (group !== undefined) state.openGroups.set(`${target}|${group}`, true);
      state.conditionsOpen = { target, tool, message: null };
      state.focusAfterRender = limitIds(tool).max;
      state.announcement = `Limite de ${tool} relevée à ${limitText(raised)} dans le brouillon : Enregistrer pour l\u2019appliquer.`;
    });
  }
}
