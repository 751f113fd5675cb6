/**
 * Deciding one MCP `tools/call`, the one way for every guard of an MCP server (`guardMcpServer` in
 * process, `idea-mcp-proxy` in front of a server in any language): ask the service with the call's
 * arguments, ask the user in the host when the call needs an approval and the host can show a
 * form, then wait for the panel's answer up to `approval.waitMs`. The caller runs the tool only if
 * the decision it gets back allows it.
 */
import type { DecideQuery } from '../../schemas/api.js';
import { parseRequester } from '../../schemas/requester.js';
import { approvalWaitMsOf, settleApproval } from './approval-wait.js';
import { elicitApproval, type ElicitingServer, type McpApprovalOptions } from './approval-elicitation.js';
import { isJsonObject, type ClientDecision } from '../decision.js';
import type { GuardClient, GuardLogger } from './common.js';

/** A `tools/call`'s name and arguments, or why it is not a call to decide on (a JSON-RPC `-32602`). */
export type ToolCallParams = { ok: true; name: string; args: Record<string, unknown> | undefined } | { ok: false; message: string };

/** Reads the name and arguments of a `tools/call` request's `params`, as every guard checks them. */
export function toolCallParams(params: unknown): ToolCallParams {
  const name = isJsonObject(params) ? params.name : undefined;
  if (typeof name !== 'string') return { ok: false, message: 'Invalid tools/call request: params.name must be a string' };
  const args = isJsonObject(params) ? params.arguments : undefined;
  if (args !== undefined && !isJsonObject(args)) {
    return { ok: false, message: 'Invalid tools/call request: params.arguments must be an object' };
  }
  return { ok: true, name, args };
}

/** What deciding one call needs besides its query. */
export interface ToolCallContext {
  readonly client: GuardClient;
  readonly approval: McpApprovalOptions | undefined;
  readonly logger: GuardLogger | undefined;
  /** Asks the user in the host (elicitation); it says itself whether the host can. */
  readonly elicitor: ElicitingServer;
  /** The host gave up on the call: pending decisions and waits end at once, denied. */
  readonly signal: AbortSignal | undefined;
  /** The `tools/call` being decided: a form goes out as part of it. */
  readonly requestId: string | number | undefined;
  /** Who decides, in the messages of a wrong option (`guardMcpServer`, `idea-mcp-proxy`). */
  readonly owner: string;
}

/** Decides a call, asking the user and waiting for an answer when the policy says to ask. Never throws. */
export async function decideToolCall(context: ToolCallContext, query: DecideQuery): Promise<ClientDecision> {
  const { client, signal } = context;
  const decision = await client.decide(query, { signal });
  if (decision.reason !== 'approval_required') return decision;
  const asked = await elicitApproval(
    {
      server: context.elicitor,
      client,
      options: context.approval,
      logger: context.logger,
      signal,
      requestId: context.requestId,
    },
    query,
    decision,
  );
  // The time the form was open counts in waitMs: the host's own request timeout bounds both.
  const waitMs = Math.max(0, approvalWaitMsOf(context.owner, context.approval) - asked.elapsedMs);
  return settleApproval(client, query, asked.decision, waitMs, signal);
}

/**
 * An anonymous requester (`""`, `"mcp"`) is almost always an agent id that did not reach the
 * server (a launcher that does not pass the environment); a malformed one is denied everything.
 * Either is said once per guard (`warned` keeps the kinds already said), not once per call.
 */
export function warnOnceAboutRequester(warned: Set<string>, logger: GuardLogger | undefined, project: string, requester: string): void {
  const { kind } = parseRequester(requester);
  if ((kind !== 'anonymous' && kind !== 'invalid') || warned.has(kind)) return;
  warned.add(kind);
  const message =
    kind === 'anonymous'
      ? 'the requester is anonymous (read-only tools only): is the agent id of this session set? (stdio launchers may not pass environment variables)'
      : 'the requester is not a valid agent id nor a ticket assistant: every call will be denied (invalid_requester)';
  logger?.warn({ project, requester: requester.slice(0, 200) }, message);
}
