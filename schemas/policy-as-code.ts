/**
 * Wire shapes of policy as code (docs/policy-as-code.md): the problems `idea-pdp check` and the
 * preview report, the test file `idea-pdp test` runs (published as
 * `schemas/mcp-tool-permissions.test.schema.json`), and the preview route's body and answer.
 */
import { Type, type Static } from '@sinclair/typebox';
import { ToolConditionsSchema } from './conditions.js';
import type { PolicyDocument } from './policy.js';

export const PROBLEM_CODES = [
  'invalid_json',
  'duplicate_key',
  'too_deep',
  'invalid_shape',
  'unsupported_version',
  'invalid_agent_id',
  'duplicate_agent',
  'ask_conflict',
  'unreadable',
  'unknown_tool',
  'agents_file',
  'invalid_test_file',
  'condition_unlisted_tool',
  'invalid_condition',
  'unknown_argument',
  'weak_deny_list',
  // Usage limits (docs/api.md#usage-limits).
  'limit_unlisted_tool',
  'invalid_limit',
  // Policy as code in CI and hooks (docs/policy-as-code.md).
  'unknown_agent',
  'misnamed_file',
  'missing_file',
  'too_many_problems',
  'duplicate_tool',
  'staged_link',
  'coverage_below_minimum',
] as const;
export const ProblemCodeSchema = Type.Union(PROBLEM_CODES.map((code) => Type.Literal(code)));
export type ProblemCode = Static<typeof ProblemCodeSchema>;

/** One line of `idea-pdp check`: `<file>:<line>:<column>: <severity> <code>: <message>`. */
export const PolicyProblemSchema = Type.Object({
  file: Type.String({ description: 'Path of the file (relative to the current folder for the command, to the project for the preview).' }),
  line: Type.Integer({ minimum: 1 }),
  column: Type.Integer({ minimum: 1 }),
  severity: Type.Union([Type.Literal('error'), Type.Literal('warning')]),
  code: ProblemCodeSchema,
  message: Type.String(),
});
export type PolicyProblem = Static<typeof PolicyProblemSchema>;

export const EXPECTATIONS = ['allow', 'deny', 'ask'] as const;
export const ExpectationSchema = Type.Union(EXPECTATIONS.map((expectation) => Type.Literal(expectation)));
/** `allow`, `deny`, or `ask` (the decision's reason is `approval_required`). */
export type Expectation = Static<typeof ExpectationSchema>;

export const PolicyTestCaseSchema = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 256, description: 'Shown when the case fails.' })),
    requester: Type.String({
      maxLength: 512,
      description: 'As in a /decide query: an agent id, "" or "mcp", or ticket-assistant:<project>:<issue>.',
    }),
    tool: Type.String({ maxLength: 256 }),
    expect: ExpectationSchema,
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'As in a /decide query.' })),
  },
  { additionalProperties: false },
);
export type PolicyTestCase = Static<typeof PolicyTestCaseSchema>;

export const PolicyTestFileSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    version: Type.Literal(1),
    cases: Type.Array(PolicyTestCaseSchema, { maxItems: 10_000 }),
  },
  {
    $id: 'https://idea.local/schemas/mcp-tool-permissions.test.schema.json',
    title: 'IdeA MCP tool permissions: expectations',
    description: 'Expected decisions for the policy file beside this one (.ideai/mcp-tool-permissions.json), run by `idea-pdp test`.',
    additionalProperties: false,
  },
);
export type PolicyTestFile = Static<typeof PolicyTestFileSchema>;

// ---------------------------------------------------------------- preview

export const PreviewBodySchema = Type.Object(
  {
    document: Type.Unsafe<PolicyDocument>(
      Type.Any({
        description: 'The proposed policy document (docs/api.md#projects-and-files); an invalid one answers valid: false with its errors.',
      }),
    ),
  },
  { additionalProperties: false },
);
export type PreviewBody = Static<typeof PreviewBodySchema>;

const ToolListSchema = Type.Array(Type.String());
const EffectiveListsSchema = Type.Object({ allowedTools: ToolListSchema, askTools: ToolListSchema });

/** One tool's conditions before and after a change, for a reviewer. */
export const ConditionChangeSchema = Type.Object({
  tool: Type.String(),
  before: Type.Union([ToolConditionsSchema, Type.Null()]),
  after: Type.Union([ToolConditionsSchema, Type.Null()]),
});
export type ConditionChange = Static<typeof ConditionChangeSchema>;

export const PreviewAgentSchema = Type.Object({
  agentId: Type.String({ description: 'An agent id, or "*default" for the project default.' }),
  before: EffectiveListsSchema,
  after: EffectiveListsSchema,
  added: Type.Array(Type.String(), { description: 'Tools allowed after and not before.' }),
  removed: Type.Array(Type.String(), { description: 'Tools allowed before and not after.' }),
  conditionsChanged: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Tools whose conditions on arguments change (docs/api.md#conditions-on-a-tools-arguments); always sent.',
    }),
  ),
  askAdded: Type.Array(Type.String(), { description: 'Tools on ask after and not before.' }),
  askRemoved: Type.Array(Type.String(), { description: 'Tools on ask before and not after.' }),
  conditions: Type.Array(ConditionChangeSchema, {
    description: 'Each tool of conditionsChanged with its conditions before and after (null: none), in the same order.',
  }),
});
export type PreviewAgent = Static<typeof PreviewAgentSchema>;

export const ReplayOutcomeSchema = Type.Union([Type.Literal('allow'), Type.Literal('deny'), Type.Literal('ask')]);
export type ReplayOutcome = Static<typeof ReplayOutcomeSchema>;

export const ReplayChangeSchema = Type.Object({
  requester: Type.String(),
  tool: Type.String(),
  before: ReplayOutcomeSchema,
  after: ReplayOutcomeSchema,
  calls: Type.Integer({ minimum: 1 }),
  lastAt: Type.String({ description: 'ISO 8601 time of the latest of these calls.' }),
});
export type ReplayChange = Static<typeof ReplayChangeSchema>;

export const PreviewReplaySchema = Type.Object({
  decisions: Type.Integer({ minimum: 0, description: 'Recent decisions replayed.' }),
  from: Type.Union([Type.String(), Type.Null()], { description: 'Time of the oldest one (null when there are none).' }),
  to: Type.Union([Type.String(), Type.Null()], { description: 'Time of the newest one (null when there are none).' }),
  counts: Type.Object({
    allowToDeny: Type.Integer({ minimum: 0 }),
    denyToAllow: Type.Integer({ minimum: 0 }),
    toAsk: Type.Integer({ minimum: 0 }),
    notReplayable: Type.Optional(
      Type.Integer({
        minimum: 0,
        description: 'Calls not decided again: a condition names an argument the ring did not keep for them (always sent).',
      }),
    ),
  }),
  changed: Type.Array(ReplayChangeSchema),
});
export type PreviewReplay = Static<typeof PreviewReplaySchema>;

export const PreviewResponseSchema = Type.Object({
  project: Type.String(),
  revision: Type.String({ description: 'The current revision the preview compares with.' }),
  valid: Type.Boolean(),
  errors: Type.Array(PolicyProblemSchema, { description: 'The problems `idea-pdp check` reports for this document (warnings included).' }),
  agents: Type.Array(PreviewAgentSchema),
  replay: PreviewReplaySchema,
});
export type PreviewResponse = Static<typeof PreviewResponseSchema>;
