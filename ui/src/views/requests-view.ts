/**
 * "Demandes", opened from the header button: the pending approval requests with their four answers, then the temporary
 * grants with their remaining time and "Retirer". Remaining times are `[data-until]` texts that
 * countdown.ts keeps current in place.
 */
import type { Approval, Grant } from '../../../schemas/approvals.js';
import { clockText, remainingText } from '../dom/countdown.js';
import { h, type Child } from '../dom/dom.js';
import { renderFrenchError } from './feedback-view.js';
import type { Actions } from './actions.js';
import { GRANT_DURATIONS, domKey } from '../model/requests-model.js';
import { agentName, canAnswer } from '../state/selectors.js';
import type { PanelState } from '../state/state.js';

/** A remaining time that counts down by itself. */
function until(iso: string, id?: string): Child {
  return h('span', { class: 'until', 'data-until': iso, id }, remainingText(Date.parse(iso) - Date.now()));
}

/** The header button's accessible name, with the count of pending requests ("Demandes d'approbation, 2 en attente"). */
export function requestsButtonName(state: PanelState): string {
  const count = state.requests.pending.length;
  return `Demandes d\u2019approbation, ${count === 0 ? 'aucune' : count} en attente`;
}

/** In the header: opens the requests and grants in the right column (the targets stay), or closes them. */
export function renderRequestsButton(state: PanelState, actions: Actions): Child {
  if (state.projectId === null || state.requests.unsupported) return null;
  const count = state.requests.pending.length;
  const open = state.requestsOpen;
  return h(
    'button',
    {
      id: 'requests-open',
      class: `button requests-button${count > 0 ? ' requests-waiting' : ''}`,
      type: 'button',
      'aria-expanded': String(open),
      'aria-controls': 'panel-mcp',
      'aria-label': requestsButtonName(state),
      onclick: () => {
        actions.showRequests(!open);
      },
    },
    'Demandes',
    h('span', { class: 'count-badge', 'aria-hidden': 'true' }, String(count)),
  );
}

export function renderRequests(state: PanelState, actions: Actions): Child {
  const requests = state.requests;
  if (requests.unsupported) return h('p', { class: 'empty' }, 'Ce service ne gère pas les demandes d\u2019approbation.');
  const answerable = canAnswer(state);
  return h(
    'section',
    { class: 'requests-page', id: 'requests-panel', 'aria-label': 'Demandes d\u2019approbation et accords temporaires' },
    h(
      'button',
      {
        id: 'requests-close',
        class: 'button button-quiet',
        type: 'button',
        onclick: () => {
          actions.showRequests(false);
        },
      },
      'Retour à l\u2019éditeur',
    ),
    requests.loadError === null
      ? null
      : h(
          'div',
          { class: 'banner banner-error', role: 'alert' },
          h('p', null, 'Impossible de lire les demandes.'),
          renderFrenchError(requests.loadError, 'requests-load-error'),
          h(
            'button',
            {
              id: 'requests-retry',
              class: 'button',
              type: 'button',
              onclick: () => {
                actions.refreshRequests();
              },
            },
            'Réessayer',
          ),
        ),
    requests.problem === null
      ? null
      : h(
          'div',
          { class: 'banner banner-error', role: 'alert', id: 'requests-error' },
          renderFrenchError(requests.problem, 'requests-error'),
        ),
    renderRequestsNotice(state),
    renderPending(state, actions, answerable),
    renderGrants(state, actions, answerable),
  );
}

function renderPending(state: PanelState, actions: Actions, answerable: boolean): Child {
  const { pending, loaded } = state.requests;
  return h(
    'section',
    { class: 'requests', 'aria-labelledby': 'requests-title' },
    h(
      'h2',
      { id: 'requests-title', tabindex: -1 },
      'Demandes en attente',
      pending.length === 0 ? null : h('span', { class: 'count-badge' }, String(pending.length)),
    ),
    h(
      'p',
      { class: 'mode-hint', id: 'requests-hint' },
      'Un agent a appelé un tool réglé sur « Sur demande » : l\u2019appel est refusé, ou attend votre réponse, jusqu\u2019à ce que vous répondiez. « Toujours autoriser » ajoute le tool aux tools autorisés de l\u2019agent (son override est créé s\u2019il n\u2019en a pas).',
    ),
    answerable ? null : h('p', { class: 'mode-hint' }, 'Répondre demande le jeton administrateur.'),
    !loaded
      ? h('p', { class: 'empty' }, 'Chargement des demandes…')
      : pending.length === 0
        ? h('p', { class: 'empty', id: 'requests-empty' }, 'Aucune demande en attente.')
        : h(
            'ul',
            { class: 'request-list' },
            pending.map((request) => renderRequest(state, actions, request, answerable)),
          ),
  );
}

