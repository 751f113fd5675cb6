/**
 * The three-way choice of a tool or a quick grant: Autorisé, Demander, Refusé. Native radio
 * buttons in a named group: one Tab stop, arrows move (and choose), the label carries the state.
 */
import { h, type Child } from './dom.js';
import { TOOL_STATES, type ToolState } from './model.js';

export interface ChoiceOptions {
  /** The group's accessible name ("Modifier le carnet d'un ticket, idea_ticket_update_carnet"). */
  label: string;
  /** The radios' `name` and the prefix of their ids. */
  name: string;
  /** The chosen state, or `mixed` (a bundle whose tools differ: nothing is chosen). */
  current: ToolState | 'mixed';
  describedBy?: string;
  onChoose: (state: ToolState) => void;
}

export function choiceId(name: string, state: ToolState): string {
  return `${name}-${state}`;
}

export function renderChoice(options: ChoiceOptions): Child {
  return h(
    'div',
    { role: 'radiogroup', class: 'choice', 'aria-label': options.label, 'aria-describedby': options.describedBy },
    TOOL_STATES.map(({ id, label }) => {
      const inputId = choiceId(options.name, id);
      return h(
        'label',
        { class: `choice-option choice-${id}`, for: inputId },
        h('input', {
          id: inputId,
          type: 'radio',
          name: options.name,
          value: id,
          checked: options.current === id,
          onchange: () => options.onChoose(id),
        }),
        h('span', null, label),
      );
    }),
  );
}
