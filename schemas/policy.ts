/**
 * The policy document stored at `<project>/.ideai/mcp-tool-permissions.json` (SPEC §3), and the
 * patterns of the identifiers the service accepts. The JSON Schema published as
 * `schemas/mcp-tool-permissions.schema.json` is generated from `PolicyDocumentSchema`.
 */
import { Type, type Static } from '@sinclair/typebox';

/** Project ids: also the folder names under `PDP_PROJECTS_ROOT`. */
export const PROJECT_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$';
/** Agent ids: no whitespace first, no `:`, `/` or `\`, no control characters, 1 to 128 characters. */
export const AGENT_ID_PATTERN = '^[^\\s:/\\\\\\u0000-\\u001f\\u007f][^:/\\\\\\u0000-\\u001f\\u007f]{0,127}$';

export const PROJECT_ID_REGEX = new RegExp(PROJECT_ID_PATTERN);
export const AGENT_ID_REGEX = new RegExp(AGENT_ID_PATTERN, 'u');

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
  },
  { additionalProperties: false },
);
export type Allowlist = Static<typeof AllowlistSchema>;

export const AgentOverrideSchema = Type.Object(
  {
    agentId: Type.String({ pattern: AGENT_ID_PATTERN, description: 'The agent this override applies to.' }),
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
      'Per-project MCP tool permissions: an optional project default allowlist and per-agent overrides that replace it.',
    additionalProperties: false,
  },
);
export type PolicyDocument = Static<typeof PolicyDocumentSchema>;
