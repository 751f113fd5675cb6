/**
 * The time of approvals and grants. Everything kept in memory is timed on a clock that never steps
 * back (`performance.now()`, anchored at the process's start so that it reads like epoch
 * milliseconds); the wall clock only turns those times into the absolute times shown on the wire
 * and written to the state file. A wall clock set back an hour (NTP, a resumed VM) then revives
 * no expired grant, `once` or request.
 */
export interface ServiceClock {
  /** Milliseconds that only ever grow: what every expiry in memory is compared with. */
  monotonic(): number;
  /** The wall clock (epoch milliseconds): for absolute times only. */
  wall(): number;
}

export const SYSTEM_CLOCK: ServiceClock = {
  monotonic: () => performance.timeOrigin + performance.now(),
  wall: () => Date.now(),
};

/** What to add to a monotonic time to get the wall time of that instant, now. */
export function wallOffsetOf(clock: ServiceClock | undefined): number {
  // Whole milliseconds: an absolute time written, read back and shown again stays the same instant.
  return clock === undefined ? 0 : Math.round(clock.wall() - clock.monotonic());
}

/**
 * The monotonic expiry of an absolute one read from the state file, or undefined when it is over:
 * never more than `lifetimeMs` (what it was given) from now, so a wall clock set back since it
 * was written does not lengthen it.
 */
export function restoredExpiry(expiresAtWall: number, lifetimeMs: number, now: number, wallNow: number): number | undefined {
  const left = Math.min(expiresAtWall - wallNow, lifetimeMs);
  return left > 0 ? now + left : undefined;
}

/**
 * The offset to write a record's absolute times with: its own, so a restart shows the same times,
 * unless the wall clock has since moved by more than a second against the monotonic one (a step),
 * when today's reading keeps what is written no longer than what is left.
 */
export function persistedOffset(recordOffset: number, currentOffset: number): number {
  return Math.abs(currentOffset - recordOffset) > 1000 ? currentOffset : recordOffset;
}
