/**
 * Feedback pieces shared by the views: a French message with its technical detail behind
 * "Détails", the problem of the last write, and the short notice shown where the user acted.
 */
import { h, type Child } from '../dom/dom.js';
import type { FrenchError } from '../model/errors-fr.js';
import type { PanelState } from '../state/state.js';

/** The French sentence, then the raw detail (English, codes) folded behind "Détails". */
export function renderFrenchError(error: FrenchError, id: string): Child {
  return [
    h('p', { class: 'error-message' }, error.message),
    error.detail === null
      ? null
      : h(
          'details',
          { class: 'error-details', id: `${id}-details` },
          h('summary', { id: `${id}-summary` }, 'Détails'),
          h('pre', { class: 'mono' }, error.detail),
        ),
  ];
}

/** The last write's problem, above the actions; the draft is always kept. */
export function renderProblem(state: PanelState): Child {
  const problem = state.problem;
  if (problem === null) return null;
  return h('div', { class: 'banner banner-error', role: 'alert', id: 'save-error' }, renderFrenchError(problem, 'save-error'));
}

/** "Permissions enregistrées" and the like, beside the control the user used (the page's live region announces it). */
export function renderNotice(state: PanelState): Child {
  const notice = state.notice;
  const text = notice !== null && notice.until > Date.now() ? notice.text : '';
  return h('p', { class: 'saved-status', id: 'saved-status' }, text);
}
