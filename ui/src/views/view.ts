/**
 * The page around the editor: header (project selector, the "Demandes" button, token), the two
 * tabs Système / Tools MCP IdeA, load states, and the two columns: the targets (always visible)
 * and, on the right, the tab's content, or the approval requests when they are open.
 */
import type { Actions } from './actions.js';
import { h, type Child } from '../dom/dom.js';
import { renderEditor } from './editor-view.js';
import { frenchError, frenchPolicyError } from '../model/errors-fr.js';
import { renderFrenchError } from './feedback-view.js';
import { renderRepair } from './repair-view.js';
import { renderRequests, renderRequestsButton } from './requests-view.js';
import type { LiveState } from '../api/live-stream.js';
import { stale } from '../state/selectors.js';
import type { PanelState, Tab } from '../state/state.js';
import { renderTargets } from './targets-view.js';

const TABS: readonly { id: Tab; label: string }[] = [
  { id: 'system', label: 'Système' },
  { id: 'mcp', label: 'Tools MCP IdeA' },
];

export function renderPage(state: PanelState, actions: Actions): Child {
  return [
    h(
      'header',
      { class: 'topbar' },
      h('h1', null, 'Permissions'),
      renderProjectSelector(state, actions),
      renderRequestsButton(state, actions),
      renderTokenStatus(state, actions),
    ),
    h(
      'div',
      { class: 'tabs-row' },
      renderTabs(state, actions),
      h(
        'div',
        { class: 'refresh-area' },
        renderLiveStatus(state),
        h(
          'button',
          {
            id: 'refresh',
            class: 'button',
            type: 'button',
            onclick: () => {
              actions.reloadView();
            },
          },
          'Actualiser',
        ),
      ),
    ),
    state.tokenForm.open ? renderTokenForm(state, actions) : null,
    renderBody(state, actions),
  ];
}

/** The right column of the selected tab (the tab panels hold only what changes with the tab). */
function renderTabPanels(state: PanelState, actions: Actions): Child {
  const { view } = state;
  return h(
    'div',
    { class: 'right-column' },
    h(
      'div',
      { role: 'tabpanel', id: 'panel-mcp', 'aria-labelledby': 'tab-mcp', hidden: state.tab !== 'mcp' },
      state.tab !== 'mcp' || view === null
        ? null
        : state.requestsOpen
          ? renderRequests(state, actions)
          : view.status === 'invalid'
            ? renderRepair(state, actions)
            : renderEditor(state, actions),
    ),
    h(
      'div',
      { role: 'tabpanel', id: 'panel-system', 'aria-labelledby': 'tab-system', hidden: state.tab !== 'system', class: 'system-panel' },
      h(
        'p',
        null,
        'Les permissions fichiers, commandes et sandbox sont gérées par IdeA (Système) : elles sont hors du périmètre de ce service.',
      ),
      h('p', null, 'Les permissions des tools MCP IdeA sont dans l\u2019onglet « Tools MCP IdeA ».'),
    ),
  );
}

/** Tabs with a roving tabindex: arrows, Home and End move (and activate) the selection. */
function renderTabs(state: PanelState, actions: Actions): Child {
  const onKeydown = (event: Event): void => {
    if (!(event instanceof KeyboardEvent)) return;
    const index = TABS.findIndex((tab) => tab.id === state.tab);
    const moves: Record<string, number> = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: TABS.length - 1 };
    const nextIndex = moves[event.key];
    if (nextIndex === undefined) return;
    event.preventDefault();
    const next = TABS[(nextIndex + TABS.length) % TABS.length];
    if (next === undefined) return;
    actions.setTab(next.id);
    document.getElementById(`tab-${next.id}`)?.focus();
  };
  return h(
    'div',
    { role: 'tablist', 'aria-label': 'Permissions', class: 'tabs', onkeydown: onKeydown },
    TABS.map((tab) =>
      h(
        'button',
        {
          role: 'tab',
          type: 'button',
          id: `tab-${tab.id}`,
          class: 'tab',
          'aria-selected': String(state.tab === tab.id),
          'aria-controls': `panel-${tab.id}`,
          tabindex: state.tab === tab.id ? 0 : -1,
          onclick: () => {
            actions.setTab(tab.id);
          },
        },
        tab.label,
      ),
    ),
  );
}

