/**
 * The decision type the enforcement points see, and the local denials the SDK builds when the
 * policy service cannot give a trustworthy answer. Both guards (MCP and OpenAI) turn a denial into
 * text through one function (the default {@link refusalText}, or the host's `formatRefusal`), so
 * the same call is refused with the same words everywhere.
 */
import { randomUUID } from 'node:crypto';
import { findTool } from '../schemas/catalog.js';
import { describeRequester as describeParsed, parseRequester } from '../schemas/requester.js';
import type { DecideQuery, Decision, DecisionReason, Requester } from '../schemas/api.js';
import { oneLine } from './causes.js';

/**
 * Reasons only the SDK produces (never the server); each is a denial:
 * - `pdp_unavailable`: no trustworthy answer from the policy service (refused, reset, timeout,
 *   5xx, an answer that is not a valid decision for this query, a caller that gave up);
 * - `pdp_rejected`: the service answered that the caller is wrong (400, 401, 403, 404: a bad
 *   URL prefix, a missing or wrong decide token, a malformed query);
 * - `invalid_call`: the call could not even be asked about (a free-text tool call, a requester or
 *   project the host could not resolve). The policy service is not consulted;
 * - `invalid_arguments`: the OpenAI guard's arguments string is not a JSON object. The policy
 *   service is not consulted (the service gives the same reason to an `issueRef` it cannot read);
 * - `invalid_request_state`: a 2026-07-28 retry carried a `requestState` this guard did not seal, or
 *   sealed for another call, or expired. Nothing is answered to the service and nothing runs.
 */
export const CLIENT_DENIAL_REASONS = [
  'pdp_unavailable',
  'pdp_rejected',
  'invalid_call',
  'invalid_arguments',
  'invalid_request_state',
] as const;
export type ClientDenialReason = (typeof CLIENT_DENIAL_REASONS)[number];

/** A server {@link Decision} whose `reason` may also be one of the SDK's own denial reasons. */
export type ClientDecision = Omit<Decision, 'reason'> & { reason: DecisionReason | ClientDenialReason };

/** Turns a refused call's decision into the text the agent reads (both guards take one). */
export type FormatRefusal = (decision: ClientDecision) => string;

/** Resolves a requester string the way the service does (docs/api.md#resolving-a-decision). */
export function requesterOf(id: string): Requester {
  const { kind } = parseRequester(id);
  return { id, kind };
}

/**
 * How messages name a requester: "agent QA", "ticket assistant ticket-assistant:demo:82",
 * "anonymous requester \"mcp\"", "invalid requester \"QA:x\"" (at most 200 characters of it).
 */
export function describeRequester(id: string): string {
  return describeParsed(requesterOf(id));
}

const WHAT_WENT_WRONG: Record<ClientDenialReason, (cause: string) => string> = {
  pdp_unavailable: (cause) => `policy service unreachable (${cause})`,
  pdp_rejected: (cause) => `policy service rejected the request (${cause})`,
  invalid_call: (cause) => cause,
  invalid_arguments: (cause) => cause,
  invalid_request_state: (cause) => `the approval state sent back is not valid (${cause})`,
};

/** The call a local denial is about: a decision query, whose requester the host may have failed to name. */
export type DeniedCall = Pick<DecideQuery, 'project' | 'tool'> & { requester: string | undefined };

/**
 * A denial built by the SDK itself. Its message names the tool, the requester and the project,
 * like every server message, then says why no policy answer could be used (docs/api.md#the-client-sdk):
 * `Tool idea_memory_write (agent QA, project demo) denied: policy service unreachable (timeout after 500 ms)`.
 * The cause is one line of at most 200 characters. Never throws, whatever a JavaScript caller passed.
 */
export function localDenial(query: DeniedCall, reason: ClientDenialReason, cause: string): ClientDecision {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a JavaScript caller may pass anything
  const loose = (query ?? {}) as Partial<Record<keyof DeniedCall, unknown>>;
  const tool = printable(loose.tool);
  const project = printable(loose.project);
  const id = loose.requester;
  // A requester that is not a string (the host could not name one) is nobody: no kind to word.
  const requester: Requester = typeof id === 'string' ? requesterOf(id) : { id: '', kind: 'anonymous' };
  const who = typeof id === 'string' ? describeParsed(requester) : 'unidentified requester';
  return {
    allow: false,
    reason,
    message: `Tool ${oneLine(tool, 128)} (${who}, project ${oneLine(project, 128)}) denied: ${WHAT_WENT_WRONG[reason](oneLine(cause))}`,
    source: 'none',
    requester,
    tool: { name: tool, access: findTool(tool)?.access ?? 'unknown' },
    project,
    revision: 'none',
    decisionId: `client-${randomUUID()}`,
  };
}

function printable(value: unknown): string {
  try {
    return String(value);
  } catch {
    return '(unprintable)';
  }
}

/** The policy service could not be used for this query: deny, saying why. */
export function unavailable(query: DecideQuery, cause: string): ClientDecision {
  return localDenial(query, 'pdp_unavailable', cause);
}

/**
 * The default text an agent reads when a call is refused: the decision's message, which names the
 * tool, the requester, the project and why. A host that words refusals itself passes
 * `formatRefusal` to both guards.
 *
 * @example
 * ```ts
 * const formatRefusal: FormatRefusal = (decision) =>
 *   decision.reason === 'pdp_unavailable' ? 'The permission service is down: try again in a minute.' : refusalText(decision);
 * ```
 */
export function refusalText(decision: ClientDecision): string {
  return decision.message;
}

/**
 * The text of a refusal through the host's `formatRefusal`, if any. A formatter that throws or
 * returns something other than a non-empty string falls back to the decision's message: the call
 * is refused either way.
 */
export function formatRefusalSafely(decision: ClientDecision, format: FormatRefusal | undefined): string {
  if (format === undefined) return refusalText(decision);
  try {
    const text: unknown = format(decision);
    return typeof text === 'string' && text !== '' ? text : refusalText(decision);
  } catch {
    return refusalText(decision);
  }
}

/**
 * Builds the decision query of one tool call, with all of its arguments: the service reads those a
 * condition of the policy names (docs/api.md#conditions-on-a-tools-arguments), and which ones that is only the policy knows.
 *
 * @example
 * ```ts
 * const decision = await pdp.decide(decideQueryFor('demo', 'QA', 'idea_ticket_update', { issueRef: '#82', title: 'x' }));
 * ```
 */
export function decideQueryFor(
  project: string,
  requester: string,
  tool: string,
  args: Readonly<Record<string, unknown>> | undefined,
): DecideQuery {
  // The wire type is the service's; it accepts any JSON object there.
  return args === undefined ? { project, requester, tool } : { project, requester, tool, arguments: args };
}

/** True for a plain JSON object (what tool-call arguments must be). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
