/**
 * Wire shapes of the HTTP API (docs/api.md#http-api, docs/api.md#ephemeral-ticket-assistant-policies):
 * the server's route schemas and the client SDK's response validation both come from here.
 */
import { Type, type Static } from '@sinclair/typebox';
import { DecisionApprovalSchema } from './approvals.js';
import type { PolicyConditions } from './conditions.js';
import { EffectiveLimitSchema, LimitSchema } from './limits.js';
import { AllowlistSchema, MAX_ALLOWLIST_ITEMS, MAX_TOOL_NAME_LENGTH, type PolicyDocument } from './policy.js';

const str = (maxLength: number, description?: string) =>
  Type.String(description === undefined ? { maxLength } : { maxLength, description });

// ---------------------------------------------------------------- decisions

export const REQUESTER_KINDS = ['anonymous', 'ticket-assistant', 'agent', 'invalid'] as const;
export const RequesterKindSchema = Type.Union(REQUESTER_KINDS.map((kind) => Type.Literal(kind)));
export type RequesterKind = Static<typeof RequesterKindSchema>;

export const DECISION_REASONS = [
  'allowed',
  'not_in_allowlist',
  'unknown_tool',
  'unknown_project',
  'policy_invalid',
  'requester_project_mismatch',
  'issue_out_of_bounds',
  'invalid_requester',
  'approval_required',
  'approval_denied',
  'invalid_arguments',
  'argument_not_allowed',
  'rate_limited',
] as const;
export const DecisionReasonSchema = Type.Union(DECISION_REASONS.map((reason) => Type.Literal(reason)));
export type DecisionReason = Static<typeof DecisionReasonSchema>;

export const POLICY_SOURCES = ['agent-override', 'project-default', 'builtin-read-only', 'ephemeral', 'none', 'grant', 'approval'] as const;
export const PolicySourceSchema = Type.Union(POLICY_SOURCES.map((source) => Type.Literal(source)));
export type PolicySource = Static<typeof PolicySourceSchema>;

/**
 * The decide query's `arguments`: any JSON object (real tools take nested arguments); only the arguments
 * a condition or a ticket binding names are read, and a body's size is bounded by the route's limit.
 */
export const CallArgumentsSchema = Type.Record(Type.String(), Type.Unknown(), {
  description: 'The call arguments, as the tool receives them; only issueRef and the arguments a condition names are read.',
});
export type CallArguments = Static<typeof CallArgumentsSchema>;

export const DecideQuerySchema = Type.Object(
  {
    project: str(256, 'Project id.'),
    requester: str(512, 'Who calls: "" or "mcp" (anonymous), "ticket-assistant:<project>:<issue>", or an agent id.'),
    tool: str(256, 'Tool name as the model called it.'),
    arguments: Type.Optional(CallArgumentsSchema),
  },
  {
    additionalProperties: false,
    examples: [{ project: 'demo', requester: 'DevFrontend', tool: 'idea_ticket_update_carnet', arguments: { issueRef: '#82' } }],
  },
);
export type DecideQuery = Static<typeof DecideQuerySchema>;

export const RequesterSchema = Type.Object({ id: Type.String(), kind: RequesterKindSchema });
export type Requester = Static<typeof RequesterSchema>;

