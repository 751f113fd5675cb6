/**
 * `approval.elicit` of the MCP guard (docs/client.md): when a call needs the user's approval and
 * the connected MCP client declared the `elicitation` capability, the guard asks the user in the
 * agent's own host (an `elicitation/create` form, in French), posts the answer with the approver
 * token, and decides the call again. Anything else (a declined or cancelled form, a client without
 * elicitation, any error) leaves the decision as it was: the caller then waits for the panel.
 */
import { TOOL_CATALOG } from '../../schemas/catalog.js';
import type { ApprovalAnswer } from '../../schemas/approvals.js';
import type { DecideQuery } from '../../schemas/api.js';
import { errorText, oneLine } from '../causes.js';
import type { ApprovalWaitOptions } from './approval-wait.js';
import type { ClientDecision } from '../decision.js';
import { guardLogger, type GuardClient, type GuardLogger } from './common.js';
import { checkToken } from '../http/options.js';
import { PdpError } from '../http/errors.js';

/** `approval.elicit` of the MCP guard. */
export interface ApprovalElicitOptions {
  /**
   * The approver token (`PDP_APPROVER_TOKEN` of the service): it may answer approval requests with
   * `once`, `for` up to 8 h or `deny`, and nothing else. Give the guard this one, never the admin token.
   */
  approverToken: string;
}

/** The `approval` option of the MCP guard: the wait of both guards, plus asking through the MCP host. */
export interface McpApprovalOptions extends ApprovalWaitOptions {
  /**
   * Ask the user in the MCP host itself (elicitation) before waiting for the panel. The form's
   * time counts in `waitMs`; with `waitMs` 0 it lasts until the approval request expires (or the
   * host cancels the call).
   */
  elicit?: ApprovalElicitOptions | undefined;
}

/** What the guard needs of a low-level MCP `Server` to ask the user (`@modelcontextprotocol/sdk/server`). */
export interface ElicitingServer {
  getClientCapabilities(): { elicitation?: object | undefined } | undefined;
  elicitInput(
    params: { mode?: 'form'; message: string; requestedSchema: ElicitationForm },
    options?: { signal?: AbortSignal | undefined; timeout?: number; relatedRequestId?: string | number },
  ): Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> | undefined }>;
}

interface ElicitationForm {
  [key: string]: unknown;
  type: 'object';
  properties: Record<string, { type: 'string'; title: string; description: string; enum: string[]; enumNames: string[] }>;
  required: string[];
}

/** The three choices of the form; each value is its own French label, so a host that shows values shows French. */
export const ELICITATION_CHOICES = {
  'Autoriser une fois': { answer: 'once' },
  'Autoriser pendant 1 h': { answer: 'for', ttlSeconds: 3600 },
  Refuser: { answer: 'deny' },
} as const satisfies Record<string, { answer: ApprovalAnswer; ttlSeconds?: number }>;
type ChoiceLabel = keyof typeof ELICITATION_CHOICES;
const LABELS = Object.keys(ELICITATION_CHOICES) as ChoiceLabel[];
/** The form's one field. */
export const ELICITATION_FIELD = 'reponse';

/** Longest time a form stays open when `waitMs` is 0: the service's longest approval lifetime, a day. */
const MAX_FORM_MS = 86_400_000;
const LABEL_OF = new Map<string, string>(TOOL_CATALOG.map((tool) => [tool.name, tool.label]));

/** `approval.elicit` checked when the guard is given it; a wrong value throws, like every option. */
export function checkElicitOptions(approval: McpApprovalOptions | undefined): void {
  if (approval?.elicit === undefined) return;
  checkToken(approval.elicit.approverToken, 'guardMcpServer: approval.elicit.approverToken');
}

/** Whether the connected client said it can show a form (`elicitation`, or `elicitation.form`). */
export function clientCanElicit(server: ElicitingServer): boolean {
  // A server of another SDK version may lack it.
  if (typeof server.getClientCapabilities !== 'function') return false;
  return canShowForm(server.getClientCapabilities());
}

/** Whether client capabilities declare form elicitation (`elicitation`, or `elicitation.form`). */
export function canShowForm(capabilities: { elicitation?: object | undefined } | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (typeof elicitation !== 'object') return false;
  // The SDKs read an empty `elicitation: {}` as form support, as the protocol says.
  return 'form' in elicitation || !('url' in elicitation);
}

export interface ElicitContext {
  readonly server: ElicitingServer;
  readonly client: GuardClient;
  readonly options: McpApprovalOptions | undefined;
  readonly logger: GuardLogger | undefined;
  readonly signal: AbortSignal | undefined;
  /** The `tools/call` being decided: the form goes out as part of it (one stream over HTTP). */
  readonly requestId: string | number | undefined;
}

