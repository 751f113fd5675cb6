/**
 * The one clock of the service (docs/design.md#approvals-grants-and-time), read three ways:
 *
 * - `monotonic()` times everything kept in memory (grants, `once` answers, requests, ephemeral
 *   policies, usage windows): `performance.now()`, anchored at the process's start so that it reads
 *   like epoch milliseconds, which never steps back; a wall clock set back an hour (NTP, a resumed
 *   VM) then revives nothing expired.
 * - `wall()` only turns those times into the absolute times shown on the wire and written to files.
 * - `boot()` judges across a restart what a file keeps: `/proc/uptime` counts from the kernel's
 *   boot, whichever process reads it, is not moved by a wall clock step (settimeofday, NTP,
 *   libfaketime), and keeps counting through a suspend, as the wall time a grant was given in does;
 *   `process.hrtime` and `performance.now()` are not it: libfaketime moves them, and the latter
 *   starts at the process's start. The boot id tells whether two readings are of the same boot.
 *
 * Tests move the clock by handing the services another {@link ServiceClock}.
 */
import { readFileSync } from 'node:fs';

export interface BootTime {
  /** `/proc/sys/kernel/random/boot_id`: another value means another boot. */
  readonly id: string;
  /** Milliseconds since that boot. */
  readonly uptimeMs: number;
}

export interface ServiceClock {
  /** Milliseconds that only ever grow: what every expiry in memory is compared with. */
  monotonic(): number;
  /** The wall clock (epoch milliseconds): for absolute times only. */
  wall(): number;
  /** The boot and the time since it, or undefined where the system does not tell; a clock without it reads the system's. */
  boot?(): BootTime | undefined;
}

const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';
const UPTIME_FILE = '/proc/uptime';

/** The boot and the time since it now, or undefined where the system does not tell (not Linux). */
export function readBootTime(
  files: { bootId: string; uptime: string } = { bootId: BOOT_ID_FILE, uptime: UPTIME_FILE },
): BootTime | undefined {
  try {
    const id = readFileSync(files.bootId, 'utf8').trim();
    const seconds = Number(readFileSync(files.uptime, 'utf8').split(' ')[0]);
    if (id === '' || !Number.isFinite(seconds) || seconds < 0) return undefined;
    return { id, uptimeMs: Math.floor(seconds * 1000) };
  } catch {
    return undefined;
  }
}

export const SYSTEM_CLOCK: ServiceClock = {
  monotonic: () => performance.timeOrigin + performance.now(),
  wall: () => Date.now(),
  boot: () => readBootTime(),
};

/** The boot reading of `clock`: its own, or the system's. */
export function bootTimeOf(clock: ServiceClock): BootTime | undefined {
  return clock.boot === undefined ? readBootTime() : clock.boot();
}

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

/**
 * `/proc/uptime` shows centiseconds and wanders up to 15 ms against the wall clock here: a deadline
 * is written this much late, so that it never ends a grant before its wall time says (a restart
 * shows the same times), and a grant outlasts its time by at most this much.
 */
export const BOOT_CLOCK_GRAIN_MS = 50;

/** A monotonic end `expiresAt`, `now` being the monotonic time of the reading `boot`, on the boot clock. */
export function bootDeadline(boot: BootTime, now: number, expiresAt: number): number {
  return Math.ceil(boot.uptimeMs + BOOT_CLOCK_GRAIN_MS + (expiresAt - now));
}

/** What a restart may still know of the time that passed while the service was stopped. */
export interface RestartBounds {
  /** The boot now, if known. */
  readonly boot: BootTime | undefined;
  /** The boot the state file was written in, if it says. */
  readonly savedBootId: string | undefined;
  /** The latest wall time (epoch ms) the service had seen when it wrote the file, if it says. */
  readonly seenWallMs: number | undefined;
}

/**
 * The most milliseconds a kept grant or `once` may still last, by the clocks that a wall clock set
 * back does not move: within the boot it was written in, its deadline on the boot clock; after a
 * reboot (or without one), its wall deadline judged no earlier than the latest wall time seen.
 * `Infinity` when neither is known (a file of an older version: the wall clock alone judges).
 */
export function leftByBoot(bounds: RestartBounds, expiresAtWallMs: number, expiresAtBootMs: number | undefined): number {
  const { boot } = bounds;
  if (boot !== undefined && bounds.savedBootId === boot.id && expiresAtBootMs !== undefined) {
    return expiresAtBootMs - boot.uptimeMs;
  }
  return bounds.seenWallMs === undefined ? Number.POSITIVE_INFINITY : expiresAtWallMs - bounds.seenWallMs;
}
