/**
 * Conditions on a tool row (docs/api.md#conditions-on-a-tools-arguments): the French text beside the row's state, the
 * « Conditions » button of an editable row, and its inline editor. Each condition is a group of
 * an argument (the catalog's names offered by a datalist), an operator (a select) and values as
 * removable chips (typed + Enter; Backspace in the empty field or a chip's button removes one).
 */
import type { Actions } from './actions.js';
import {
  OPERATORS,
  conditionCount,
  conditionIds,
  conditionsToSave,
  rowProblem,
  toolConditionsText,
  unknownArgumentWarning,
  valueText,
  type ConditionRow,
} from '../model/conditions-model.js';
import { h, type Child } from '../dom/dom.js';
import { shownLimit } from '../state/limit-selectors.js';
import { limitText } from '../model/limits-model.js';
import { renderLimitSection } from './limits-view.js';
import { argumentsOf, checkboxLabel, type CatalogTool } from '../model/model.js';
import { openConditions, shownConditions, shownListed } from '../state/selectors.js';
import type { PanelState } from '../state/state.js';
import type { ConditionOperator } from '../../../schemas/conditions.js';

/** « seulement pour les agents QA, DevFrontend » for a listed tool with complete conditions, else null. */
export function rowConditionsText(state: PanelState, tool: string): string | null {
  const rows = shownConditions(state).get(tool);
  if (rows === undefined) return null;
  const listed = shownListed(state);
  return toolConditionsText(conditionsToSave(new Map([[tool, rows]]), listed)[tool]);
}

/**
 * A tool the catalog knows no argument of gets no « Conditions » button unless it has conditions:
 * a button on every listed row would cost a Tab stop each for nothing to narrow.
 */
export function offersConditions(state: PanelState, tool: CatalogTool): boolean {
  return argumentsOf(tool).length > 0 || (shownConditions(state).get(tool.name)?.length ?? 0) > 0;
}

/**
 * « Conditions » (with its count, and « · limite » when the tool has a usage limit) beside a listed
 * tool of an editable target; « Limite » on a tool that takes no argument. One button opens both:
 * a second one per row would cost a Tab stop on every listed row.
 */
export function renderConditionsToggle(state: PanelState, actions: Actions, tool: CatalogTool): Child {
  const ids = conditionIds(tool.name);
  const count = shownConditions(state).get(tool.name)?.length ?? 0;
  const open = openConditions(state) === tool.name;
  const limit = shownLimit(state, tool.name);
  const conditioned = offersConditions(state, tool);
  const label = conditioned
    ? `Conditions : ${checkboxLabel(tool)}${count > 0 ? `, ${conditionCount(count)}` : ''}`
    : `Limite d’usage : ${checkboxLabel(tool)}`;
  const shown = conditioned ? (count > 0 ? `Conditions (${count})` : 'Conditions') : 'Limite';
  return h(
    'button',
    {
      id: ids.toggle,
      class: `button conditions-toggle${count > 0 || limit !== null ? ' has-conditions' : ''}`,
      type: 'button',
      'aria-expanded': String(open),
      'aria-controls': ids.editor,
      'aria-label': limit === null ? label : `${label}, limite : ${limitText(limit)}`,
      onclick: () => {
        actions.toggleConditions(tool.name);
      },
    },
    shown,
    // Hidden below 760 px, where the row's own line says the limit just beside (the name carries it too).
    conditioned && limit !== null ? h('span', { class: 'toggle-limit' }, ' · limite') : null,
  );
}

