/**
 * A list of the open project that the panel reads again and again (Refus récents, the approval
 * requests and grants, the other MCP servers): the service sends no event for all that changes it,
 * so it is read after every load of the view and on the controller's own triggers. One read at a
 * time, and a burst of reasons to read during a read costs exactly one more (the reads would
 * otherwise race, and an older answer could land last); an answer for a project no longer open
 * is dropped; the page is drawn once the read ends.
 */
import { asApiError, type ApiError } from '../api/api.js';
import type { PanelState } from '../state/state.js';
import type { Store } from '../state/store.js';

export abstract class ProjectList<Answer> {
  private reading: Promise<void> | null = null;
  private readAgain = false;
  /** The load this list was last read for. */
  private seenLoad = 0;

  constructor(protected readonly store: Store) {}

  protected get state(): Readonly<PanelState> {
    return this.store.state;
  }

  /** A store listener: every new load of the view reads the list again. */
  followLoads(): void {
    if (this.state.loadCount === this.seenLoad) return;
    this.seenLoad = this.state.loadCount;
    void this.refresh();
  }

  /** Starts a read, or asks for one more after the read in progress; resolves when that one ends. */
  refresh(): Promise<void> {
    if (this.reading !== null) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = null;
      if (this.readAgain) {
        this.readAgain = false;
        void this.refresh();
      }
    });
    return this.reading;
  }

  /** Asks the service for the list of `project`. */
  protected abstract fetch(project: string): Promise<Answer>;

  /**
   * Stages `answer`, read for `project` (still the open one), into the state; false when nothing
   * changed, so nothing is drawn (a periodic read must not redraw the page every few seconds).
   */
  protected abstract apply(answer: Answer, project: string): boolean | Promise<boolean>;

  /** Stages the failure of a read of the open project. */
  protected abstract readFailed(failure: ApiError): void;

  private async read(): Promise<void> {
    const project = this.state.projectId;
    if (project === null) return;
    try {
      const answer = await this.fetch(project);
      if (this.state.projectId !== project) return;
      if (!(await this.apply(answer, project))) return;
    } catch (error) {
      if (this.state.projectId !== project) return;
      this.readFailed(asApiError(error));
    }
    // After the try: a listener's failure is not this read's failure.
    this.store.changed();
  }
}
