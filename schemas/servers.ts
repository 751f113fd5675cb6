/**
 * The catalog of other MCP servers' tools a project declares, stored at `<project>/.ideai/mcp-servers.json`
 * (docs/api.md#other-mcp-servers-tools): each tool's access class is chosen by a person, next to the
 * policy. The JSON Schema published as `schemas/mcp-servers.schema.json` is generated from
 * `ServersDocumentSchema`.
 */
import { Type, type Static } from '@sinclair/typebox';

/** A server id: lower case, short, and never `idea` (IdeA's own tools keep their bare names). */
export const SERVER_ID_PATTERN = '^(?!idea$)[a-z][a-z0-9-]{0,31}$';
export const SERVER_ID_REGEX = new RegExp(SERVER_ID_PATTERN);

/** A tool key is the server's exact MCP tool name: 1 to 128 characters, no control character (C0, DEL, C1). */
export const SERVER_TOOL_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f]{1,128}$';
export const SERVER_TOOL_REGEX = new RegExp(SERVER_TOOL_PATTERN);

/** What the proxy decides of a declared server besides its tools, as `<server>/<method>`: implicitly declared `read`. */
export const SERVER_METHODS = [
  { method: 'resources/read', label: 'Lire une ressource du serveur', arguments: ['uri'] },
  { method: 'prompts/get', label: 'Obtenir un prompt du serveur', arguments: ['name', 'arguments'] },
] as const;

/** Declared servers a project may list, and tools a server may declare: far beyond any real server (server-everything lists 12). */
export const MAX_DECLARED_SERVERS = 64;
export const MAX_DECLARED_TOOLS_PER_SERVER = 1000;
export const MAX_SERVER_LABEL_LENGTH = 120;

export const DeclaredToolSchema = Type.Object(
  {
    access: Type.Union([Type.Literal('read'), Type.Literal('write')], {
      description: 'The access class a person chose: read tools are in the canonical read-only default.',
    }),
    label: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_SERVER_LABEL_LENGTH, description: "French label; absent = the tool's own name." }),
    ),
  },
  { additionalProperties: false },
);
export type DeclaredTool = Static<typeof DeclaredToolSchema>;

export const DeclaredServerSchema = Type.Object(
  {
    label: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_SERVER_LABEL_LENGTH, description: 'French label of the server; absent = its id.' }),
    ),
    tools: Type.Record(Type.String({ pattern: SERVER_TOOL_PATTERN }), DeclaredToolSchema, {
      maxProperties: MAX_DECLARED_TOOLS_PER_SERVER,
      additionalProperties: false,
      description: "The server's tools by their exact MCP name; each is named `<server>/<tool>` in policies.",
    }),
  },
  { additionalProperties: false },
);
export type DeclaredServer = Static<typeof DeclaredServerSchema>;

export const ServersDocumentSchema = Type.Object(
  {
    $schema: Type.Optional(Type.String()),
    version: Type.Literal(1),
    servers: Type.Record(Type.String({ pattern: SERVER_ID_PATTERN }), DeclaredServerSchema, {
      maxProperties: MAX_DECLARED_SERVERS,
      additionalProperties: false,
      description: 'Declared servers by id (^[a-z][a-z0-9-]{0,31}$, not "idea").',
    }),
  },
  {
    $id: 'https://idea.local/schemas/mcp-servers.schema.json',
    title: 'IdeA: other MCP servers of a project',
    description:
      "The tools of other MCP servers a project's agents may call through idea-mcp-proxy, each with the access class a person chose.",
    additionalProperties: false,
  },
);
export type ServersDocument = Static<typeof ServersDocumentSchema>;

/**
 * Whether `name` could name a declared server's tool (`<server>/<tool>`, by its form only): what a
 * saved grant or `once` answer may hold. Whether it is declared is the project's catalog's to say.
 */
export function isQualifiedToolName(name: string): boolean {
  const slash = name.indexOf('/');
  return slash > 0 && SERVER_ID_REGEX.test(name.slice(0, slash)) && SERVER_TOOL_REGEX.test(name.slice(slash + 1));
}

/** The qualified name of a server's tool, as policies and `/decide` name it. */
export const qualifiedToolName = (server: string, tool: string): string => `${server}/${tool}`;

// ---------------------------------------------------------------- discovered tools and the servers route

/** Tools of one server the service keeps as discovered, and how much of each (docs/api.md#other-mcp-servers-tools). */
export const MAX_DISCOVERED_PER_SERVER = 500;
export const MAX_DISCOVERED_DESCRIPTION = 300;
export const MAX_DISCOVERED_TITLE = 200;
/** Properties of a reported tool's `inputSchema`: a real tool takes a handful (server-filesystem's at most 4). */
export const MAX_DISCOVERED_ARGUMENTS = 64;
/** Argument names kept for all of one server's tools: of at most 64 characters, 128 KB a server (500 tools of 4 arguments fit). */
export const MAX_DISCOVERED_ARGUMENT_NAMES = 2000;

