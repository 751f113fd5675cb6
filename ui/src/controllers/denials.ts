/**
 * "Refus récents": reads the last denials of the open project. The service sends no event for a
 * decision, so the list is read again after every load of the view (a policy event), on every
 * `approval` event (an ask is a denial too), and every {@link DENIALS_REFRESH_MS} while the page
 * is visible. One read at a time; a burst of reasons to read costs one more read.
 */
import { asApiError, type PermissionsApi } from '../api/api.js';
import { frenchError } from '../model/errors-fr.js';
import { DENIALS_LIMIT, type PanelState } from '../state/state.js';
import type { Store } from '../state/store.js';
import { SerialRead } from './serial-read.js';

/** A denial shows up within 5 s; 12 small reads a minute is nothing for the service (a GET of a ring). */
export const DENIALS_REFRESH_MS = 5000;

export class Denials {
  private readonly reads = new SerialRead(() => this.read());
  private seenLoad = 0;

  constructor(
    private readonly store: Store,
    private readonly api: PermissionsApi,
  ) {}

  private get state(): Readonly<PanelState> {
    return this.store.state;
  }

  /** A store listener: every new load of the view reads the list again. */
  followLoads(): void {
    if (this.state.loadCount === this.seenLoad) return;
    this.seenLoad = this.state.loadCount;
    void this.refresh();
  }

  refresh(): Promise<void> {
    return this.reads.run();
  }

  private async read(): Promise<void> {
    const project = this.state.projectId;
    if (project === null) return;
    try {
      const { decisions } = await this.api.recentDenials(project, DENIALS_LIMIT);
      if (this.state.projectId !== project) return;
      const denials = this.state.denials;
      // Nothing new: no render (the periodic read must not redraw the page every few seconds).
      if (denials.loaded && denials.loadError === null && denials.decisions[0]?.decisionId === decisions[0]?.decisionId) return;
      this.store.stage((state) => {
        state.denials = { loaded: true, decisions: decisions.filter((entry) => !entry.allow), loadError: null };
      });
    } catch (error) {
      if (this.state.projectId !== project) return;
      const loadError = frenchError(asApiError(error));
      this.store.stage((state) => {
        state.denials = { ...state.denials, loaded: true, loadError };
      });
    }
    // After the try: a listener's failure is not this read's failure.
    this.store.changed();
  }
}
