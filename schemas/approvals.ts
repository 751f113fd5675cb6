/**
 * Wire shapes of approvals and temporary grants (docs/api.md#approvals-and-temporary-grants): the server's route schemas, the
 * client SDK's response validation and the panel all read them from here.
 */
import { Type, type Static } from '@sinclair/typebox';
import type { PolicyConditions } from './conditions.js';
import { MAX_ALLOWLIST_ITEMS, MAX_TOOL_NAME_LENGTH } from './policy.js';

/** Longest temporary grant, and longest `for` answer. */
export const MAX_GRANT_TTL_SECONDS = 86_400;
/** Lifetime of a pending approval request when `PDP_APPROVAL_TTL_SECONDS` is not set. */
export const DEFAULT_APPROVAL_TTL_SECONDS = 300;
/** Longest long-poll of `GET /projects/:project/approvals/:id`. */
export const MAX_APPROVAL_WAIT_SECONDS = 60;
/** After the user refuses, the same requester and tool get `approval_denied` this long without a new request. */
export const APPROVAL_DENIAL_COOLDOWN_SECONDS = 60;
/** Open (pending) requests per project; past that, `approval_required` opens no new one. */
export const MAX_OPEN_APPROVALS_PER_PROJECT = 100;
/** Open requests one requester may hold in a project, so that made-up requesters cannot fill its queue alone. */
export const MAX_OPEN_APPROVALS_PER_REQUESTER = 10;

/**
 * Why a request closed unanswered before its time: `policy_changed`, its tool was no longer on ask
 * for its requester (an API write or an edit of the file); `displaced`, the project's queue was
 * full and it made room for an agent the project declares (its requester is not declared).
 */
export const ApprovalCauseSchema = Type.Union([Type.Literal('policy_changed'), Type.Literal('displaced')], {
  description: 'Why it closed unanswered: policy_changed (its tool left ask) or displaced (room made for a declared agent).',
});
export type ApprovalCause = Static<typeof ApprovalCauseSchema>;

export const APPROVAL_STATUSES = ['pending', 'approved', 'denied', 'expired'] as const;
export const ApprovalStatusSchema = Type.Union(APPROVAL_STATUSES.map((status) => Type.Literal(status)));
export type ApprovalStatus = Static<typeof ApprovalStatusSchema>;

export const APPROVAL_ANSWERS = ['once', 'for', 'always', 'deny'] as const;
export const ApprovalAnswerSchema = Type.Union(APPROVAL_ANSWERS.map((answer) => Type.Literal(answer)));
export type ApprovalAnswer = Static<typeof ApprovalAnswerSchema>;

/** The answers the approver token may give (never `always`, which writes the policy). */
export const APPROVER_ANSWERS: readonly ApprovalAnswer[] = ['once', 'for', 'deny'];
/** Longest `for` the approver token may answer: a working day, 8 h. */
export const MAX_APPROVER_GRANT_TTL_SECONDS = 28_800;

/** Which token answered: the admin token (the panel, an operator) or the approver token (an MCP host's elicitation). */
export const ApprovalAnsweredBySchema = Type.Union([Type.Literal('admin'), Type.Literal('approver')]);
export type ApprovalAnsweredBy = Static<typeof ApprovalAnsweredBySchema>;

/** Where the user gave the answer, as the caller declares it: `elicitation` is the MCP host's own form. */
export const ApprovalViaSchema = Type.Literal('elicitation', {
  description: 'Where the user answered, as the caller declares it: "elicitation" (the MCP host asked the user in its own window).',
});
export type ApprovalVia = Static<typeof ApprovalViaSchema>;

const isoTime = (description: string) => Type.String({ description: `ISO 8601 time ${description}.` });

/** The `approval` field of an `approval_required` decision. */
export const DecisionApprovalSchema = Type.Object({
  id: Type.String(),
  status: Type.Literal('pending'),
  expiresAt: isoTime('after which the request expires unanswered'),
});
export type DecisionApproval = Static<typeof DecisionApprovalSchema>;

