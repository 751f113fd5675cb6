/**
 * The panel's one store: the state every view reads, and the listeners told after each change.
 * Controllers change the state only through {@link Store.update} (or {@link Store.stage} for a
 * step of a longer task); nothing else keeps a copy of it.
 */
import type { PanelState } from './state.js';

export type Listener = (state: PanelState) => void;

export class Store {
  private readonly listeners = new Set<Listener>();
  readonly #state: PanelState;

  constructor(state: PanelState) {
    this.#state = state;
  }

  /** The state as it is now, to read: a change goes through {@link Store.update}. */
  get state(): Readonly<PanelState> {
    return this.#state;
  }

  /** Calls `listener` after every change; returns the way to stop. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Applies `change` to the state, then tells every listener once (the render coalesces several updates into one). */
  update(change: (state: PanelState) => void): void {
    change(this.#state);
    this.changed();
  }

  /**
   * Applies `change` without telling the listeners: a step of a task (a load across several
   * reads) whose end calls {@link Store.update}, so the page never shows it half done.
   */
  stage(change: (state: PanelState) => void): void {
    change(this.#state);
  }

  /** Tells every listener with no change: the page is drawn again from the state (e.g. a checkbox the browser ticked on its own). */
  changed(): void {
    for (const listener of [...this.listeners]) listener(this.#state);
  }
}
