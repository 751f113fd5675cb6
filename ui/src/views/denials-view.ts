/**
 * "Refus récents" in the editor: what the selected agent (or, on the project default, the agents
 * without an override) was refused lately, grouped by tool, with the buttons that turn a refusal
 * into a change of the draft (nothing is written before Enregistrer).
 */
import type { Actions } from './actions.js';
import { agoText, countText, denialsOf, groupDenials, reasonsText, type DenialGroup } from '../model/denials-model.js';
import { h, type Child } from '../dom/dom.js';
import { renderFrenchError } from './feedback-view.js';
import { renderRaiseLimit } from './limits-view.js';
import { toolState } from '../model/model.js';
import { agentName, canWrite, editable, overrideRefusal, overriding, shownAllowed, shownAsk } from '../state/selectors.js';
import type { PanelState } from '../state/state.js';

export function renderDenials(state: PanelState, actions: Actions): Child {
  const { view, denials, target } = state;
  if (view?.status !== 'ok') return null;
  const groups = groupDenials(denialsOf(view, target, denials.decisions));
  const hint =
    target.kind === 'default'
      ? 'Les refus des agents sans override, parmi les 50 derniers refus du projet.'
      : 'Parmi les 50 derniers refus du projet.';
  return h(
    'section',
    { class: 'denials', id: 'denials', 'aria-labelledby': 'denials-title' },
    h('h3', { id: 'denials-title' }, 'Refus récents'),
    h('p', { class: 'mode-hint' }, hint),
    denials.loadError === null
      ? null
      : h(
          'div',
          { class: 'banner banner-error' },
          h('p', null, 'Impossible de lire les refus récents.'),
          renderFrenchError(denials.loadError, 'denials-error'),
          h(
            'button',
            {
              id: 'denials-retry',
              class: 'button',
              type: 'button',
              onclick: () => {
                actions.refreshDenials();
              },
            },
            'Réessayer',
          ),
        ),
    !denials.loaded
      ? h('p', { class: 'empty' }, 'Chargement des refus…')
      : groups.length === 0
        ? h('p', { class: 'empty', id: 'denials-empty' }, 'Aucun refus récent.')
        : h(
            'ul',
            { class: 'denial-list' },
            groups.map((group) => renderGroup(state, actions, group)),
          ),
  );
}

function renderGroup(state: PanelState, actions: Actions, group: DenialGroup): Child {
  const tool = state.catalog?.tools.find((entry) => entry.name === group.tool);
  const titleId = `denial-${group.tool}-title`;
  const who = state.target.kind === 'default' ? ` · ${group.requesters.map((id) => agentName(state, id)).join(', ')}` : '';
  return h(
    'li',
    { class: 'denial', 'aria-labelledby': titleId },
    h(
      'p',
      { class: 'denial-title', id: titleId },
      h('code', { class: 'tool-name' }, group.tool),
      tool === undefined ? null : h('span', { class: 'tool-label' }, tool.label),
    ),
    h(
      'p',
      { class: 'denial-meta' },
      h('strong', { class: 'denial-count' }, countText(group.count)),
      ` · dernier ${agoText(group.lastAt)} · `,
      h('span', { class: 'denial-reason' }, reasonsText(group)),
      who,
    ),
    renderFixes(state, actions, group, tool?.access),
  );
}

/** Autoriser / Sur demande for a refusal a policy change can fix, as the row's checkbox and toggle would. */
function renderFixes(state: PanelState, actions: Actions, group: DenialGroup, access: 'read' | 'write' | undefined): Child {
  // A tool no longer listed renders no raise: its other refusals' fixes (Autoriser…) may apply.
  const raise = group.reasons.includes('rate_limited') ? renderRaiseLimit(state, actions, group) : null;
  if (raise !== null) return raise;
  if (group.reasons.includes('argument_not_allowed')) return renderShowConditions(state, actions, group);
  if (!group.fixable || access === undefined) return null;
  const current = toolState(group.tool, shownAllowed(state), shownAsk(state));
  if (current === 'allow') return h('p', { class: 'denial-fixed' }, 'Autorisé dans la policy affichée.');
  if (!canWrite(state) || overrideRefusal(state) !== null) return null;
  const creates = state.target.kind === 'agent' && !overriding(state);
  const button = (id: string, text: string, wanted: 'allow' | 'ask'): Child =>
    h(
      'button',
      {
        id,
        class: wanted === 'allow' ? 'button button-primary' : 'button',
        type: 'button',
        'aria-label': `${text} : ${group.tool}`,
        onclick: () => {
          actions.fixDenial(group.tool, wanted);
        },
      },
      text,
    );
  return h(
    'div',
    { class: 'button-row denial-actions' },
    button(`denial-allow-${group.tool}`, creates ? 'Créer un override et autoriser' : 'Autoriser', 'allow'),
    access === 'write' && current !== 'ask'
      ? button(`denial-ask-${group.tool}`, creates ? 'Créer un override, sur demande' : 'Sur demande', 'ask')
      : null,
  );
}

/** A refusal by a condition: the fix is in the tool's conditions, one click away when they can be edited. */
function renderShowConditions(state: PanelState, actions: Actions, group: DenialGroup): Child {
  if (!editable(state) || toolState(group.tool, shownAllowed(state), shownAsk(state)) === 'deny') return null;
  return h(
    'div',
    { class: 'button-row denial-actions' },
    h(
      'button',
      {
        id: `denial-conditions-${group.tool}`,
        class: 'button',
        type: 'button',
        'aria-label': `Voir les conditions : ${group.tool}`,
        onclick: () => {
          actions.showConditions(group.tool);
        },
      },
      'Voir les conditions',
    ),
  );
}
