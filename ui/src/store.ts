/**
 * The panel's one store: the state every view reads, and the listeners told after each change.
 * Controllers change `state` and call {@link Store.changed}; nothing else keeps a copy of it.
 */
import type { PanelState } from './state.js';

export type Listener = (state: PanelState) => void;

export class Store {
  private readonly listeners = new Set<Listener>();

  constructor(readonly state: PanelState) {}

  /** Calls `listener` after every change; returns the way to stop. */
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener that the state changed (the render coalesces several calls into one). */
  changed(): void {
    for (const listener of [...this.listeners]) listener(this.state);
  }
}