function renderRequest(state: PanelState, actions: Actions, request: Approval, answerable: boolean): Child {
  const key = domKey(request.id);
  const agent = agentName(state, request.requester);
  const button = answerButton(!answerable || state.requests.busy !== null);
  const open = state.requests.durationsFor === request.id;
  return h(
    'li',
    { class: 'request', 'aria-labelledby': `request-${key}-title` },
    renderRequestHead(state, request, agent),
    renderAnswers(actions, request, agent, open, button),
    open ? renderDurations(actions, request, button) : null,
  );
}

type AnswerButton = (id: string, text: string, onclick: () => void, extra?: Record<string, string | null>) => Child;

/** The buttons of one request's answers, inert while another answer is sent or without the admin token. */
function answerButton(inert: boolean): AnswerButton {
  const disabled = inert ? 'true' : null;
  return (id, text, onclick, extra = {}) =>
    h('button', { id, class: 'button', type: 'button', 'aria-disabled': disabled, onclick, ...extra }, text);
}

/** Who wants to call what (with the id when the name differs), the tool's class, the ticket, and the time left. */
function renderRequestHead(state: PanelState, request: Approval, agent: string): Child {
  const key = domKey(request.id);
  const tool = state.catalog?.tools.find((entry) => entry.name === request.tool);
  return [
    h(
      'h3',
      { id: `request-${key}-title` },
      `${agent} veut appeler `,
      h('code', null, request.tool),
      agent === request.requester ? null : h('span', { class: 'agent-id' }, ' (id ', h('code', null, request.requester), ')'),
    ),
    h(
      'p',
      { class: 'request-meta' },
      tool === undefined ? null : [tool.label, ' · ', tool.access === 'read' ? 'Lecture' : 'Écriture', ' · '],
      request.issueRef === undefined ? null : [`ticket ${request.issueRef} · `],
      `demandé à ${clockText(request.createdAt)} · expire dans `,
      until(request.expiresAt),
    ),
  ];
}

/** The four answers: once, for a while (opens the durations), always, refuse. */
function renderAnswers(actions: Actions, request: Approval, agent: string, open: boolean, button: AnswerButton): Child {
  const key = domKey(request.id);
  return h(
    'div',
    { class: 'button-row request-actions', role: 'group', 'aria-label': `Réponse à ${agent} pour ${request.tool}` },
    button(
      `approve-once-${key}`,
      'Autoriser une fois',
      () => {
        actions.answer(request.id, 'once');
      },
      {
        class: 'button button-primary',
      },
    ),
    button(
      `approve-for-${key}`,
      'Autoriser pendant…',
      () => {
        actions.showDurations(open ? null : request.id);
      },
      {
        'aria-expanded': String(open),
        'aria-controls': `durations-${key}`,
      },
    ),
    button(`approve-always-${key}`, 'Toujours autoriser', () => {
      actions.answer(request.id, 'always');
    }),
    button(
      `deny-${key}`,
      'Refuser',
      () => {
        actions.answer(request.id, 'deny');
      },
      { class: 'button button-danger' },
    ),
  );
}