/**
 * When `decision` asks for an approval, `elicit` is set and the client can show a form: asks the
 * user, posts the answer (`via: "elicitation"`) with the approver token and answers a fresh
 * decision. Else, and on a declined or cancelled form or any failure, answers `decision` as it is.
 * Never throws. `elapsedMs` of the answer is the time spent, to take off the panel's wait.
 */
export async function elicitApproval(
  context: ElicitContext,
  query: DecideQuery,
  decision: ClientDecision,
): Promise<{ decision: ClientDecision; elapsedMs: number }> {
  const elicit = context.options?.elicit;
  const { client, server, signal } = context;
  const { approval } = decision;
  if (
    elicit === undefined ||
    decision.reason !== 'approval_required' ||
    approval === undefined ||
    client.answerApproval === undefined ||
    !clientCanElicit(server)
  ) {
    return { decision, elapsedMs: 0 };
  }
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  try {
    const waitMs = context.options?.waitMs ?? 0;
    const untilExpiry = Date.parse(approval.expiresAt) - Date.now();
    const timeout = Math.max(1, Math.min(waitMs > 0 ? waitMs : MAX_FORM_MS, Number.isFinite(untilExpiry) ? untilExpiry : MAX_FORM_MS));
    // The ticket as the service read it ("#82"), never the raw arguments.
    const request = client.getApproval === undefined ? undefined : await client.getApproval(query.project, approval.id, { signal });
    if (request !== undefined && request.status !== 'pending') return { decision, elapsedMs: elapsed() };
    const result = await server.elicitInput(
      { mode: 'form', message: formMessage(query, request?.issueRef), requestedSchema: FORM },
      { signal, timeout, ...(context.requestId === undefined ? {} : { relatedRequestId: context.requestId }) },
    );
    const picked = result.action === 'accept' ? result.content?.[ELICITATION_FIELD] : undefined;
    if (typeof picked !== 'string' || !LABELS.includes(picked as ChoiceLabel)) return { decision, elapsedMs: elapsed() };
    const choice: { answer: ApprovalAnswer; ttlSeconds?: number } = ELICITATION_CHOICES[picked as ChoiceLabel];
    await client.answerApproval(query.project, approval.id, choice.answer, choice.ttlSeconds, {
      token: elicit.approverToken,
      via: 'elicitation',
      signal,
    });
    return { decision: await client.decide(query, { signal }), elapsedMs: elapsed() };
  } catch (error) {
    // A call the host gave up on, or a request the panel answered while the form was open: nothing went wrong.
    const answeredElsewhere = error instanceof PdpError && error.code === 'approval_closed';
    if (signal?.aborted !== true && !answeredElsewhere) {
      guardLogger(context.logger).warn(
        {
          project: query.project,
          requester: oneLine(query.requester, 200),
          tool: query.tool,
          ...(error instanceof PdpError ? { code: error.code } : {}),
          cause: errorText(error),
        },
        'approval elicitation failed: waiting for an answer from the panel',
      );
    }
    return { decision, elapsedMs: elapsed() };
  }
}

/** The approval form, the same whether sent as `elicitation/create` or inside an `input_required` result. */
export const FORM: ElicitationForm = {
  type: 'object',
  properties: {
    [ELICITATION_FIELD]: {
      type: 'string',
      title: 'Votre réponse',
      description:
        'Une fois : cet appel seulement. Pendant 1 h : cet outil pour cet agent dans ce projet. Refuser : l\u2019appel est refusé.',
      enum: [...LABELS],
      enumNames: [...LABELS],
    },
  },
  required: [ELICITATION_FIELD],
};

/** The question, in French: who asks, which tool (label and name), which project, the ticket if any. Never the arguments. */
export function formMessage(query: DecideQuery, issueRef: string | undefined): string {
  const label = LABEL_OF.get(query.tool);
  const tool = label === undefined ? query.tool : `« ${label} » (${query.tool})`;
  const ticket = issueRef === undefined ? '' : `, pour le ticket ${oneLine(issueRef, 20)}`;
  return (
    `L\u2019agent ${oneLine(query.requester, 100)} demande à utiliser l\u2019outil ${tool} ` +
    `dans le projet ${oneLine(query.project, 100)}${ticket}. ` +
    'Autorisez-vous cet appel ? (Sans réponse ici, la demande reste visible dans Permissions > Tools MCP IdeA.)'
  );
}
