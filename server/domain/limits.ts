/**
 * Usage limits in a policy (docs/api.md#usage-limits): what is wrong with a policy's `limits`, the
 * compiled limit a decision reads, and the port of the counts: a decision (decide.ts) reads a
 * limit's window at one point, after the conditions, and asks for an allowed call to be counted;
 * the counts live in server/limits/usage-counts.ts.
 */
import { describeLimit, limitProblem, windowSeconds, type Limit, type PolicyLimits } from '../../schemas/limits.js';
import type { ProblemCode } from '../../schemas/policy-as-code.js';
import { quoteForMessage } from '../../schemas/requester.js';

/** A tool's limit, ready for a decision. */
export interface ToolLimit {
  readonly max: number;
  readonly per: string;
  readonly windowMs: number;
}

/**
 * The counts of limited tools (server/limits/usage-counts.ts): a decision reads `retryAfter`, and the
 * decision service applies `count`; a decision without them (`idea-pdp decide`, `test`) ignores counts.
 */
export interface LimitsPort {
  /** Seconds until the next call may be allowed when `requester` has used up `limit` for `tool`, else undefined. */
  retryAfter(project: string, requester: string, tool: string, limit: ToolLimit): number | undefined;
  /** Counts one allowed call. */
  count(project: string, requester: string, tool: string, limit: ToolLimit): void;
}

/** The compiled limits of a policy: only valid limits of tools it lists (a valid document has no other). */
export function compileLimits(
  limits: Readonly<PolicyLimits> | undefined,
  listed: (tool: string) => boolean,
): ReadonlyMap<string, ToolLimit> {
  const compiled = new Map<string, ToolLimit>();
  for (const [tool, limit] of Object.entries(limits ?? {})) {
    const seconds = windowSeconds(limit.per);
    if (seconds !== undefined && listed(tool) && limitProblem(limit) === undefined) {
      compiled.set(tool, Object.freeze({ max: limit.max, per: limit.per, windowMs: seconds * 1000 }));
    }
  }
  return compiled;
}

/** A problem of a policy's limits, at its JSON pointer. */
export interface LimitProblemAt {
  readonly path: string;
  readonly code: ProblemCode;
  readonly message: string;
}

const pointerSegment = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');
const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/**
 * Every problem of the `limits` of the policy at `path` (a parsed value, valid or not): a tool the
 * policy lists in neither allowedTools nor askTools (`limit_unlisted_tool`), a `max` or `per` out of
 * shape or range (`invalid_limit`, saying what was expected and what was got), in key order.
 */
export function limitsProblems(path: string, policy: unknown): LimitProblemAt[] {
  if (!isRecord(policy) || policy.limits === undefined) return [];
  const at = `${path}/limits`;
  if (!isRecord(policy.limits)) {
    return [{ path: at, code: 'invalid_limit', message: `invalid limits at ${at}: limits map tool names to { "max", "per" }` }];
  }
  const listed = new Set([...strings(policy.allowedTools), ...strings(policy.askTools)]);
  const problems: LimitProblemAt[] = [];
  for (const [tool, limit] of Object.entries(policy.limits)) {
    const where = `${at}/${pointerSegment(tool)}`;
    if (!listed.has(tool)) {
      problems.push({
        path: where,
        code: 'limit_unlisted_tool',
        message: `limit on ${quoteForMessage(tool)} at ${where}: the tool is in neither allowedTools nor askTools of this policy`,
      });
    }
    const problem = limitProblem(limit);
    if (problem !== undefined) {
      const place = problem.field === undefined ? where : `${where}/${problem.field}`;
      problems.push({ path: place, code: 'invalid_limit', message: `invalid limit at ${place}: ${problem.message}` });
    }
  }
  return problems;
}

/** `details.problems[]` of `400 invalid_limits`. */
export interface LimitWriteProblem {
  tool: string;
  message: string;
}

/** What is wrong with the limits a client sent with the lists they go with (no location: the API names the tool). */
export function limitWriteProblems(lists: {
  allowedTools: readonly string[];
  askTools?: readonly string[] | undefined;
  limits?: unknown;
}): LimitWriteProblem[] {
  if (lists.limits === undefined) return [];
  return limitsProblems('', lists).map((problem) => ({
    tool: decodeTool(problem.path),
    message: problem.message.replace(/ at \/limits\/[^:]*:/, ':'),
  }));
}

function decodeTool(path: string): string {
  const segment = path.split('/')[2] ?? '';
  return segment.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The message of a call refused by a limit: it names the tool, the agent and the limit, and when to retry. */
export function rateLimitedMessage(deniedFor: string, source: string, limit: Limit, retryAfterSeconds: number): string {
  return `${deniedFor} (policy: ${source}): usage limit reached, ${describeLimit(limit)}; retry in ${retryAfterSeconds} s. Raise the limit in Permissions > Tools MCP IdeA.`;
}
