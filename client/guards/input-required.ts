/**
 * Approvals on MCP 2026-07-28, where a server may no longer send requests to the host: a call on
 * ask, from a host whose request declares form elicitation, is answered `input_required` with the
 * same French form as `elicitation/create` gives, and a sealed `requestState`. The host asks the
 * user and sends the call again with the answer and the state; the state is verified before
 * anything else, the answer is posted with the approver token, and the call is decided again.
 */
import type { DecideQuery } from '../../schemas/api.js';
import { errorText, oneLine } from '../causes.js';
import { isJsonObject, localDenial, type ClientDecision } from '../decision.js';
import { PdpError } from '../http/errors.js';
import { approvalWaitMsOf, settleApproval } from './approval-wait.js';
import { canShowForm, ELICITATION_CHOICES, ELICITATION_FIELD, FORM, formMessage, type McpApprovalOptions } from './approval-elicitation.js';
import { guardLogger, type GuardClient, type GuardLogger } from './common.js';
import { argumentsHash, STATE_PREFIX, type RequestStateSeal } from './request-state.js';

/** The key of the guard's one input request, under which the host answers. */
export const APPROVAL_INPUT_KEY = 'io.ideai/approval';

export interface ModernCallContext {
  readonly client: GuardClient;
  readonly approval: McpApprovalOptions | undefined;
  readonly logger: GuardLogger | undefined;
  readonly seal: RequestStateSeal;
  readonly signal: AbortSignal | undefined;
  /** Who decides, in the messages of a wrong option. */
  readonly owner: string;
}

/** The `input_required` result asking for the user's answer. */
export interface InputRequiredResult {
  [key: string]: unknown;
  resultType: 'input_required';
  inputRequests: Record<string, { method: 'elicitation/create'; params: Record<string, unknown> }>;
  requestState: string;
}

export type ModernOutcome =
  | { kind: 'decided'; decision: ClientDecision; /** The call carried a state of ours: the server must not see it. */ stripRetry: boolean }
  | { kind: 'input_required'; result: InputRequiredResult };

/** Whether `params` carry a `requestState` this package sealed (a server's own state passes through untouched). */
export function carriesOwnState(params: unknown): boolean {
  return isJsonObject(params) && typeof params.requestState === 'string' && params.requestState.startsWith(STATE_PREFIX);
}

/** `params` of a retried call without the members meant for the guard, for the server. */
export function withoutRetry(params: Record<string, unknown>): Record<string, unknown> {
  const { requestState: _state, inputResponses: _responses, ...rest } = params;
  return rest;
}

/**
 * Decides a 2026-07-28 `tools/call` (`params` as the host sent them, `capabilities` those its
 * request declares). Never throws; only an `allow` decision may run the call.
 */
export async function decideModernCall(
  context: ModernCallContext,
  query: DecideQuery,
  params: Record<string, unknown>,
  capabilities: Record<string, unknown>,
): Promise<ModernOutcome> {
  const { client, signal } = context;
  const waitMs = approvalWaitMsOf(context.owner, context.approval);
  if (carriesOwnState(params)) {
    const answered = await applyAnswer(context, query, params);
    if (answered !== undefined) return { kind: 'decided', decision: answered, stripRetry: true };
    const decision = await client.decide(query, { signal });
    return { kind: 'decided', decision: await settleApproval(client, query, decision, waitMs, signal), stripRetry: true };
  }
  const decision = await client.decide(query, { signal });
  const elicit = context.approval?.elicit;
  const { approval } = decision;
  if (decision.reason === 'approval_required' && approval !== undefined && elicit !== undefined && canShowForm(capabilities)) {
    let issueRef: string | undefined;
    try {
      const request = await client.getApproval?.(query.project, approval.id, { signal });
      if (request !== undefined && request.status !== 'pending')
        return { kind: 'decided', decision: await client.decide(query, { signal }), stripRetry: false };
      issueRef = request?.issueRef;
    } catch {
      // The ticket is only shown in the form: without it the form still asks.
    }
    const expiresAt = Date.parse(approval.expiresAt);
    const requestState = context.seal.seal({
      approvalId: approval.id,
      project: query.project,
      requester: query.requester,
      tool: query.tool,
      args: argumentsHash(query.arguments),
      expiresAt: Number.isFinite(expiresAt) ? expiresAt : Date.now(),
    });
    return {
      kind: 'input_required',
      result: {
        resultType: 'input_required',
        inputRequests: {
          [APPROVAL_INPUT_KEY]: {
            method: 'elicitation/create',
            params: { mode: 'form', message: formMessage(query, issueRef), requestedSchema: FORM },
          },
        },
        requestState,
      },
    };
  }
  return { kind: 'decided', decision: await settleApproval(client, query, decision, waitMs, signal), stripRetry: false };
}

/**
 * The retry of a call answered `input_required`: verifies the state first (a refusal when it is
 * not this guard's seal for this very call, or expired), then posts the user's answer, if any, with
 * the approver token. Answers the refusal, or `undefined` when the call is to be decided again.
 */
async function applyAnswer(
  context: ModernCallContext,
  query: DecideQuery,
  params: Record<string, unknown>,
): Promise<ClientDecision | undefined> {
  const opened = context.seal.open(params.requestState as string, {
    project: query.project,
    requester: query.requester,
    tool: query.tool,
    args: argumentsHash(query.arguments),
  });
  const logger = guardLogger(context.logger);
  if (!opened.ok) {
    logger.warn(
      { project: query.project, requester: oneLine(query.requester, 200), tool: query.tool, cause: opened.cause },
      'requestState refused',
    );
    return localDenial(query, 'invalid_request_state', opened.cause);
  }
  const responses = params.inputResponses;
  const response = isJsonObject(responses) ? responses[APPROVAL_INPUT_KEY] : undefined;
  const picked =
    isJsonObject(response) && response.action === 'accept' && isJsonObject(response.content)
      ? response.content[ELICITATION_FIELD]
      : undefined;
  const elicit = context.approval?.elicit;
  if (
    typeof picked !== 'string' ||
    !Object.hasOwn(ELICITATION_CHOICES, picked) ||
    elicit === undefined ||
    context.client.answerApproval === undefined
  )
    return undefined;
  const choice: { answer: 'once' | 'for' | 'deny'; ttlSeconds?: number } = ELICITATION_CHOICES[picked as keyof typeof ELICITATION_CHOICES];
  try {
    await context.client.answerApproval(query.project, opened.claims.approvalId, choice.answer, choice.ttlSeconds, {
      token: elicit.approverToken,
      via: 'elicitation',
      signal: context.signal,
    });
  } catch (error) {
    // Answered from the panel meanwhile, or the service is down: the next decision says which.
    if (!(error instanceof PdpError && error.code === 'approval_closed'))
      logger.warn({ project: query.project, tool: query.tool, cause: errorText(error) }, 'approval answer from input_required failed');
  }
  return undefined;
}