export const ApprovalSchema = Type.Object({
  id: Type.String(),
  requester: Type.String(),
  tool: Type.String(),
  issueRef: Type.Optional(Type.String({ description: 'The ticket of the call that opened the request, as "#<n>".' })),
  status: ApprovalStatusSchema,
  createdAt: isoTime('the request was opened'),
  expiresAt: isoTime('after which the request expires unanswered'),
  answer: Type.Optional(ApprovalAnswerSchema),
  answeredAt: Type.Optional(isoTime('the user answered')),
  answeredBy: Type.Optional(ApprovalAnsweredBySchema),
  via: Type.Optional(ApprovalViaSchema),
  details: Type.Optional(
    Type.Object({
      cause: ApprovalCauseSchema,
    }),
  ),
});
export type Approval = Static<typeof ApprovalSchema>;

export const ApprovalsResponseSchema = Type.Object({ approvals: Type.Array(ApprovalSchema, { description: 'Newest first.' }) });
export type ApprovalsResponse = Static<typeof ApprovalsResponseSchema>;

export const ApprovalsQuerySchema = Type.Object({ status: Type.Optional(ApprovalStatusSchema) }, { additionalProperties: false });
export type ApprovalsQuery = Static<typeof ApprovalsQuerySchema>;

export const ApprovalParamsSchema = Type.Object({
  project: Type.String({ maxLength: 256 }),
  id: Type.String({ maxLength: 64 }),
});
export type ApprovalParams = Static<typeof ApprovalParamsSchema>;

export const ApprovalWaitQuerySchema = Type.Object(
  {
    waitSeconds: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_APPROVAL_WAIT_SECONDS,
        description: 'Long-poll: answer when the request changes, at the latest after this.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type ApprovalWaitQuery = Static<typeof ApprovalWaitQuerySchema>;

export const ApprovalAnswerBodySchema = Type.Object(
  {
    answer: ApprovalAnswerSchema,
    ttlSeconds: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_GRANT_TTL_SECONDS,
        description: 'Length of the temporary grant; with answer "for" only, and required there (at most 28,800 with the approver token).',
      }),
    ),
    via: Type.Optional(ApprovalViaSchema),
  },
  {
    additionalProperties: false,
    examples: [{ answer: 'once' }, { answer: 'for', ttlSeconds: 3600 }, { answer: 'once', via: 'elicitation' }],
  },
);
export type ApprovalAnswerBody = Static<typeof ApprovalAnswerBodySchema>;

// ---------------------------------------------------------------- temporary grants

export const GrantSchema = Type.Object({
  id: Type.String(),
  project: Type.String(),
  requester: Type.String(),
  tools: Type.Array(Type.String(), { description: 'Catalog order.' }),
  createdAt: isoTime('the grant was created'),
  expiresAt: isoTime('after which the grant no longer allows anything'),
  conditions: Type.Optional(
    Type.Unsafe<PolicyConditions>(
      Type.Record(Type.String(), Type.Unknown(), {
        description:
          "The conditions its tools had in the requester's effective policy when it was made, by tool (docs/api.md#conditions-on-a-tools-arguments): it never allows a call outside them. Absent when none had any.",
      }),
    ),
  ),
});
export type Grant = Static<typeof GrantSchema>;

/** The answer to an approval: the request as it now is, and the grant an answer "for" created. */
export const ApprovalAnswerResponseSchema = Type.Object({ approval: ApprovalSchema, grant: Type.Optional(GrantSchema) });
export type ApprovalAnswerResponse = Static<typeof ApprovalAnswerResponseSchema>;

export const GrantsResponseSchema = Type.Object({ grants: Type.Array(GrantSchema, { description: 'Live grants, newest first.' }) });
export type GrantsResponse = Static<typeof GrantsResponseSchema>;

export const GrantCreateBodySchema = Type.Object(
  {
    requester: Type.String({ maxLength: 512, description: 'An agent id (anonymous and ticket-assistant requesters cannot be granted).' }),
    tools: Type.Array(Type.String({ maxLength: MAX_TOOL_NAME_LENGTH }), { minItems: 1, maxItems: MAX_ALLOWLIST_ITEMS }),
    ttlSeconds: Type.Integer({ minimum: 1, maximum: MAX_GRANT_TTL_SECONDS }),
  },
  { additionalProperties: false, examples: [{ requester: 'DevFrontend', tools: ['idea_memory_write'], ttlSeconds: 3600 }] },
);
export type GrantCreateBody = Static<typeof GrantCreateBodySchema>;

export const GrantParamsSchema = Type.Object({
  project: Type.String({ maxLength: 256 }),
  id: Type.String({ maxLength: 64 }),
});
export type GrantParams = Static<typeof GrantParamsSchema>;
