/**
 * Applies what a decision asks for (server/domain/decide.ts decides and changes nothing): the
 * approvals step spends the user's `once` answer for the call, else opens (or reuses) its request,
 * and the verdict is built from what that gave; then an allowed call of a limited tool is counted.
 * A port that throws is not caught: nothing after it is applied, the decision service keeps
 * nothing of the call, and `/decide` answers 500, which every guard takes as a denial (fail closed).
 */
import { answerAsk, type AskAnswer, type AskUser, type ApprovalsPort, type Decided, type Verdict } from '../domain/decide.js';
import type { LimitsPort } from '../domain/limits.js';

const ONCE: AskAnswer = { kind: 'once' };
/** Never needed: a decision asks only when it read the grants of the port it then asks; denied all the same. */
const NOBODY_ASKED: AskAnswer = { kind: 'preview' };

/** The verdict of `decided` once its effects are applied through `approvals` and `limits`. */
export function applyEffects(decided: Decided, approvals: ApprovalsPort | undefined, limits: LimitsPort | undefined): Verdict {
  const verdict = decided.kind === 'ask' ? answerAsk(decided, askUser(decided.ask, approvals)) : decided;
  const { count } = verdict;
  if (count !== undefined) limits?.count(count.project, count.requester, count.tool, count.limit);
  return verdict;
}

/**
 * A `once` answer is used up before a request is looked at: it lets exactly one call through
 * (docs/api.md#approvals-and-temporary-grants).
 */
function askUser({ project, requester, tool, issueRef }: AskUser, approvals: ApprovalsPort | undefined): AskAnswer {
  if (approvals === undefined) return NOBODY_ASKED;
  if (approvals.consumeOnce(project, requester, tool, issueRef)) return ONCE;
  return approvals.request(project, requester, tool, issueRef);
}
