/**
 * "Refus récents": reads the last denials of the open project. The service sends no event for a
 * decision, so the list is read again after every load of the view (a policy event), on every
 * `approval` event (an ask is a denial too), and every {@link DENIALS_REFRESH_MS} while the page
 * is visible. One read at a time; a burst of reasons to read costs one more read.
 */
import type { RecentDecisionsResponse } from '../../../schemas/api.js';
import type { ApiError, PermissionsApi } from '../api/api.js';
import { frenchError } from '../model/errors-fr.js';
import { DENIALS_LIMIT } from '../state/state.js';
import type { Store } from '../state/store.js';
import { ProjectList } from './project-list.js';

/** A denial shows up within 5 s; 12 small reads a minute is nothing for the service (a GET of a ring). */
export const DENIALS_REFRESH_MS = 5000;

export class Denials extends ProjectList<RecentDecisionsResponse> {
  constructor(
    store: Store,
    private readonly api: PermissionsApi,
  ) {
    super(store);
  }

  protected fetch(project: string): Promise<RecentDecisionsResponse> {
    return this.api.recentDenials(project, DENIALS_LIMIT);
  }

  protected apply({ decisions }: RecentDecisionsResponse): boolean {
    const denials = this.state.denials;
    // Nothing new: no render (the periodic read must not redraw the page every few seconds).
    if (denials.loaded && denials.loadError === null && denials.decisions[0]?.decisionId === decisions[0]?.decisionId) return false;
    this.store.stage((state) => {
      state.denials = { loaded: true, decisions: decisions.filter((entry) => !entry.allow), loadError: null };
    });
    return true;
  }

  protected readFailed(failure: ApiError): void {
    const loadError = frenchError(failure);
    this.store.stage((state) => {
      state.denials = { ...state.denials, loaded: true, loadError };
    });
  }
}