export const DecisionSchema = Type.Object(
  {
    allow: Type.Boolean(),
    reason: DecisionReasonSchema,
    message: Type.String(),
    source: PolicySourceSchema,
    requester: RequesterSchema,
    tool: Type.Object({
      name: Type.String(),
      access: Type.Union([Type.Literal('read'), Type.Literal('write'), Type.Literal('unknown')]),
    }),
    project: Type.String(),
    revision: Type.String({
      description: 'Revision of the policy the decision used ("builtin" without a file, "none" for an unknown project).',
    }),
    decisionId: Type.String(),
    argument: Type.Optional(
      Type.String({ description: 'With reason argument_not_allowed: the argument whose condition refused the call.' }),
    ),
    retryAfterSeconds: Type.Optional(
      Type.Integer({ minimum: 1, description: 'With reason rate_limited: seconds until the oldest counted call leaves the window.' }),
    ),
    approval: Type.Optional(
      Type.Object(DecisionApprovalSchema.properties, {
        description:
          'With reason approval_required when a request is open: the request to wait for (GET /projects/:project/approvals/:id).',
      }),
    ),
  },
  {
    examples: [
      {
        allow: false,
        reason: 'not_in_allowlist',
        message:
          'Tool idea_memory_write is denied for agent DevFrontend in project demo (policy: agent-override). Grant it in Permissions > Tools MCP IdeA.',
        source: 'agent-override',
        requester: { id: 'DevFrontend', kind: 'agent' },
        tool: { name: 'idea_memory_write', access: 'write' },
        project: 'demo',
        revision: '3f2a9c1b0d4e5f60',
        decisionId: '9c1f2e7a4b3d-1k',
      },
    ],
  },
);
export type Decision = Static<typeof DecisionSchema>;

export const MAX_BATCH_QUERIES = 100;
/** The largest body of `POST /decide` and `POST /decide/batch`: a query is a few hundred bytes, so 100 fit many times. */
export const DECIDE_BODY_LIMIT = 64 * 1024;
export const DecideBatchBodySchema = Type.Object(
  { queries: Type.Array(DecideQuerySchema, { minItems: 1, maxItems: MAX_BATCH_QUERIES }) },
  { additionalProperties: false },
);
export type DecideBatchBody = Static<typeof DecideBatchBodySchema>;
export const DecideBatchResponseSchema = Type.Object({ decisions: Type.Array(DecisionSchema) });
export type DecideBatchResponse = Static<typeof DecideBatchResponseSchema>;

// ---------------------------------------------------------------- catalog and projects

export const CatalogResponseSchema = Type.Object({
  tools: Type.Array(
    Type.Object({
      name: Type.String(),
      access: Type.Union([Type.Literal('read'), Type.Literal('write')]),
      group: Type.String(),
      label: Type.String(),
      issueScoped: Type.Boolean(),
      arguments: Type.Optional(
        Type.Array(Type.String(), { description: 'The arguments this tool is known to take (names a condition may use); always sent.' }),
      ),
      server: Type.Optional(
        Type.String({
          description: "For a tool a project's .ideai/mcp-servers.json declares: its server's id (its name is <server>/<tool>).",
        }),
      ),
    }),
  ),
  groups: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
  readOnlyDefault: Type.Array(Type.String()),
  version: Type.Optional(
    Type.String({ description: 'Short hash of the project\'s .ideai/mcp-servers.json ("builtin" without one); also the ETag.' }),
  ),
});
export type CatalogResponse = Static<typeof CatalogResponseSchema>;

export const ProjectStatusSchema = Type.Union([Type.Literal('ok'), Type.Literal('invalid')]);
export type ProjectStatus = Static<typeof ProjectStatusSchema>;

export const ProjectSummarySchema = Type.Object({
  id: Type.String(),
  status: ProjectStatusSchema,
  revision: Type.String(),
  agents: Type.Integer({ description: 'Agents listed by the permissions view (declared or with an override).' }),
  overrides: Type.Integer({ description: 'Agent overrides in the policy document.' }),
});
export const ProjectsResponseSchema = Type.Object({ projects: Type.Array(ProjectSummarySchema) });
export type ProjectsResponse = Static<typeof ProjectsResponseSchema>;

// ---------------------------------------------------------------- permissions of a project

export const ProjectParamsSchema = Type.Object({ project: Type.String({ maxLength: 256 }) });
export type ProjectParams = Static<typeof ProjectParamsSchema>;
export const AgentParamsSchema = Type.Object({
  project: Type.String({ maxLength: 256 }),
  agentId: Type.String({ maxLength: 1024 }),
});
export type AgentParams = Static<typeof AgentParamsSchema>;
export const RequesterParamsSchema = Type.Object({
  project: Type.String({ maxLength: 256 }),
  requester: Type.String({ maxLength: 1024 }),
});
export type RequesterParams = Static<typeof RequesterParamsSchema>;