export const ToolAnnotationsSchema = Type.Object(
  {
    title: Type.Optional(Type.String({ maxLength: MAX_DISCOVERED_TITLE })),
    readOnlyHint: Type.Optional(Type.Boolean()),
    destructiveHint: Type.Optional(Type.Boolean()),
    idempotentHint: Type.Optional(Type.Boolean()),
    openWorldHint: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: "The server's own hints (MCP tool annotations): shown to a person, never a permission." },
);
export type ToolAnnotations = Static<typeof ToolAnnotationsSchema>;

export const DiscoveredInputSchema = Type.Object(
  {
    type: Type.Optional(Type.String()),
    properties: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        maxProperties: MAX_DISCOVERED_ARGUMENTS,
        description: 'Only the names are kept (those a condition can name); idea-mcp-proxy sends each as {}.',
      }),
    ),
  },
  { description: "The tool's inputSchema (tools/list): its property names are the arguments the catalog knows the tool takes." },
);
export type DiscoveredInput = Static<typeof DiscoveredInputSchema>;

export const DiscoveredToolSchema = Type.Object(
  {
    name: Type.String({ pattern: SERVER_TOOL_PATTERN, description: "The server's exact MCP tool name." }),
    title: Type.Optional(Type.String({ maxLength: MAX_DISCOVERED_TITLE })),
    description: Type.Optional(Type.String({ maxLength: MAX_DISCOVERED_DESCRIPTION })),
    annotations: Type.Optional(ToolAnnotationsSchema),
    inputSchema: Type.Optional(DiscoveredInputSchema),
  },
  { additionalProperties: false },
);
export type DiscoveredTool = Static<typeof DiscoveredToolSchema>;

export const DiscoveredBodySchema = Type.Object(
  { tools: Type.Array(DiscoveredToolSchema, { maxItems: MAX_DISCOVERED_PER_SERVER }) },
  { additionalProperties: false, description: "A server's tools/list result, as idea-mcp-proxy reports it (bounded)." },
);
export type DiscoveredBody = Static<typeof DiscoveredBodySchema>;

export const DiscoveredAcceptedSchema = Type.Object({
  received: Type.Integer({ description: 'Tools in the report.' }),
  undeclared: Type.Integer({ description: "Of those, the tools the project's catalog does not declare." }),
  kept: Type.Integer({ description: 'Discovered tools the service now keeps for this server (at most 500).' }),
});
export type DiscoveredAccepted = Static<typeof DiscoveredAcceptedSchema>;

export const ServerParamsSchema = Type.Object({
  project: Type.String({ maxLength: 256 }),
  server: Type.String({ pattern: SERVER_ID_PATTERN }),
});
export type ServerParams = Static<typeof ServerParamsSchema>;

export const ServersResponseSchema = Type.Object({
  servers: Type.Array(
    Type.Object({
      id: Type.String(),
      label: Type.String(),
      tools: Type.Array(
        Type.Object({
          name: Type.String({ description: 'The qualified name, <server>/<tool>.' }),
          access: Type.Union([Type.Literal('read'), Type.Literal('write')]),
          label: Type.String(),
        }),
        { description: 'Declared tools (a server only discovered has none).' },
      ),
      discovered: Type.Array(
        Type.Object({
          name: Type.String({ description: "The server's own tool name, as it listed it (declare it under this key)." }),
          title: Type.Union([Type.String(), Type.Null()]),
          description: Type.Union([Type.String(), Type.Null()]),
          annotations: ToolAnnotationsSchema,
          firstSeen: Type.String(),
          lastSeen: Type.String(),
        }),
        { description: 'Tools the server listed that the catalog does not declare: never a permission.' },
      ),
    }),
  ),
});
export type ServersResponse = Static<typeof ServersResponseSchema>;

// ---------------------------------------------------------------- declaring a tool (admin token)

export const DeclareToolParamsSchema = Type.Object({
  project: Type.String({ maxLength: 256 }),
  server: Type.String({ pattern: SERVER_ID_PATTERN }),
  tool: Type.String({ pattern: SERVER_TOOL_PATTERN, description: "The server's exact MCP tool name (URL-encoded)." }),
});
export type DeclareToolParams = Static<typeof DeclareToolParamsSchema>;

export const DeclareToolBodySchema = Type.Object(
  {
    access: Type.Union([Type.Literal('read'), Type.Literal('write')], {
      description: 'The class a person chose: a read tool joins the canonical read-only default at once.',
    }),
    label: Type.Optional(
      Type.String({ minLength: 1, maxLength: MAX_SERVER_LABEL_LENGTH, description: "French label of the tool; absent keeps the file's." }),
    ),
    serverLabel: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_SERVER_LABEL_LENGTH,
        description: 'French label of the server, used when the file gives it none (a server added by this write).',
      }),
    ),
  },
  { additionalProperties: false, description: "A tool's declaration in .ideai/mcp-servers.json." },
);
export type DeclareToolBody = Static<typeof DeclareToolBodySchema>;
