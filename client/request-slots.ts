/**
 * The client's connections to the service: a fixed number of slots, each with its own undici
 * `Client` (one socket, one request at a time), and a queue in front that a call leaves the moment
 * its deadline fires or its caller gives up (`Deadline.fail` takes it out).
 *
 * Why not an undici `Pool`: an aborted request stays in undici's own queue until its connection
 * gets to it, so after a burst of abandoned calls the next one waited behind them. Here a request
 * that did not end cleanly takes its connection with it: the slot gets a fresh `Client` at once.
 */
import { Client } from 'undici';
import type { Deadline } from './transport.js';

/** One connection to the service; `client` is replaced after a request that did not end cleanly. */
export interface Slot {
  client: Client;
}

export class RequestSlots {
  private readonly idle: Slot[] = [];
  private readonly all: Slot[] = [];
  // A Set keeps arrival order and removes a call that gave up in O(1).
  private readonly waiting = new Set<Deadline>();
  private closed = false;

  constructor(
    readonly size: number,
    private readonly connect: () => Client,
  ) {
    for (let index = 0; index < size; index += 1) {
      const slot = { client: connect() };
      this.all.push(slot);
      this.idle.push(slot);
    }
  }

  /** Calls waiting for a slot (tests and diagnostics). */
  get queued(): number {
    return this.waiting.size;
  }

  /**
   * Runs `start` with a slot: now if one is free, else when one is handed over. A call whose
   * deadline fails leaves the queue at once and `start` never runs. Whoever ran `start` owes one
   * {@link RequestSlots.release} of that slot.
   */
  enter(deadline: Deadline, start: (slot: Slot) => void): void {
    if (this.closed) {
      deadline.fail('client closed');
      return;
    }
    const slot = this.waiting.size === 0 ? this.idle.pop() : undefined;
    if (slot !== undefined) {
      start(slot);
      return;
    }
    deadline.queue = this.waiting;
    deadline.start = start;
    this.waiting.add(deadline);
  }

  /**
   * Gives the slot back, to the oldest call still waiting or to the idle ones. `clean` is false when
   * the request failed or was abandoned: its connection may still hold it, so it is dropped.
   */
  release(slot: Slot, clean: boolean): void {
    if (!clean) {
      void slot.client.destroy().catch(() => undefined);
      if (this.closed) return;
      slot.client = this.connect();
    }
    for (const deadline of this.waiting) {
      if (deadline.expireIfPassed()) continue; // it left the queue
      this.waiting.delete(deadline);
      const start = deadline.start;
      deadline.queue = undefined;
      deadline.start = undefined;
      if (start === undefined) continue;
      start(slot);
      return;
    }
    this.idle.push(slot);
  }

  /** Closes every connection once its request is over; later calls fail at once. */
  async close(): Promise<void> {
    this.closed = true;
    for (const deadline of this.waiting) deadline.fail('client closed');
    await Promise.all(this.all.map((slot) => slot.client.close().catch(() => undefined)));
  }
}