export const AllowlistBodySchema = Type.Object(AllowlistSchema.properties, {
  additionalProperties: false,
  examples: [{ allowedTools: ['idea_ticket_read', 'idea_ticket_list', 'idea_ticket_update_carnet'] }],
});
export type AllowlistBody = Static<typeof AllowlistBodySchema>;

export const PolicyErrorSchema = Type.Object({
  message: Type.String(),
  file: Type.String({ description: 'Path of the file, relative to the project root.' }),
  line: Type.Optional(Type.Integer()),
  column: Type.Optional(Type.Integer()),
  path: Type.Optional(Type.String({ description: 'JSON pointer of the offending value, for shape errors.' })),
});
export type PolicyError = Static<typeof PolicyErrorSchema>;

/**
 * With `status: "invalid"`: the last valid document this service saw for the project, to show and to
 * repair from, never used for decisions. Its shape is the policy document's (not repeated here, so
 * the response serializer writes it as it is).
 */
export const LastValidSchema = Type.Object({
  revision: Type.String(),
  document: Type.Unsafe<PolicyDocument>(
    Type.Object(
      { version: Type.Literal(1) },
      { additionalProperties: true, description: 'A policy document (docs/api.md#projects-and-files).' },
    ),
  ),
});
export type LastValid = Static<typeof LastValidSchema>;

export const AgentPermissionsSchema = Type.Object({
  agentId: Type.String(),
  name: Type.String(),
  declared: Type.Boolean(),
  mode: Type.Union([Type.Literal('inherit'), Type.Literal('override')]),
  allowedTools: Type.Array(Type.String(), { description: 'Effective allowlist, catalog order.' }),
  askTools: Type.Optional(
    Type.Array(Type.String(), { description: "Effective tools on ask (run with the user's approval), catalog order." }),
  ),
  added: Type.Array(Type.String()),
  removed: Type.Array(Type.String()),
  redundant: Type.Boolean(),
  unknownTools: Type.Array(Type.String()),
  conditions: Type.Optional(
    Type.Unsafe<PolicyConditions>(
      Type.Record(Type.String(), Type.Unknown(), {
        description: 'Effective conditions on arguments, by tool (docs/api.md#conditions-on-a-tools-arguments).',
      }),
    ),
  ),
  limits: Type.Optional(
    Type.Record(Type.String(), LimitSchema, { description: 'Effective usage limits, by tool (docs/api.md#usage-limits).' }),
  ),
});
export type AgentPermissions = Static<typeof AgentPermissionsSchema>;

export const PermissionsViewSchema = Type.Object({
  project: Type.String(),
  revision: Type.String(),
  status: ProjectStatusSchema,
  error: Type.Union([PolicyErrorSchema, Type.Null()]),
  fileExists: Type.Boolean(),
  projectDefault: Type.Object({
    mode: Type.Union([Type.Literal('builtin'), Type.Literal('custom')]),
    allowedTools: Type.Array(Type.String()),
    askTools: Type.Optional(Type.Array(Type.String(), { description: "Tools on ask (run with the user's approval), catalog order." })),
    unknownTools: Type.Array(Type.String()),
    conditions: Type.Optional(
      Type.Unsafe<PolicyConditions>(
        Type.Record(Type.String(), Type.Unknown(), {
          description: 'Conditions on arguments, by tool (docs/api.md#conditions-on-a-tools-arguments).',
        }),
      ),
    ),
    limits: Type.Optional(Type.Record(Type.String(), LimitSchema, { description: 'Usage limits, by tool (docs/api.md#usage-limits).' })),
  }),
  agents: Type.Array(AgentPermissionsSchema),
  agentsFile: Type.Optional(
    Type.Object({
      exists: Type.Boolean(),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
  lastValid: Type.Optional(Type.Union([LastValidSchema, Type.Null()])),
});
export type PermissionsView = Static<typeof PermissionsViewSchema>;

// ---------------------------------------------------------------- inspection

export const EffectivePolicySchema = Type.Object({
  project: Type.String(),
  requester: RequesterSchema,
  source: PolicySourceSchema,
  allowedTools: Type.Array(Type.String()),
  askTools: Type.Optional(
    Type.Array(Type.String(), {
      description: "Tools that run with the user's approval (agents only); not in allowedTools nor deniedTools.",
    }),
  ),
  deniedTools: Type.Array(Type.String()),
  revision: Type.String(),
  boundIssue: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  limits: Type.Optional(
    Type.Array(EffectiveLimitSchema, {
      description: 'Each limited tool with its limit and the calls left in the current window (docs/api.md#usage-limits).',
    }),
  ),
});
export type EffectivePolicy = Static<typeof EffectivePolicySchema>;

export const RecentDecisionsQuerySchema = Type.Object(
  {
    allow: Type.Optional(Type.Boolean()),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 50 })),
  },
  { additionalProperties: false },
);
export type RecentDecisionsQuery = Static<typeof RecentDecisionsQuerySchema>;