/** The inline editor under the row, when open. */
export function renderConditionsEditor(state: PanelState, actions: Actions, tool: CatalogTool): Child {
  if (openConditions(state) !== tool.name) return null;
  const ids = conditionIds(tool.name);
  const rows = shownConditions(state).get(tool.name) ?? [];
  const known = argumentsOf(tool);
  const onKeydown = (event: Event): void => {
    if (event instanceof KeyboardEvent && event.key === 'Escape') {
      event.preventDefault();
      actions.closeConditions(tool.name);
    }
  };
  const close = h(
    'button',
    {
      id: ids.close,
      class: 'button button-quiet',
      type: 'button',
      'aria-label': `Fermer les conditions de ${tool.name}`,
      onclick: () => {
        actions.closeConditions(tool.name);
      },
    },
    'Fermer',
  );
  if (!offersConditions(state, tool)) {
    // A tool without arguments: only its usage limit can be set here.
    return h(
      'div',
      { id: ids.editor, class: 'conditions-editor', role: 'group', 'aria-labelledby': ids.title, onkeydown: onKeydown },
      h('p', { id: ids.title, class: 'conditions-title' }, 'Limite d’usage de ', h('code', null, tool.name)),
      renderLimitSection(state, actions, tool.name, false),
      h('div', { class: 'button-row' }, close),
    );
  }
  return h(
    'div',
    { id: ids.editor, class: 'conditions-editor', role: 'group', 'aria-labelledby': ids.title, onkeydown: onKeydown },
    h('p', { id: ids.title, class: 'conditions-title' }, 'Conditions de ', h('code', null, tool.name)),
    h(
      'p',
      { class: 'mode-hint' },
      rows.length === 0
        ? 'Aucune condition : le tool est accepté quels que soient ses arguments.'
        : 'Toutes les conditions doivent être remplies ; un appel hors condition est refusé, même sur demande.',
    ),
    known.length === 0 ? null : h('p', { class: 'mode-hint' }, 'Arguments connus : ', h('code', null, known.join(', '))),
    h(
      'datalist',
      { id: ids.datalist },
      known.map((argument) => h('option', { value: argument })),
    ),
    rows.map((row, index) => renderRow(state, actions, tool.name, known, rows, row, index)),
    h(
      'div',
      { class: 'button-row' },
      h(
        'button',
        {
          id: ids.add,
          class: 'button',
          type: 'button',
          'aria-label': `Ajouter une condition à ${tool.name}`,
          onclick: () => {
            actions.addConditionRow(tool.name);
          },
        },
        'Ajouter une condition',
      ),
    ),
    renderLimitSection(state, actions, tool.name, true),
    h('div', { class: 'button-row' }, close),
  );
}

function renderRow(
  state: PanelState,
  actions: Actions,
  tool: string,
  known: readonly string[],
  rows: readonly ConditionRow[],
  row: ConditionRow,
  index: number,
): Child {
  const ids = conditionIds(tool);
  const problem = rowProblem(row, rows);
  const message = state.conditionsOpen?.message;
  const refused = message?.index === index ? message.text : null;
  const warning = unknownArgumentWarning(row.argument, known);
  const number = `Condition ${index + 1}${row.argument === '' ? '' : ` (${row.argument})`}`;
  const describedBy = [
    problem === null ? null : ids.problem(index),
    refused === null ? null : `${ids.problem(index)}-refused`,
    ids.hint(index),
  ]
    .filter((id) => id !== null)
    .join(' ');
  return h(
    'fieldset',
    { class: `condition-row${problem === null ? '' : ' incomplete'}` },
    h('legend', { class: 'visually-hidden' }, number),
    renderConditionFields(actions, tool, row, index, warning !== null),
    warning === null ? null : h('p', { id: `${ids.argument(index)}-warning`, class: 'condition-warning' }, `⚠ ${warning}`),
    row.operator === 'absent' ? null : renderValues(actions, tool, row, index, describedBy, problem !== null || refused !== null),
    problem === null ? null : h('p', { id: ids.problem(index), class: 'condition-problem' }, problem),
    refused === null ? null : h('p', { id: `${ids.problem(index)}-refused`, class: 'condition-problem' }, refused),
    h(
      'button',
      {
        id: ids.remove(index),
        class: 'button button-quiet',
        type: 'button',
        'aria-label': `Retirer la condition ${index + 1}${row.argument === '' ? '' : ` sur ${row.argument}`} de ${tool}`,
        onclick: () => {
          actions.removeConditionRow(tool, index);
        },
      },
      'Retirer la condition',
    ),
  );
}

