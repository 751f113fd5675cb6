/**
 * The page around the editor: header (project selector, token), tabs, load states.
 */
import { h, type Child } from './dom.js';
import { renderEditor } from './editor-view.js';
import { frenchError, frenchPolicyError } from './errors-fr.js';
import { renderFrenchError } from './feedback-view.js';
import type { Panel } from './panel.js';
import { renderRepair } from './repair-view.js';
import { renderRequests, renderRequestsTabLabel, requestsTabName } from './requests-view.js';
import type { LiveState } from './live-stream.js';
import type { Tab } from './state.js';
import { renderTargets } from './targets-view.js';

const TABS: readonly { id: Tab; label: string }[] = [
  { id: 'system', label: 'Système' },
  { id: 'mcp', label: 'Tools MCP IdeA' },
  { id: 'requests', label: 'Demandes' },
];

export function renderPage(panel: Panel): Child {
  const state = panel.state;
  return [
    h('header', { class: 'topbar' }, h('h1', null, 'Permissions'), renderProjectSelector(panel), renderTokenStatus(panel)),
    h(
      'div',
      { class: 'tabs-row' },
      renderTabs(panel),
      h(
        'div',
        { class: 'refresh-area' },
        renderLiveStatus(panel),
        h('button', { id: 'refresh', class: 'button', type: 'button', onclick: () => void panel.reloadView() }, 'Actualiser'),
      ),
    ),
    state.tokenForm.open ? renderTokenForm(panel) : null,
    h(
      'div',
      { role: 'tabpanel', id: 'panel-mcp', 'aria-labelledby': 'tab-mcp', hidden: state.tab !== 'mcp' },
      state.tab === 'mcp' ? renderMcpPanel(panel) : null,
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
    h(
      'div',
      { role: 'tabpanel', id: 'panel-requests', 'aria-labelledby': 'tab-requests', hidden: state.tab !== 'requests' },
      state.tab === 'requests' ? renderRequests(panel) : null,
    ),
  ];
}

/** Tabs with a roving tabindex: arrows, Home and End move (and activate) the selection. */
function renderTabs(panel: Panel): Child {
  const onKeydown = (event: Event): void => {
    if (!(event instanceof KeyboardEvent)) return;
    const index = TABS.findIndex((tab) => tab.id === panel.state.tab);
    const moves: Record<string, number> = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: TABS.length - 1 };
    const nextIndex = moves[event.key];
    if (nextIndex === undefined) return;
    event.preventDefault();
    const next = TABS[(nextIndex + TABS.length) % TABS.length];
    if (next === undefined) return;
    panel.setTab(next.id);
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
          'aria-selected': String(panel.state.tab === tab.id),
          'aria-controls': `panel-${tab.id}`,
          tabindex: panel.state.tab === tab.id ? 0 : -1,
          'aria-label': tab.id === 'requests' ? requestsTabName(panel) : null,
          onclick: () => panel.setTab(tab.id),
        },
        tab.id === 'requests' ? renderRequestsTabLabel(panel) : tab.label,
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

function renderLiveStatus(panel: Panel): Child {
  const live = panel.state.live;
  return h('span', { id: 'live-status', class: `live-status live-${live}` }, LIVE_TEXT[live]);
}

function renderProjectSelector(panel: Panel): Child {
  const { projects, projectId } = panel.state;
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
          select.value = panel.state.projectId ?? wanted; // the guard may refuse the change
          panel.selectProject(wanted);
        },
      },
      projects.map((project) => h('option', { value: project.id, selected: project.id === projectId }, projectOptionText(panel, project))),
    ),
  );
}

function projectOptionText(panel: Panel, project: { id: string; status: string }): string {
  const invalid = project.status === 'invalid' ? ' (policy invalide)' : '';
  const waiting = panel.state.requests.elsewhere.has(project.id) ? ' — demandes en attente' : '';
  return `${project.id}${invalid}${waiting}`;
}

/** Who the panel acts as; never worded like a policy state ("Lecture seule" is the default's). */
function renderTokenStatus(panel: Panel): Child {
  const { token, role } = panel.state;
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
          { id: 'token-forget', class: 'button button-quiet', type: 'button', onclick: () => panel.forgetToken() },
          'Oublier le jeton',
        )
      : panel.state.tokenForm.open
        ? null
        : h(
            'button',
            { id: 'token-open', class: 'button button-quiet', type: 'button', onclick: () => panel.openTokenForm() },
            'Saisir le jeton administrateur',
          );
  return h('div', { class: 'token-status' }, pill, action);
}

function renderTokenForm(panel: Panel): Child {
  const { reason, checking, error } = panel.state.tokenForm;
  const onSubmit = (event: Event): void => {
    event.preventDefault();
    const input = document.getElementById('token-input');
    if (input instanceof HTMLInputElement) void panel.submitToken(input.value);
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
      panel.state.token === null
        ? h(
            'button',
            { id: 'token-dismiss', class: 'button', type: 'button', onclick: () => panel.dismissTokenForm() },
            'Continuer sans jeton',
          )
        : null,
    ),
  );
}

function renderMcpPanel(panel: Panel): Child {
  const { loadError, loading, view, projectId } = panel.state;
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
          h('button', { id: 'retry', class: 'button', type: 'button', onclick: () => void panel.load() }, 'Réessayer'),
        );
  if (view === null) {
    if (loading) return [errorBanner, renderSkeleton()];
    if (projectId === null && loadError === null)
      return [renderLiveNotice(panel), h('p', { class: 'empty' }, 'Aucun projet servi par ce service.')];
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
  const stale = panel.stale();
  return [
    renderLiveNotice(panel),
    errorBanner,
    invalid,
    h(
      'div',
      { class: `layout${stale ? ' layout-stale' : ''}`, 'aria-busy': String(loading), inert: stale },
      renderTargets(panel),
      view.status === 'invalid' ? renderRepair(panel) : renderEditor(panel),
    ),
  ];
}

/** A change the live events made that the user did not ask for (the open project is gone). */
function renderLiveNotice(panel: Panel): Child {
  const notice = panel.state.liveNotice;
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
          panel.state.liveNotice = null;
          panel.state.focusAfterRender = 'refresh';
          panel.changed();
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
