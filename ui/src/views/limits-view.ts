/**
 * Usage limits in the panel (docs/api.md#usage-limits): the line a limited row says (« au plus 20
 * appels par heure »), the « Limite d'usage » part of the row's inline editor (number of calls, a
 * window and its unit, with the reason a value is refused in French), and « Relever la limite » on
 * a refusal by a limit in Refus récents.
 */
import type { Actions } from './actions.js';
import { h, type Child } from '../dom/dom.js';
import type { Limit } from '../../../schemas/limits.js';
import { shownLimit, shownLimitRow, savedLimit } from '../state/limit-selectors.js';
import { LIMIT_UNITS, limitIds, limitRowProblem, limitText, raisedLimit, type LimitRow, type LimitUnit } from '../model/limits-model.js';
import type { DenialGroup } from '../model/denials-model.js';
import { toolState } from '../model/model.js';
import { canWrite, overrideRefusal, overriding, shownAllowed, shownAsk } from '../state/selectors.js';
import type { PanelState } from '../state/state.js';

/** The line under a limited row, read after its state (and its conditions); null without a valid limit. */
export function renderLimitLine(state: PanelState, tool: string): Child {
  const limit = shownLimit(state, tool);
  if (limit === null) return null;
  return h(
    'span',
    { id: limitIds(tool).line, class: 'conditions-text limit-text' },
    h('span', { class: 'visually-hidden' }, '· '),
    h('span', { 'aria-hidden': 'true', class: 'conditions-mark' }, '↳ '),
    limitText(limit),
  );
}

/** The id of the row's limit line when it is drawn (for the checkbox's description), else null. */
export function limitLineId(state: PanelState, tool: string): string | null {
  return shownLimit(state, tool) === null ? null : limitIds(tool).line;
}

/**
 * The « Limite d'usage » part of a row's editor. `titled`: the editor also holds conditions, so
 * this part has its own title (otherwise the editor's title, « Limite de … », says it).
 */
export function renderLimitSection(state: PanelState, actions: Actions, tool: string, titled: boolean): Child {
  const ids = limitIds(tool);
  const row = shownLimitRow(state, tool);
  const title = titled ? h('p', { id: ids.title, class: 'conditions-title limit-title' }, 'Limite d\u2019usage') : null;
  const attributes = {
    id: ids.section,
    class: titled ? 'limit-section' : 'limit-section limit-only',
    role: 'group',
    'aria-label': `Limite d\u2019usage de ${tool}`,
  };
  if (row === undefined) return h('div', attributes, title, renderNoLimit(actions, tool));
  const problem = limitRowProblem(row);
  return h(
    'div',
    attributes,
    title,
    renderLimitFields(actions, tool, row, problem),
    renderLimitSummary(tool, problem, shownLimit(state, tool)),
    h(
      'button',
      {
        id: ids.remove,
        class: 'button button-quiet',
        type: 'button',
        'aria-label': `Retirer la limite d\u2019usage de ${tool}`,
        onclick: () => {
          actions.removeLimit(tool);
        },
      },
      'Retirer la limite',
    ),
  );
}

/** A row without a limit: the sentence that says so and « Ajouter une limite ». */
function renderNoLimit(actions: Actions, tool: string): Child {
  return [
    h('p', { class: 'mode-hint' }, 'Aucune limite : les appels autorisés ne sont pas comptés.'),
    h(
      'div',
      { class: 'button-row' },
      h(
        'button',
        {
          id: limitIds(tool).add,
          class: 'button',
          type: 'button',
          'aria-label': `Ajouter une limite d\u2019usage à ${tool}`,
          onclick: () => {
            actions.addLimit(tool);
          },
        },
        'Ajouter une limite',
      ),
    ),
  ];
}

type LimitProblem = ReturnType<typeof limitRowProblem>;

