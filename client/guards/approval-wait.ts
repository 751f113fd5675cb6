/**
 * The `approval: { waitMs }` option of both guards (docs/api.md#the-client-sdk,
 * docs/api.md#approvals-and-temporary-grants): a call that the service answers with
 * `approval_required` long-polls its approval request for up to `waitMs`, then is decided again,
 * and runs only if that new decision allows it. One function for both guards, so they keep parity
 * for approvals too.
 */
import type { DecideQuery } from '../../schemas/api.js';
import { MAX_APPROVAL_WAIT_SECONDS } from '../../schemas/approvals.js';
import type { ClientDecision } from '../decision.js';
import type { GuardClient } from './common.js';

/** The `approval` option of the guards. */
export interface ApprovalWaitOptions {
  /**
   * How long a call that needs the user's approval waits for the answer, in milliseconds, before
   * it is refused. Default 0: refused at once, with a message that says approval was requested
   * and to retry later.
   */
  waitMs?: number | undefined;
}

/** The longest wait accepted: a day (an approval request itself expires much sooner). */
const MAX_WAIT_MS = 86_400_000;

/** `approval.waitMs` checked when the guard is given it; a wrong value throws, like every option. */
export function approvalWaitMsOf(owner: string, approval: ApprovalWaitOptions | undefined): number {
  const value = approval?.waitMs;
  if (value === undefined) return 0;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_WAIT_MS) {
    throw new RangeError(
      `${owner}: approval.waitMs must be a number of milliseconds from 0 to ${String(MAX_WAIT_MS)} (got ${String(value)})`,
    );
  }
  return value;
}

/**
 * When `decision` asks for an approval and `waitMs` > 0: waits (long-poll) for the user's answer,
 * then decides the call again, until a decision that is not `approval_required` or the end of the
 * wait. Answers the last decision: the caller runs the tool only if it allows. Never throws; a
 * failed wait (service down, `signal` aborted) ends in a fresh decision, which fails closed.
 */
export async function settleApproval(
  client: GuardClient,
  query: DecideQuery,
  decision: ClientDecision,
  waitMs: number,
  signal: AbortSignal | undefined,
): Promise<ClientDecision> {
  if (waitMs <= 0 || client.getApproval === undefined) return decision;
  const ends = performance.now() + waitMs;
  const answered = new Set<string>();
  let current = decision;
  while (current.reason === 'approval_required' && current.approval !== undefined && signal?.aborted !== true) {
    const { id } = current.approval;
    // A request already seen answered, asked about again: no new answer can come; stop rather than spin.
    if (answered.has(id)) break;
    const remaining = ends - performance.now();
    if (remaining <= 0) break;
    const mayWaitAgain = await waitForAnswer(client.getApproval.bind(client), query.project, id, remaining, signal);
    if (!mayWaitAgain) answered.add(id);
    current = await client.decide(query, { signal });
  }
  return current;
}

/** One long-poll of request `id`, cut at `remainingMs`; answers whether it is still pending (worth waiting on again). */
async function waitForAnswer(
  getApproval: NonNullable<GuardClient['getApproval']>,
  project: string,
  id: string,
  remainingMs: number,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  const waitSeconds = Math.min(MAX_APPROVAL_WAIT_SECONDS, Math.max(1, Math.ceil(remainingMs / 1000)));
  try {
    const approval = await getApproval(project, id, { waitSeconds, timeoutMs: remainingMs, signal });
    return approval.status === 'pending';
  } catch {
    // The wait's end, a cancelled call, an unreachable service: the next decision says which, and
    // this request is not waited on again (a service that fails at once must not make a busy loop).
    return false;
  }
}
