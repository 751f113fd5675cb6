/**
 * The `requestState` of an approval asked through a 2026-07-28 `input_required` result: the host
 * sends it back with the user's answer, so it must prove that this process wrote it, for this call.
 * It is sealed with HMAC-SHA-256 under a key drawn at random when the guard starts and never
 * written anywhere, and binds the approval request, project, agent, tool, a hash of the arguments
 * and an expiry. Anything else (a forged or altered seal, another tool or other arguments, a state
 * past its expiry, a state of another process) is refused before the answer reaches the service.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { isJsonObject } from '../decision.js';

/** What a state binds. */
export interface StateClaims {
  approvalId: string;
  project: string;
  requester: string;
  tool: string;
  /** {@link argumentsHash} of the call's arguments. */
  args: string;
  /** Milliseconds since the epoch after which the state is refused. */
  expiresAt: number;
}

/** The prefix of every state this package seals: a state without it is not ours (the server's own, passed through). */
export const STATE_PREFIX = 'ideai.1.';

/** The longest state read (a sealed one is about 400 characters). */
const MAX_STATE_LENGTH = 4096;

export type OpenedState = { ok: true; claims: StateClaims } | { ok: false; cause: string };

export class RequestStateSeal {
  /** 32 random bytes, this process's only: a restart makes every outstanding state invalid, which fails closed. */
  private readonly key = randomBytes(32);

  seal(claims: StateClaims): string {
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${STATE_PREFIX}${body}.${this.mac(body)}`;
  }

  /** Checks the seal, then that the state is for this call and not expired: `expected` is the call being retried. */
  open(state: string, expected: Omit<StateClaims, 'approvalId' | 'expiresAt'>, now = Date.now()): OpenedState {
    if (state.length > MAX_STATE_LENGTH || !state.startsWith(STATE_PREFIX)) return { ok: false, cause: 'not a state of this guard' };
    const [body, mac, extra] = state.slice(STATE_PREFIX.length).split('.');
    if (body === undefined || mac === undefined || extra !== undefined) return { ok: false, cause: 'malformed state' };
    const given = Buffer.from(mac, 'base64url');
    const wanted = Buffer.from(this.mac(body), 'base64url');
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) return { ok: false, cause: 'bad seal' };
    const claims = parseClaims(Buffer.from(body, 'base64url').toString('utf8'));
    if (claims === undefined) return { ok: false, cause: 'malformed state' };
    for (const key of ['project', 'requester', 'tool', 'args'] as const) {
      if (claims[key] !== expected[key])
        return { ok: false, cause: key === 'args' ? 'sealed for other arguments' : `sealed for another ${key}` };
    }
    if (!(now < claims.expiresAt)) return { ok: false, cause: 'expired' };
    return { ok: true, claims };
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

function parseClaims(text: string): StateClaims | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(value)) return undefined;
  const { approvalId, project, requester, tool, args, expiresAt } = value;
  if ([approvalId, project, requester, tool, args].some((field) => typeof field !== 'string') || typeof expiresAt !== 'number')
    return undefined;
  return value as unknown as StateClaims;
}

/**
 * SHA-256 of the arguments written with sorted keys, so the same arguments hash the same whatever
 * the host's key order; `undefined` arguments hash as `{}`. Arguments nested too deep to write hash
 * to a value no state carries.
 */
export function argumentsHash(args: Record<string, unknown> | undefined): string {
  try {
    return createHash('sha256')
      .update(JSON.stringify(args ?? {}, (_key, value: unknown) => (isJsonObject(value) ? sortedKeys(value) : value)))
      .digest('base64url');
  } catch {
    return 'unwritable';
  }
}

function sortedKeys(value: Record<string, unknown>): Record<string, unknown> {
  // No prototype: a `__proto__` key is copied as a key, not taken for the prototype.
  const sorted = Object.create(null) as Record<string, unknown>;
  for (const key of Object.keys(value).sort()) sorted[key] = value[key];
  return sorted;
}