/** Whether the page follows the service by itself; Actualiser stays the manual way. */
const LIVE_TEXT: Record<LiveState, string> = {
  open: 'Suivi en direct',
  connecting: 'Connexion au suivi en direct…',
  retrying: 'Suivi en direct interrompu : nouvelle tentative…',
  refused: 'Suivi en direct refusé : jeton nécessaire',
  stopped: 'Suivi en direct arrêté',
};

function renderLiveStatus(state: PanelState): Child {
  const live = state.live;
  return h('span', { id: 'live-status', class: `live-status live-${live}` }, LIVE_TEXT[live]);
}

function renderProjectSelector(state: PanelState, actions: Actions): Child {
  const { projects, projectId } = state;
  if (projects.length < 2) return projectId === null ? null : h('p', { class: 'project-name' }, 'Projet : ', h('strong', null, projectId));
  return h(
    'div',
    { class: 'project-select' },
    h('label', { for: 'project-select' }, 'Projet'),
    h(
      'select',
      {
        id: 'project-select',
        onchange: (event: Event) => {
          const select = event.target as HTMLSelectElement;
          const wanted = select.value;
          select.value = state.projectId ?? wanted; // the draft check may refuse the change
          actions.selectProject(wanted);
        },
      },
      projects.map((project) => h('option', { value: project.id, selected: project.id === projectId }, projectOptionText(state, project))),
    ),
  );
}

function projectOptionText(state: PanelState, project: { id: string; status: string }): string {
  const invalid = project.status === 'invalid' ? ' (policy invalide)' : '';
  const waiting = state.requests.elsewhere.has(project.id) ? ' — demandes en attente' : '';
  return `${project.id}${invalid}${waiting}`;
}

/** Who the panel acts as; never worded like a policy state ("Lecture seule" is the default's). */
function renderTokenStatus(state: PanelState, actions: Actions): Child {
  const { token, role } = state;
  const pill =
    token === null
      ? h('span', { id: 'token-pill', class: 'badge badge-muted' }, 'Sans jeton : consultation seulement')
      : role === 'admin'
        ? h('span', { id: 'token-pill', class: 'badge badge-ok' }, 'Jeton administrateur vérifié')
        : role === 'decide'
          ? h('span', { id: 'token-pill', class: 'badge badge-muted' }, 'Jeton de lecture : modifications impossibles')
          : h('span', { id: 'token-pill', class: 'badge badge-muted' }, 'Jeton en cours de vérification');
  const action =
    token !== null
      ? h(
          'button',
          {
            id: 'token-forget',
            class: 'button button-quiet',
            type: 'button',
            onclick: () => {
              actions.forgetToken();
            },
          },
          'Oublier le jeton',
        )
      : state.tokenForm.open
        ? null
        : h(
            'button',
            {
              id: 'token-open',
              class: 'button button-quiet',
              type: 'button',
              onclick: () => {
                actions.openTokenForm();
              },
            },
            'Saisir le jeton administrateur',
          );
  return h('div', { class: 'token-status' }, pill, action);
}

