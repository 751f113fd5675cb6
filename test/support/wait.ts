/** Deadline-based polling: a test waits for a condition, never for a bare sleep. */

/** Polls `probe` every `intervalMs` until it returns true; throws after `timeoutMs`. Resolves with the time it took. */
export async function waitFor(probe: () => Promise<boolean> | boolean, what: string, timeoutMs = 10_000, intervalMs = 10): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
