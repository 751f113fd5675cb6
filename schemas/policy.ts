/**
 * The policy document stored at `<project>/.ideai/mcp-tool-permissions.json` (docs/api.md#projects-and-files), and the
 * patterns of the identifiers the service accepts. The JSON Schema published as
 * `schemas/mcp-tool-permissions.schema.json` is generated from `PolicyDocumentSchema`.
 */
import { Type, type Static } from '@sinclair/typebox';
import { PolicyConditionsSchema } from './conditions.js';
import { PolicyLimitsSchema } from './limits.js';
import { WRITABLE_AGENT_ID_PATTERN } from './ids.js';

export {
  AGENT_ID_PATTERN,
  AGENT_ID_REGEX,
  PROJECT_ID_PATTERN,
  PROJECT_ID_REGEX,
  WRITABLE_AGENT_ID_PATTERN,
  WRITABLE_AGENT_ID_REGEX,
} from './ids.js';

/** Largest allowlist accepted anywhere: the catalog has 25 tools, so this is generous. */
export const MAX_ALLOWLIST_ITEMS = 256;
/** Longest tool name accepted in an allowlist. */
export const MAX_TOOL_NAME_LENGTH = 128;

export const AllowlistSchema = Type.Object(
  {
    allowedTools: Type.Array(Type.String({ maxLength: MAX_TOOL_NAME_LENGTH }), {
      maxItems: MAX_ALLOWLIST_ITEMS,
      description: 'Complete list of the tools allowed (names from the catalog).',
    }),
    askTools: Type.Optional(
      Type.Array(Type.String({ maxLength: MAX_TOOL_NAME_LENGTH }), {
        maxItems: MAX_ALLOWLIST_ITEMS,
        description: "Tools that run only with the user's approval (names from the catalog, none of them in allowedTools); absent = none.",
      }),
    ),
    conditions: Type.Optional(PolicyConditionsSchema),
    limits: Type.Optional(PolicyLimitsSchema),
  },
  { additionalProperties: false },
);
export type Allowlist = Static<typeof AllowlistSchema>;

export const AgentOverrideSchema = Type.Object(
  {
    agentId: Type.String({
      pattern: WRITABLE_AGENT_ID_PATTERN,
      description:
        "The agent this override applies to: 1 to 128 UTF-16 code units, no ':', '/', '\\' or control character, no whitespace but inner spaces, no invisible character, not \"mcp\", and unchanged by Unicode NFKC normalization (the service checks that last rule; the pattern is matched without the regular expression 'u' flag).",
    }),
    policy: AllowlistSchema,
  },
  { additionalProperties: false },
);
export type AgentOverride = Static<typeof AgentOverrideSchema>;

export const PolicyDocumentSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    version: Type.Literal(1),
    projectDefault: Type.Optional(AllowlistSchema),
    agents: Type.Optional(Type.Array(AgentOverrideSchema, { maxItems: 10_000 })),
  },
  {
    $id: 'https://idea.local/schemas/mcp-tool-permissions.schema.json',
    title: 'IdeA MCP tool permissions',
    description:
      'Per-project MCP tool permissions: an optional project default allowlist and per-agent overrides that replace it; each may put tools on ask (askTools).',
    additionalProperties: false,
  },
);
export type PolicyDocument = Static<typeof PolicyDocumentSchema>;