function renderTokenForm(state: PanelState, actions: Actions): Child {
  const { reason, checking, error } = state.tokenForm;
  const onSubmit = (event: Event): void => {
    event.preventDefault();
    const input = document.getElementById('token-input');
    if (input instanceof HTMLInputElement) actions.submitToken(input.value);
  };
  return h(
    'form',
    { class: 'token-form', 'aria-labelledby': 'token-title', onsubmit: onSubmit },
    h('h2', { id: 'token-title' }, 'Jeton administrateur'),
    h(
      'p',
      null,
      reason ??
        'Les modifications demandent le jeton administrateur du service. Il est vérifié auprès du service, puis gardé pour cette session de navigateur seulement. Sans jeton, le panneau sert à consulter.',
    ),
    error === null
      ? null
      : h('div', { id: 'token-error', class: 'banner banner-error', role: 'alert' }, renderFrenchError(error, 'token-error')),
    h(
      'div',
      { class: 'token-row' },
      h('label', { for: 'token-input' }, 'Jeton'),
      h('input', {
        id: 'token-input',
        type: 'password',
        autocomplete: 'off',
        spellcheck: 'false',
        required: true,
        'aria-invalid': error === null ? null : 'true',
        'aria-describedby': error === null ? null : 'token-error',
      }),
      h(
        'button',
        { id: 'token-submit', class: 'button button-primary', type: 'submit', 'aria-disabled': checking ? 'true' : null },
        checking ? 'Vérification…' : 'Utiliser ce jeton',
      ),
      state.token === null
        ? h(
            'button',
            {
              id: 'token-dismiss',
              class: 'button',
              type: 'button',
              onclick: () => {
                actions.dismissTokenForm();
              },
            },
            'Continuer sans jeton',
          )
        : null,
    ),
  );
}

function renderBody(state: PanelState, actions: Actions): Child {
  const { loadError, loading, view, projectId } = state;
  const errorBanner =
    loadError === null
      ? null
      : h(
          'div',
          { class: 'banner banner-error', role: 'alert' },
          h('p', null, 'Impossible de charger les permissions.'),
          renderFrenchError(frenchError(loadError), 'load-error'),
          view === null
            ? null
            : h(
                'p',
                null,
                'Les données ci-dessous sont celles du dernier chargement réussi : elles ne sont pas modifiables tant que le service ne répond pas.',
              ),
          h(
            'button',
            {
              id: 'retry',
              class: 'button',
              type: 'button',
              onclick: () => {
                actions.retryLoad();
              },
            },
            'Réessayer',
          ),
        );
  if (view === null) {
    if (loading) return [errorBanner, renderSkeleton()];
    if (projectId === null && loadError === null)
      return [renderLiveNotice(state, actions), h('p', { class: 'empty' }, 'Aucun projet servi par ce service.')];
    return errorBanner;
  }
  const invalid =
    view.status === 'invalid'
      ? h(
          'div',
          { class: 'banner banner-error', role: 'alert', id: 'invalid-banner' },
          h('p', null, 'La policy de ce projet est invalide : toutes les décisions sont refusées jusqu\u2019à sa réparation.'),
          view.error === null ? null : renderFrenchError(frenchPolicyError(view.error), 'policy-error'),
        )
      : null;
  const isStale = stale(state);
  return [
    renderLiveNotice(state, actions),
    errorBanner,
    invalid,
    h(
      'div',
      { class: `layout${isStale ? ' layout-stale' : ''}`, 'aria-busy': String(loading), inert: isStale },
      renderTargets(state, actions),
      renderTabPanels(state, actions),
    ),
  ];
}

/** A change the live events made that the user did not ask for (the open project is gone). */
function renderLiveNotice(state: PanelState, actions: Actions): Child {
  const notice = state.liveNotice;
  if (notice === null) return null;
  return h(
    'div',
    { class: 'banner banner-info', id: 'live-notice' },
    h('p', null, notice),
    h(
      'button',
      {
        id: 'live-notice-close',
        class: 'button button-quiet',
        type: 'button',
        onclick: () => {
          actions.closeLiveNotice();
        },
      },
      'Fermer',
    ),
  );
}

function renderSkeleton(): Child {
  const lines = (count: number): Child => Array.from({ length: count }, () => h('div', { class: 'skeleton-line' }));
  return h(
    'div',
    { class: 'layout', 'aria-busy': 'true' },
    h('div', { class: 'targets skeleton' }, h('span', { class: 'visually-hidden' }, 'Chargement…'), lines(6)),
    h('div', { class: 'editor skeleton', 'aria-hidden': 'true' }, lines(10)),
  );
}
