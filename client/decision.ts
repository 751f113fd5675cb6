/**
 * The decision type the enforcement points see, and the local denials the SDK builds when the
 * policy service cannot give a trustworthy answer. Both guards (MCP and OpenAI) turn a denial into
 * text through {@link refusalText}, so the same call is refused with the same words everywhere.
 */
import { randomUUID } from 'node:crypto';
import { findTool } from '../schemas/catalog.js';
import type { DecideQuery, Decision, DecisionReason, Requester, RequesterKind } from '../schemas/api.js';

/**
 * Reasons only the SDK produces (never the server):
 * - `pdp_unavailable`: no trustworthy answer from the policy service (down, slow, bad answer);
 * - `invalid_call`: the call could not even be asked about (arguments that are not a JSON object,
 *   a requester the host could not resolve). The policy service is not consulted.
 */
export const CLIENT_DENIAL_REASONS = ['pdp_unavailable', 'invalid_call'] as const;
export type ClientDenialReason = (typeof CLIENT_DENIAL_REASONS)[number];

/** A server {@link Decision} whose `reason` may also be one of the SDK's own denial reasons. */
export type ClientDecision = Omit<Decision, 'reason'> & { reason: DecisionReason | ClientDenialReason };

/** Resolves a requester string the way the service does (SPEC §4), for messages only. */
export function requesterOf(id: string): Requester {
  let kind: RequesterKind = 'agent';
  if (id === '' || id === 'mcp') kind = 'anonymous';
  else if (id.startsWith('ticket-assistant:')) kind = 'ticket-assistant';
  return { id, kind };
}

/** "agent QA", "ticket assistant ticket-assistant:demo:82", "anonymous requester \"mcp\"". */
export function describeRequester(id: string): string {
  const { kind } = requesterOf(id);
  if (kind === 'anonymous') return `anonymous requester ${JSON.stringify(id)}`;
  if (kind === 'ticket-assistant') return `ticket assistant ${id}`;
  return `agent ${id}`;
}

/**
 * A denial built by the SDK itself. Its message names the tool, the requester and the project,
 * like every server message, then says why no policy answer could be used, in SPEC §8's words:
 * `Tool idea_memory_write (agent QA, project demo) denied: policy service unreachable (timeout after 500 ms)`.
 */
export function localDenial(query: DecideQuery, reason: ClientDenialReason, cause: string): ClientDecision {
  const what = reason === 'pdp_unavailable' ? `policy service unreachable (${cause})` : cause;
  // Whatever a JavaScript caller passed (a query without `tool`, an object that cannot be printed),
  // building the denial never throws; a requester that is not a string is nobody.
  const loose = (query ?? {}) as Partial<Record<keyof DecideQuery, unknown>>;
  const tool = printable(loose.tool);
  const project = printable(loose.project);
  const known = typeof loose.requester === 'string';
  const requester: Requester = known ? requesterOf(loose.requester as string) : { id: '', kind: 'anonymous' };
  const who = known ? describeRequester(requester.id) : 'unidentified requester';
  return {
    allow: false,
    reason,
    message: `Tool ${tool} (${who}, project ${project}) denied: ${what}`,
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
 * The text an agent reads when a call is refused. One function for both guards, so the MCP
 * tool result and the OpenAI tool message of the same refused call are identical.
 */
export function refusalText(decision: ClientDecision): string {
  return decision.message;
}

/**
 * The arguments sent to the service with a decision query. Only `issueRef` is read by the service
 * (SPEC §5), so only it is sent: a tool call with megabytes of arguments (a memory write) must not
 * be refused because its decision query exceeded the service's body limit.
 */
export function decisionArguments(args: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> | undefined {
  if (args === undefined || !Object.hasOwn(args, 'issueRef')) return undefined;
  return { issueRef: args['issueRef'] };
}

/** Builds the decision query of one tool call. */
export function decideQueryFor(
  project: string,
  requester: string,
  tool: string,
  args: Readonly<Record<string, unknown>> | undefined,
): DecideQuery {
  const argumentsForPolicy = decisionArguments(args);
  return argumentsForPolicy === undefined ? { project, requester, tool } : { project, requester, tool, arguments: argumentsForPolicy };
}

/** True for a plain JSON object (what tool-call arguments must be). */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