/** The three fields of a limit: calls at most, the window's length and its unit, each described by the summary or the problem. */
function renderLimitFields(actions: Actions, tool: string, row: LimitRow, problem: LimitProblem): Child {
  const ids = limitIds(tool);
  const described = problem === null ? ids.summary : ids.problem;
  return h(
    'div',
    { class: 'condition-fields limit-fields' },
    renderNumberField(ids.max, 'Appels au plus', row.max, problem?.field === 'max', described, (text) => {
      actions.setLimitMax(tool, text);
    }),
    renderNumberField(ids.count, 'Par (durée)', row.count, problem?.field === 'count', described, (text) => {
      actions.setLimitCount(tool, text);
    }),
    h(
      'div',
      { class: 'condition-field' },
      h('label', { for: ids.unit }, 'Unité'),
      h(
        'select',
        {
          id: ids.unit,
          class: 'limit-unit',
          'aria-describedby': described,
          onchange: (event: Event) => {
            actions.setLimitUnit(tool, (event.target as HTMLSelectElement).value as LimitUnit);
          },
        },
        LIMIT_UNITS.map((unit) => h('option', { value: unit.id, selected: unit.id === row.unit }, unit.label)),
      ),
    ),
  );
}

function renderNumberField(
  id: string,
  label: string,
  value: string,
  invalid: boolean,
  described: string,
  onInput: (text: string) => void,
): Child {
  return h(
    'div',
    { class: 'condition-field' },
    h('label', { for: id }, label),
    h('input', {
      id,
      class: 'limit-number',
      type: 'text',
      inputmode: 'numeric',
      value,
      autocomplete: 'off',
      spellcheck: 'false',
      'aria-invalid': invalid ? 'true' : null,
      'aria-describedby': described,
      oninput: (event: Event) => {
        onInput((event.target as HTMLInputElement).value);
      },
    }),
  );
}

/** Under the fields: why the value is refused, or what the limit does once reached. */
function renderLimitSummary(tool: string, problem: LimitProblem, limit: Limit | null): Child {
  const ids = limitIds(tool);
  if (problem !== null || limit === null) return h('p', { id: ids.problem, class: 'condition-problem' }, problem?.text ?? '');
  return h(
    'p',
    { id: ids.summary, class: 'mode-hint limit-summary' },
    `${capitalized(limitText(limit))} : au-delà, l\u2019appel est refusé (limite atteinte) jusqu\u2019à ce que le plus ancien appel compté sorte de la fenêtre. Une approbation ne lève pas la limite.`,
  );
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Refus récents, a group refused by a usage limit: the limit in force and « Relever la limite »
 * (« Créer un override et relever la limite » for an agent that inherits), for the admin token only.
 */
export function renderRaiseLimit(state: PanelState, actions: Actions, group: DenialGroup): Child {
  const tool = group.tool;
  if (toolState(tool, shownAllowed(state), shownAsk(state)) === 'deny') return null;
  const limit = shownLimit(state, tool);
  if (limit === null) return h('p', { class: 'denial-fixed' }, 'Plus de limite dans la policy affichée.');
  const saved = savedLimit(state, tool);
  const drafted = saved?.max !== limit.max || saved.per !== limit.per;
  const said = h('p', { class: 'denial-limit' }, `${drafted ? 'Limite dans le brouillon' : 'Limite actuelle'} : ${limitText(limit)}.`);
  if (!canWrite(state) || overrideRefusal(state) !== null) return said;
  if (raisedLimit(limit) === null) return [said, h('p', { class: 'denial-fixed' }, 'La limite est déjà au maximum (100\u202f000 appels).')];
  const text = state.target.kind === 'agent' && !overriding(state) ? 'Créer un override et relever la limite' : 'Relever la limite';
  return [
    said,
    h(
      'div',
      { class: 'button-row denial-actions' },
      h(
        'button',
        {
          id: `denial-raise-${tool}`,
          class: 'button button-primary',
          type: 'button',
          'aria-label': `${text} : ${tool}`,
          onclick: () => {
            actions.raiseLimit(tool);
          },
        },
        text,
      ),
    ),
  ];
}
