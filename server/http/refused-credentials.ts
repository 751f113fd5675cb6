/**
 * The log of refused credentials (docs/operations.md): a client with a wrong or missing token
 * shows in the service's log (route, address, which token kind the route expected, what kind the
 * request carried), never with the token, and at a bounded rate.
 */
import type { Logger } from 'pino';
import type { RefusedCredential } from './auth.js';

/**
 * Lines per minute at most: the first refusals of a misconfigured client show at once, and a flood
 * of bad tokens (a scanner, a client retrying in a loop) cannot fill the log. The next line after
 * a quiet spell says how many were left out (`suppressed`); the metric counts them all.
 */
export const REFUSED_CREDENTIAL_LINES_PER_MINUTE = 10;
const WINDOW_MS = 60_000;

/** A function for `installAuth`'s `onRefused` that logs at most {@link REFUSED_CREDENTIAL_LINES_PER_MINUTE} lines a minute. */
export function refusedCredentialLog(logger: Pick<Logger, 'warn'>, clock: () => number = Date.now): (refusal: RefusedCredential) => void {
  let windowStart = Number.NEGATIVE_INFINITY;
  let logged = 0;
  let suppressed = 0;
  return (refusal) => {
    const now = clock();
    if (now - windowStart >= WINDOW_MS) {
      windowStart = now;
      logged = 0;
    }
    if (logged >= REFUSED_CREDENTIAL_LINES_PER_MINUTE) {
      suppressed += 1;
      return;
    }
    logged += 1;
    const fields = {
      method: refusal.method,
      route: refusal.route,
      remoteAddress: refusal.remoteAddress,
      expected: refusal.expected,
      presented: refusal.presented,
      ...(suppressed === 0 ? {} : { suppressed }),
    };
    suppressed = 0;
    logger.warn(fields, 'credentials refused');
  };
}
