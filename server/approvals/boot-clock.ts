/**
 * The system's own time since boot, to judge across a restart what the state file keeps
 * (docs/design.md#approvals-grants-and-time). `/proc/uptime` counts from the kernel's boot,
 * whichever process reads it, is not moved by a wall clock step (settimeofday, NTP, libfaketime),
 * and keeps counting through a suspend, as the wall time a grant was given in does;
 * `process.hrtime` and `performance.now()` are not it: libfaketime moves them, and the latter
 * starts at the process's start. The boot id tells whether two readings are of the same boot.
 */
import { readFileSync } from 'node:fs';

export interface BootTime {
  /** `/proc/sys/kernel/random/boot_id`: another value means another boot. */
  readonly id: string;
  /** Milliseconds since that boot. */
  readonly uptimeMs: number;
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