export const RecentDecisionSchema = Type.Object({
  decisionId: Type.String(),
  at: Type.String({ description: 'ISO 8601 time of the decision.' }),
  requester: Type.String(),
  tool: Type.String(),
  allow: Type.Boolean(),
  reason: DecisionReasonSchema,
  source: PolicySourceSchema,
  argument: Type.Optional(Type.String({ description: 'With reason argument_not_allowed: the argument whose condition refused the call.' })),
});
export type RecentDecision = Static<typeof RecentDecisionSchema>;
export const RecentDecisionsResponseSchema = Type.Object({ decisions: Type.Array(RecentDecisionSchema) });
export type RecentDecisionsResponse = Static<typeof RecentDecisionsResponseSchema>;

// ---------------------------------------------------------------- ephemeral policies

export const MAX_EPHEMERAL_TTL_SECONDS = 86_400;
export const DEFAULT_EPHEMERAL_TTL_SECONDS = 3_600;

export const EphemeralPolicyBodySchema = Type.Object(
  {
    allowedTools: Type.Array(Type.String({ maxLength: MAX_TOOL_NAME_LENGTH }), { maxItems: MAX_ALLOWLIST_ITEMS }),
    boundIssue: Type.Optional(Type.String({ minLength: 1, maxLength: 64, pattern: '^#?[A-Za-z0-9._-]+$' })),
    ttlSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_EPHEMERAL_TTL_SECONDS })),
  },
  {
    additionalProperties: false,
    examples: [{ allowedTools: ['idea_ticket_read', 'idea_ticket_update_carnet'], boundIssue: '#82', ttlSeconds: 3600 }],
  },
);
export type EphemeralPolicyBody = Static<typeof EphemeralPolicyBodySchema>;

export const EphemeralPolicySchema = Type.Object({
  project: Type.String(),
  requester: Type.String(),
  allowedTools: Type.Array(Type.String()),
  boundIssue: Type.Union([Type.String(), Type.Null()]),
  expiresAt: Type.String({ description: 'ISO 8601 time after which the requester is back to read-only.' }),
});
export type EphemeralPolicy = Static<typeof EphemeralPolicySchema>;
export const EphemeralPoliciesResponseSchema = Type.Object({ policies: Type.Array(EphemeralPolicySchema) });
export type EphemeralPoliciesResponse = Static<typeof EphemeralPoliciesResponseSchema>;
/** The answer of `DELETE …/ephemeral-policies/:requester` (idempotent: `true` whether or not one existed). */
export const EphemeralDeletedSchema = Type.Object({ deleted: Type.Literal(true) }, { additionalProperties: false });
export type EphemeralDeleted = Static<typeof EphemeralDeletedSchema>;

// ---------------------------------------------------------------- health

export const HealthSchema = Type.Object({ status: Type.String() });
export const ReadySchema = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('loading'), Type.Literal('degraded')]),
  projects: Type.Integer(),
  /** With `degraded`: folders that cannot be watched for lack of inotify watches or instances. */
  unwatchedFolders: Type.Optional(Type.Integer()),
  message: Type.Optional(Type.String()),
});
