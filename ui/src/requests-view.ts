/**
 * The "Demandes" tab: the pending approval requests with their four answers, then the temporary
 * grants with their remaining time and "Retirer". Remaining times are `[data-until]` texts that
 * countdown.ts keeps current in place.
 */
import type { Approval, Grant } from '../../schemas/approvals.js';
import { clockText, remainingText } from './countdown.js';
import { h, type Child } from './dom.js';
import { renderFrenchError } from './feedback-view.js';
import type { Panel } from './panel.js';
import { GRANT_DURATIONS, domKey } from './requests.js';

/** A remaining time that counts down by itself. */
function until(iso: string, id?: string): Child {
  return h('span', { class: 'until', 'data-until': iso, id }, remainingText(Date.parse(iso) - Date.now()));
}

/** The tab's accessible name with the count of pending requests ("Demandes, 2 en attente"). */
export function requestsTabName(panel: Panel): string {
  const count = panel.state.requests.pending.length;
  return count === 0 ? 'Demandes' : `Demandes, ${count} en attente`;
}

/** The tab's visible text: the count is a badge. */
export function renderRequestsTabLabel(panel: Panel): Child {
  const count = panel.state.requests.pending.length;
  return ['Demandes', count === 0 ? null : h('span', { class: 'count-badge', 'aria-hidden': 'true' }, String(count))];
}

/** In a tool row of an agent: the live temporary grant that lets it call the tool anyway. */
export function renderGrantBadge(panel: Panel, tool: string): Child {
  const target = panel.state.target;
  if (target.kind !== 'agent') return null;
  const grant = panel.requests.grantFor(target.agentId, tool);
  if (grant === undefined) return null;
  return h('span', { class: 'grant-note' }, ' · accord temporaire, encore ', until(grant.expiresAt));
}

export function renderRequests(panel: Panel): Child {
  const requests = panel.state.requests;
  if (requests.unsupported) return h('p', { class: 'empty' }, 'Ce service ne gère pas les demandes d\u2019approbation.');
  const canAnswer = panel.requests.canAnswer();
  return h(
    'div',
    { class: 'requests-page' },
    requests.loadError === null
      ? null
      : h(
          'div',
          { class: 'banner banner-error', role: 'alert' },
          h('p', null, 'Impossible de lire les demandes.'),
          renderFrenchError(requests.loadError, 'requests-load-error'),
          h('button', { id: 'requests-retry', class: 'button', type: 'button', onclick: () => void panel.requests.refresh() }, 'Réessayer'),
        ),
    requests.problem === null
      ? null
      : h(
          'div',
          { class: 'banner banner-error', role: 'alert', id: 'requests-error' },
          renderFrenchError(requests.problem, 'requests-error'),
        ),
    h('p', { class: 'saved-status', id: 'requests-notice' }, requests.notice ?? ''),
    renderPending(panel, canAnswer),
    renderGrants(panel, canAnswer),
  );
}

function renderPending(panel: Panel, canAnswer: boolean): Child {
  const { pending, loaded } = panel.state.requests;
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
      'Un agent a appelé un tool réglé sur « Demander » : l\u2019appel est refusé, ou attend votre réponse, jusqu\u2019à ce que vous répondiez. « Toujours autoriser » ajoute le tool aux tools autorisés de l\u2019agent (son override est créé s\u2019il n\u2019en a pas).',
    ),
    canAnswer ? null : h('p', { class: 'mode-hint' }, 'Répondre demande le jeton administrateur.'),
    !loaded
      ? h('p', { class: 'empty' }, 'Chargement des demandes…')
      : pending.length === 0
        ? h('p', { class: 'empty', id: 'requests-empty' }, 'Aucune demande en attente.')
        : h(
            'ul',
            { class: 'request-list' },
            pending.map((request) => renderRequest(panel, request, canAnswer)),
          ),
  );
}

function renderRequest(panel: Panel, request: Approval, canAnswer: boolean): Child {
  const key = domKey(request.id);
  const tool = panel.state.catalog?.tools.find((entry) => entry.name === request.tool);
  const agent = panel.requests.agentName(request.requester);
  const busy = panel.state.requests.busy !== null;
  const disabled = !canAnswer || busy ? 'true' : null;
  const open = panel.state.requests.durationsFor === request.id;
  const button = (id: string, text: string, onclick: () => void, extra: Record<string, string | null> = {}): Child =>
    h('button', { id, class: 'button', type: 'button', 'aria-disabled': disabled, onclick, ...extra }, text);
  const onDurationsKey = (event: Event): void => {
    if (event instanceof KeyboardEvent && event.key === 'Escape') {
      event.preventDefault();
      panel.requests.showDurations(null);
    }
  };
  return h(
    'li',
    { class: 'request', 'aria-labelledby': `request-${key}-title` },
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
    h(
      'div',
      { class: 'button-row request-actions', role: 'group', 'aria-label': `Réponse à ${agent} pour ${request.tool}` },
      button(`approve-once-${key}`, 'Autoriser une fois', () => void panel.requests.answer(request.id, 'once'), {
        class: 'button button-primary',
      }),
      button(`approve-for-${key}`, 'Autoriser pendant…', () => panel.requests.showDurations(open ? null : request.id), {
        'aria-expanded': String(open),
        'aria-controls': `durations-${key}`,
      }),
      button(`approve-always-${key}`, 'Toujours autoriser', () => void panel.requests.answer(request.id, 'always')),
      button(`deny-${key}`, 'Refuser', () => void panel.requests.answer(request.id, 'deny'), { class: 'button button-danger' }),
    ),
    open
      ? h(
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
              () => void panel.requests.answer(request.id, 'for', duration.seconds),
              { 'aria-label': `Autoriser pendant ${duration.spoken}` },
            ),
          ),
        )
      : null,
  );
}

function renderGrants(panel: Panel, canAnswer: boolean): Child {
  const { grants, loaded } = panel.state.requests;
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
            grants.map((grant) => renderGrant(panel, grant, canAnswer)),
          ),
  );
}

function renderGrant(panel: Panel, grant: Grant, canAnswer: boolean): Child {
  const key = domKey(grant.id);
  const agent = panel.requests.agentName(grant.requester);
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
        'aria-disabled': !canAnswer || panel.state.requests.busy !== null ? 'true' : null,
        'aria-label': `Retirer l\u2019accord temporaire de ${agent} (${grant.tools.join(', ')})`,
        onclick: () => void panel.requests.revoke(grant.id),
      },
      'Retirer',
    ),
  );
}
