/**
 * How many requests the client has on the wire at once, with a queue in front that a call leaves
 * the moment its deadline fires or its caller gives up. Requests never wait inside undici's own
 * queue, where an abandoned request keeps its place until a socket reaches it: after a burst far
 * beyond the pool's capacity, the next call finds an empty queue and a free socket.
 */
import type { Deadline } from './transport.js';

interface Waiter {
  grant: () => void;
  leave: () => void;
}

export class RequestSlots {
  private free: number;
  // A Set keeps arrival order and removes a waiter that gave up in O(1).
  private readonly waiters = new Set<Waiter>();

  constructor(readonly size: number) {
    this.free = size;
  }

  /** Requests waiting for a slot (tests and diagnostics). */
  get queued(): number {
    return this.waiters.size;
  }

  /** Requests on the wire. */
  get inUse(): number {
    return this.size - this.free;
  }

  /**
   * Takes a slot: `undefined` when one was free (no promise on the fast path), else a promise that
   * resolves when one is handed over, or rejects as soon as the deadline fails.
   */
  acquire(deadline: Deadline): Promise<void> | undefined {
    if (this.free > 0 && this.waiters.size === 0) {
      this.free -= 1;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        grant: () => {
          deadline.signal.removeListener('abort', waiter.leave);
          resolve();
        },
        leave: () => {
          this.waiters.delete(waiter);
          reject(deadline.lateFailure());
        },
      };
      this.waiters.add(waiter);
      deadline.signal.once('abort', waiter.leave);
    });
  }

  /** Gives the slot back: to the oldest waiter still waiting, else to the pool of free slots. */
  release(): void {
    for (const waiter of this.waiters) {
      this.waiters.delete(waiter);
      waiter.grant();
      return;
    }
    this.free += 1;
  }
}
