/**
 * The inline « Conditions » editor of a tool row (docs/api.md#conditions-on-a-tools-arguments): opening and closing it, and
 * each edit of a condition (argument, operator, values as chips). Every edit changes the draft
 * through {@link Editing}, so Enregistrer, the draft's preview and « Annuler » treat it like a
 * checkbox. Focus moves and live announcements are decided here, as in the other controllers.
 */
import type { ConditionOperator } from '../../../schemas/conditions.js';
import {
  conditionCount,
  conditionIds,
  defaultOperator,
  nextArgument,
  operatorLabel,
  typedValue,
  valueText,
  type ConditionRow,
} from '../model/conditions-model.js';
import type { Editing } from './editing.js';
import { shownLimitRow } from '../state/limit-selectors.js';
import { limitIds } from '../model/limits-model.js';
import { argumentsOf, targetId } from '../model/model.js';
import { editable, openConditions, shownConditions } from '../state/selectors.js';
import type { PanelState } from '../state/state.js';
import type { Store } from '../state/store.js';

export class ConditionEdits {
  constructor(
    private readonly store: Store,
    private readonly editing: Editing,
  ) {}

  private get state(): Readonly<PanelState> {
    return this.store.state;
  }

  private rows(tool: string): ConditionRow[] {
    return shownConditions(this.state).get(tool) ?? [];
  }

  private known(tool: string): string[] {
    return argumentsOf(this.state.catalog?.tools.find((entry) => entry.name === tool));
  }

  /** « Conditions » on a row: opens its editor (focus inside) or closes it (focus back on the button). */
  toggle(tool: string): void {
    if (openConditions(this.state) === tool) {
      this.close(tool);
      return;
    }
    if (!editable(this.state)) return;
    this.store.update((state) => {
      state.conditionsOpen = { target: targetId(state.target), tool, message: null };
      this.focusInside(state, tool);
    });
  }

  /**
   * The first thing to fill in: the first condition's values (its argument for `absent`), else «
   * Ajouter une condition » (the limit's fields without arguments).
   */
  private focusInside(state: PanelState, tool: string): void {
    const ids = conditionIds(tool);
    const first = this.rows(tool)[0];
    if (first === undefined && this.known(tool).length === 0) {
      // A tool without arguments: its editor holds only the usage limit.
      state.focusAfterRender = shownLimitRow(state, tool) === undefined ? limitIds(tool).add : limitIds(tool).max;
      return;
    }
    state.focusAfterRender = first === undefined ? ids.add : first.operator === 'absent' ? ids.argument(0) : ids.value(0);
  }

  /**
   * « Voir les conditions » on a refusal by a condition: opens the tool's editor (and its group,
   * folded for an agent's read tools), focus on the first condition's values.
   */
  show(tool: string): void {
    const group = this.state.catalog?.tools.find((entry) => entry.name === tool)?.group;
    if (group !== undefined)
      this.store.stage((state) => {
        state.openGroups.set(`${targetId(state.target)}|${group}`, true);
      });
    if (openConditions(this.state) !== tool) this.toggle(tool);
    else
      this.store.update((state) => {
        this.focusInside(state, tool);
      });
  }

  /** Escape or « Fermer » : the rows stay in the draft (an incomplete one is said beside Enregistrer). */
  close(tool: string): void {
    this.store.update((state) => {
      state.conditionsOpen = null;
      state.focusAfterRender = conditionIds(tool).toggle;
    });
  }

  addRow(tool: string): void {
    const known = this.known(tool);
    let index = 0;
    const changed = this.editing.changeConditions(tool, (rows) => {
      const argument = nextArgument(known, rows);
      rows.push({ argument, operator: defaultOperator(argument), values: [] });
      index = rows.length - 1;
    });
    if (!changed) return;
    this.say(tool, null, 'Nouvelle condition : choisissez l\u2019argument, l\u2019opérateur puis les valeurs.');
    this.store.update((state) => {
      state.focusAfterRender = conditionIds(tool).argument(index);
    });
  }

  setArgument(tool: string, index: number, argument: string): void {
    this.editing.changeConditions(tool, (rows) => {
      const row = rows[index];
      if (row !== undefined) row.argument = argument.trim();
    });
  }

  setOperator(tool: string, index: number, operator: ConditionOperator): void {
    this.editing.changeConditions(tool, (rows) => {
      const row = rows[index];
      if (row !== undefined) row.operator = operator;
    });
    this.say(tool, null, `Opérateur : ${operatorLabel(operator)}.`);
  }

  /** Enter in the values field: true when the value was added (the view then empties the field). */
  addValue(tool: string, index: number, text: string): boolean {
    const row = this.rows(tool)[index];
    if (row === undefined) return false;
    const typed = typedValue(row, text);
    if ('problem' in typed) {
      this.say(tool, index, typed.problem);
      return false;
    }
    const changed = this.editing.changeConditions(tool, (rows) => {
      rows[index]?.values.push(typed.value);
    });
    if (!changed) return false;
    const count = row.values.length + 1;
    this.say(tool, null, `${valueText(row.argument, typed.value)} ajouté (${row.argument}, ${count} valeur${count > 1 ? 's' : ''}).`);
    return true;
  }

  /** A chip's remove button (focus to the next chip, else the field) or Backspace in the empty field (focus stays). */
  removeValue(tool: string, index: number, valueIndex: number, fromField: boolean): void {
    const row = this.rows(tool)[index];
    const value = row?.values[valueIndex];
    if (row === undefined || value === undefined) return;
    const changed = this.editing.changeConditions(tool, (rows) => {
      rows[index]?.values.splice(valueIndex, 1);
    });
    if (!changed) return;
    const ids = conditionIds(tool);
    const left = row.values.length - 1;
    if (!fromField)
      this.store.stage((state) => {
        state.focusAfterRender = left === 0 ? ids.value(index) : ids.chip(index, Math.min(valueIndex, left - 1));
      });
    this.say(tool, null, `${valueText(row.argument, value)} retiré (${row.argument}, ${left} valeur${left > 1 ? 's' : ''}).`);
  }

  removeRow(tool: string, index: number): void {
    const row = this.rows(tool)[index];
    if (row === undefined) return;
    let left = 0;
    const changed = this.editing.changeConditions(tool, (rows) => {
      rows.splice(index, 1);
      left = rows.length;
    });
    if (!changed) return;
    const ids = conditionIds(tool);
    this.store.stage((state) => {
      state.focusAfterRender = left === 0 ? ids.add : ids.argument(Math.min(index, left - 1));
    });
    const what = row.argument === '' ? 'Condition retirée' : `Condition sur ${row.argument} retirée`;
    this.say(tool, null, `${what} : ${left === 0 ? 'aucune condition' : conditionCount(left)} pour ${tool}.`);
  }

  /** Announces `text`; with a row index, also writes it under that row's values (a refused value). */
  private say(tool: string, index: number | null, text: string): void {
    this.store.update((state) => {
      const open = state.conditionsOpen;
      if (open?.tool === tool) open.message = index === null ? null : { index, text };
      state.announcement = text;
    });
  }
}