/** "Autoriser pendant…" opened: one button per duration; Escape closes them. */
function renderDurations(actions: Actions, request: Approval, button: AnswerButton): Child {
  const key = domKey(request.id);
  const onDurationsKey = (event: Event): void => {
    if (event instanceof KeyboardEvent && event.key === 'Escape') {
      event.preventDefault();
      actions.showDurations(null);
    }
  };
  return h(
    'div',
    {
      id: `durations-${key}`,
      class: 'button-row durations',
      role: 'group',
      'aria-label': 'Autoriser pendant',
      onkeydown: onDurationsKey,
    },
    GRANT_DURATIONS.map((duration) =>
      button(
        `approve-for-${key}-${duration.seconds}`,
        duration.label,
        () => {
          actions.answer(request.id, 'for', duration.seconds);
        },
        {
          'aria-label': `Autoriser pendant ${duration.spoken}`,
        },
      ),
    ),
  );
}

function renderGrants(state: PanelState, actions: Actions, answerable: boolean): Child {
  const { grants, loaded } = state.requests;
  return h(
    'section',
    { class: 'grants', 'aria-labelledby': 'grants-title' },
    h('h2', { id: 'grants-title', tabindex: -1 }, 'Accords temporaires'),
    h(
      'p',
      { class: 'mode-hint' },
      'Un accord temporaire laisse un agent appeler ces tools jusqu\u2019à son échéance, quelle que soit sa policy. « Retirer » l\u2019arrête dès le prochain appel.',
    ),
    !loaded
      ? null
      : grants.length === 0
        ? h('p', { class: 'empty', id: 'grants-empty' }, 'Aucun accord temporaire en cours.')
        : h(
            'ul',
            { class: 'grant-list' },
            grants.map((grant) => renderGrant(state, actions, grant, answerable)),
          ),
  );
}

function renderGrant(state: PanelState, actions: Actions, grant: Grant, answerable: boolean): Child {
  const key = domKey(grant.id);
  const agent = agentName(state, grant.requester);
  return h(
    'li',
    { class: 'grant', 'aria-labelledby': `grant-${key}-title` },
    h(
      'p',
      { id: `grant-${key}-title`, class: 'grant-title' },
      h('strong', null, agent),
      ' : ',
      grant.tools.map((tool, index) => [index === 0 ? null : ', ', h('code', null, tool)]),
    ),
    h(
      'p',
      { class: 'request-meta' },
      'reste ',
      until(grant.expiresAt, `grant-${key}-left`),
      ` (jusqu\u2019à ${clockText(grant.expiresAt)})`,
    ),
    h(
      'button',
      {
        id: `revoke-${key}`,
        class: 'button',
        type: 'button',
        'aria-disabled': !answerable || state.requests.busy !== null ? 'true' : null,
        'aria-label': `Retirer l\u2019accord temporaire de ${agent} (${grant.tools.join(', ')})`,
        onclick: () => {
          actions.revoke(grant.id);
        },
      },
      'Retirer',
    ),
  );
}

/** What the last answer did: a refusal in the error style, anything else as a confirmation. */
function renderRequestsNotice(state: PanelState): Child {
  const notice = state.requests.notice;
  if (notice === null) return h('p', { class: 'saved-status', id: 'requests-notice' });
  return h('p', { class: notice.refusal ? 'saved-status status-refusal' : 'saved-status', id: 'requests-notice' }, notice.text);
}

/** The selected agent's pending requests, answered beside its editor. */
export function renderAgentRequests(state: PanelState, actions: Actions, agentId: string): Child {
  const pending = state.requests.pending.filter((request) => request.requester === agentId);
  // The last answer stays said here after the agent's last request is gone.
  if (pending.length === 0) return state.requests.notice?.requester === agentId ? renderRequestsNotice(state) : null;
  const answerable = canAnswer(state);
  return h(
    'section',
    { class: 'agent-requests', id: 'agent-requests', 'aria-labelledby': 'agent-requests-title' },
    h(
      'h3',
      { id: 'agent-requests-title', tabindex: -1 },
      pending.length === 1
        ? '1 demande d\u2019approbation en attente pour cet agent'
        : `${pending.length} demandes d\u2019approbation en attente pour cet agent`,
    ),
    answerable ? null : h('p', { class: 'mode-hint' }, 'Répondre demande le jeton administrateur.'),
    renderRequestsNotice(state),
    h(
      'ul',
      { class: 'request-list' },
      pending.map((request) => renderRequest(state, actions, request, answerable)),
    ),
  );
}
