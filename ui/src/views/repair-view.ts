/**
 * The right column while the policy file is invalid: no state, no counts, only the repair through
 * the whole-document PUT, with a confirmation that says exactly what will be written.
 */
import type { PolicyDocument } from '../../../schemas/policy.js';
import { visibleText } from '../model/agent-names.js';
import { h, type Child } from '../dom/dom.js';
import { renderNotice, renderProblem } from './feedback-view.js';
import { summaryText } from '../model/model.js';
import { targetName } from '../state/selectors.js';
import type { Actions } from './actions.js';
import type { PanelState } from '../state/state.js';

export function renderRepair(state: PanelState, actions: Actions): Child {
  const { view, repair, draft, token, role } = state;
  if (view === null) return null;
  const lastValid = view.lastValid ?? null;
  const canRepair = token !== null && role === 'admin';
  return h(
    'section',
    { class: 'editor repair', 'aria-labelledby': 'editor-title' },
    h('h2', { id: 'editor-title', tabindex: -1 }, 'Réparer la policy'),
    h(
      'p',
      null,
      'Le fichier .ideai/mcp-tool-permissions.json ne peut pas être appliqué : chaque appel de tool de ce projet est refusé. Corrigez-le dans un éditeur (la page suit le fichier d\u2019elle-même), ou remplacez-le ici.',
    ),
    draft === null
      ? null
      : h(
          'p',
          { class: 'mode-hint', id: 'repair-draft' },
          `Vos modifications non enregistrées pour « ${targetName(state, draft.target)} » sont conservées : elles seront comparées à la policy réparée.`,
        ),
    canRepair ? null : h('p', { class: 'mode-hint' }, 'La réparation demande le jeton administrateur.'),
    h(
      'div',
      { class: 'button-row' },
      lastValid === null
        ? null
        : h(
            'button',
            {
              id: 'repair-last-valid',
              class: 'button',
              type: 'button',
              'aria-disabled': canRepair ? null : 'true',
              onclick: () => {
                if (canRepair) actions.chooseRepair('last-valid');
              },
            },
            'Restaurer le dernier document valide\u2026',
          ),
      h(
        'button',
        {
          id: 'repair-read-only',
          class: 'button',
          type: 'button',
          'aria-disabled': canRepair ? null : 'true',
          onclick: () => {
            if (canRepair) actions.chooseRepair('read-only');
          },
        },
        'Réinitialiser en lecture seule\u2026',
      ),
    ),
    repair === null ? null : renderConfirmation(state, actions, repair.kind, repair.document, repair.dropped, lastValid?.revision ?? null),
    renderProblem(state),
    renderNotice(state),
  );
}

function renderConfirmation(
  state: PanelState,
  actions: Actions,
  kind: 'read-only' | 'last-valid',
  document: PolicyDocument,
  dropped: string[],
  revision: string | null,
): Child {
  const catalog = state.catalog;
  const summary = (tools: readonly string[]): string => (catalog === null ? `${tools.length} tools` : summaryText(catalog, new Set(tools)));
  const lines: Child[] = [];
  if (kind === 'read-only') {
    lines.push(h('li', null, 'Défaut projet : lecture seule (les tools de lecture du catalogue).'));
    lines.push(
      h('li', null, 'Aucun override : tous les agents passent en lecture seule, y compris ceux qui avaient des droits d\u2019écriture.'),
    );
  } else {
    lines.push(
      h(
        'li',
        null,
        document.projectDefault === undefined
          ? 'Défaut projet : lecture seule.'
          : `Défaut projet personnalisé : ${summary(document.projectDefault.allowedTools)}.`,
      ),
    );
    const agents = document.agents ?? [];
    if (agents.length === 0) lines.push(h('li', null, 'Aucun override.'));
    for (const agent of agents)
      lines.push(h('li', null, `Override de ${visibleText(agent.agentId)} : ${summary(agent.policy.allowedTools)}.`));
    if (dropped.length > 0) lines.push(h('li', null, `Noms hors catalogue retirés (ils n\u2019accordaient rien) : ${dropped.join(', ')}.`));
  }
  const title =
    kind === 'read-only'
      ? 'Réinitialiser en lecture seule : le fichier invalide sera remplacé par ce document.'
      : `Restaurer le dernier document valide vu par le service${revision === null ? '' : ` (révision ${revision})`} : le fichier invalide sera remplacé par ce document.`;
  return h(
    'div',
    { class: 'banner banner-warning repair-confirm', role: 'alertdialog', 'aria-labelledby': 'repair-title', 'aria-modal': 'false' },
    h('p', { id: 'repair-title' }, title),
    h('ul', { id: 'repair-summary' }, lines),
    h(
      'details',
      null,
      h('summary', null, 'Document qui sera écrit'),
      h('pre', { class: 'mono', id: 'repair-document' }, JSON.stringify(document, null, 2)),
    ),
    h(
      'div',
      { class: 'button-row' },
      h(
        'button',
        {
          id: 'repair-confirm',
          class: 'button button-danger',
          type: 'button',
          onclick: () => {
            actions.confirmRepair();
          },
        },
        'Écrire ce document',
      ),
      h(
        'button',
        {
          id: 'repair-cancel',
          class: 'button',
          type: 'button',
          onclick: () => {
            actions.cancelRepair();
          },
        },
        'Annuler',
      ),
    ),
  );
}