/** A condition's argument (the catalog's names offered by a datalist) and its operator. */
function renderConditionFields(actions: Actions, tool: string, row: ConditionRow, index: number, warned: boolean): Child {
  const ids = conditionIds(tool);
  return h(
    'div',
    { class: 'condition-fields' },
    h(
      'div',
      { class: 'condition-field' },
      h('label', { for: ids.argument(index) }, 'Argument'),
      h('input', {
        id: ids.argument(index),
        class: 'condition-argument',
        type: 'text',
        list: ids.datalist,
        value: row.argument,
        autocomplete: 'off',
        spellcheck: 'false',
        'aria-describedby': warned ? `${ids.argument(index)}-warning` : null,
        oninput: (event: Event) => {
          actions.setConditionArgument(tool, index, (event.target as HTMLInputElement).value);
        },
      }),
    ),
    h(
      'div',
      { class: 'condition-field' },
      h('label', { for: ids.operator(index) }, 'Opérateur'),
      h(
        'select',
        {
          id: ids.operator(index),
          class: 'condition-operator',
          onchange: (event: Event) => {
            actions.setConditionOperator(tool, index, (event.target as HTMLSelectElement).value as ConditionOperator);
          },
        },
        OPERATORS.map((operator) => h('option', { value: operator.id, selected: operator.id === row.operator }, operator.label)),
      ),
    ),
  );
}

function renderValues(actions: Actions, tool: string, row: ConditionRow, index: number, describedBy: string, invalid: boolean): Child {
  const ids = conditionIds(tool);
  const listLabel = `Valeurs${row.argument === '' ? '' : ` de ${row.argument}`}`;
  return h(
    'div',
    { class: 'condition-values' },
    row.values.length === 0
      ? null
      : h(
          'ul',
          { class: 'chips', 'aria-label': listLabel },
          row.values.map((value, valueIndex) => {
            const shown = valueText(row.argument, value);
            return h(
              'li',
              { class: 'chip' },
              h('span', { class: 'chip-text' }, shown),
              h(
                'button',
                {
                  id: ids.chip(index, valueIndex),
                  class: 'chip-remove',
                  type: 'button',
                  'aria-label': `Retirer ${shown}`,
                  onclick: () => {
                    actions.removeConditionValue(tool, index, valueIndex, false);
                  },
                  onkeydown: (event: Event) => {
                    if (event instanceof KeyboardEvent && (event.key === 'Backspace' || event.key === 'Delete')) {
                      event.preventDefault();
                      actions.removeConditionValue(tool, index, valueIndex, false);
                    }
                  },
                },
                h('span', { 'aria-hidden': 'true' }, '×'),
              ),
            );
          }),
        ),
    h('label', { for: ids.value(index) }, row.operator === 'prefix' ? 'Ajouter un préfixe' : 'Ajouter une valeur'),
    h('input', {
      id: ids.value(index),
      class: 'condition-value',
      type: 'text',
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-invalid': invalid ? 'true' : null,
      'aria-describedby': describedBy,
      onkeydown: (event: Event) => {
        if (!(event instanceof KeyboardEvent)) return;
        const input = event.target as HTMLInputElement;
        if (event.key === 'Enter') {
          event.preventDefault();
          if (actions.addConditionValue(tool, index, input.value)) input.value = '';
        } else if (event.key === 'Backspace' && input.value === '' && row.values.length > 0) {
          event.preventDefault();
          actions.removeConditionValue(tool, index, row.values.length - 1, true);
        }
      },
    }),
    h(
      'p',
      { id: ids.hint(index), class: 'mode-hint condition-hint' },
      'Entrée ajoute la valeur ; Retour arrière dans le champ vide retire la dernière.',
    ),
  );
}
