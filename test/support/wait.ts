/**
 * Deadline-based polling: a test waits for a condition, never for a bare sleep. {@link elapse} is
 * the one exception, for time that must pass on purpose.
 */

/** Polls `probe` every `intervalMs` until it returns true; throws after `timeoutMs`. Resolves with the time it took. */
export async function waitFor(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000, intervalMs = 10): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/**
 * Lets `ms` pass. Only for a window in which the test asserts that nothing happens, or for a delay
 * that is part of the scenario (a folder away for a while, jitter between racing writers); never to
 * wait for something to have happened (that is {@link waitFor}).
 */
export function elapse(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
