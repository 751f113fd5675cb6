/**
 * The tools a project knows (docs/api.md#other-mcp-servers-tools): IdeA's catalog, plus the tools of
 * other MCP servers its `.ideai/mcp-servers.json` declares, named `<server>/<tool>`, each with the
 * access class a person chose. A name that is in neither is unknown, and never grants anything.
 */
import {
  READ_ONLY_DEFAULT,
  SERVER_METHODS,
  TOOL_CATALOG,
  findTool,
  isToolName,
  knownArguments,
  qualifiedToolName,
  type DeclaredServer,
  type ServersDocument,
  type ToolAccess,
} from '../../schemas/index.js';

/** A tool as decisions and views see it: IdeA's (no `server`) or a declared server's. */
export interface KnownTool {
  readonly name: string;
  readonly access: ToolAccess;
  readonly label: string;
  /** IdeA's group id, or `server:<id>`. */
  readonly group: string;
  readonly issueScoped: boolean;
  /** The declaring server's id, for a declared tool. */
  readonly server?: string;
  /** The server's own tool name (without `<server>/`), for a declared tool. */
  readonly serverTool?: string;
}

export interface DeclaredServerTools {
  readonly id: string;
  readonly label: string;
  /** Its declared tools, then its implicit methods (`resources/read`, `prompts/get`), all qualified. */
  readonly tools: readonly KnownTool[];
}

export interface ProjectCatalog {
  /** Short hash of `.ideai/mcp-servers.json`'s bytes, `"builtin"` without the file. */
  readonly revision: string;
  readonly servers: readonly DeclaredServerTools[];
  /** The tool named exactly `name`, or undefined. */
  find(name: string): KnownTool | undefined;
  /** The canonical read-only set: IdeA's read tools, then the declared `read` tools. */
  readonly readOnly: readonly string[];
  /** Position of a known name in catalog order (unknown names last). */
  order(name: string): number;
  /** Every known name, in catalog order. */
  readonly names: readonly string[];
  /**
   * The arguments `name` is known to take; undefined when they are not known (a declared server's tool:
   * its `inputSchema` is the server's to say, see {@link withArguments}).
   */
  knownArguments(name: string): readonly string[] | undefined;
}

/** IdeA's tools' arguments; undefined for any other name. */
const ideaArguments = (name: string): readonly string[] | undefined => (isToolName(name) ? knownArguments(name) : undefined);

const IDEA_NAMES: readonly string[] = TOOL_CATALOG.map((tool) => tool.name);
const IDEA_ORDER: ReadonlyMap<string, number> = new Map(IDEA_NAMES.map((name, index) => [name, index]));

/** IdeA's catalog alone: what a project without `.ideai/mcp-servers.json` knows. */
export const IDEA_CATALOG: ProjectCatalog = Object.freeze({
  revision: 'builtin',
  servers: Object.freeze([]),
  find: findTool,
  readOnly: READ_ONLY_DEFAULT,
  order: (name: string) => IDEA_ORDER.get(name) ?? Number.MAX_SAFE_INTEGER,
  names: IDEA_NAMES,
  knownArguments: ideaArguments,
});

/**
 * IdeA's catalog, for the checks of a project whose servers file is invalid (its decisions are all
 * denied): a `<server>/<tool>` is said to be unknown because of that file, not because it is undeclared.
 */
export const INVALID_SERVERS_CATALOG: ProjectCatalog = Object.freeze({ ...IDEA_CATALOG, revision: 'invalid-servers' });

/** The catalog of a valid servers document; `revision` is the file's. */
export function projectCatalog(document: ServersDocument, revision: string): ProjectCatalog {
  const servers: DeclaredServerTools[] = [];
  const declared = new Map<string, KnownTool>();
  const methodArguments = new Map<string, readonly string[]>();
  for (const [id, server] of Object.entries(document.servers)) {
    const group = `server:${id}`;
    const tools: KnownTool[] = [];
    for (const [serverTool, tool] of Object.entries(server.tools)) {
      const entry = Object.freeze({
        name: qualifiedToolName(id, serverTool),
        access: tool.access,
        label: tool.label ?? serverTool,
        group,
        issueScoped: false,
        server: id,
        serverTool,
      });
      tools.push(entry);
    }
    for (const { method, label, arguments: names } of SERVER_METHODS) {
      methodArguments.set(qualifiedToolName(id, method), names);
      tools.push(
        Object.freeze({
          name: qualifiedToolName(id, method),
          access: 'read',
          label,
          group,
          issueScoped: false,
          server: id,
          serverTool: method,
        }),
      );
    }
    for (const tool of tools) declared.set(tool.name, tool);
    servers.push(Object.freeze({ id, label: server.label ?? id, tools: Object.freeze(tools) }));
  }
  const names = [...IDEA_NAMES, ...declared.keys()];
  const order = new Map(names.map((name, index) => [name, index]));
  return Object.freeze({
    revision,
    servers: Object.freeze(servers),
    // IdeA's names first: a declared name always holds a `/`, which no IdeA tool does.
    find: (name: string) => findTool(name) ?? declared.get(name),
    readOnly: Object.freeze([
      ...READ_ONLY_DEFAULT,
      ...[...declared.values()].filter((tool) => tool.access === 'read').map((tool) => tool.name),
    ]),
    order: (name: string) => order.get(name) ?? Number.MAX_SAFE_INTEGER,
    names: Object.freeze(names),
    // A server's tools' arguments are not declared: they are known once its tools/list is reported (withArguments).
    knownArguments: (name: string) => ideaArguments(name) ?? methodArguments.get(name),
  });
}

/**
 * `catalog`, knowing also the arguments of its declared tools that `lookup` (the server's own name of
 * the tool) knows, from what the server's `tools/list` said (docs/api.md#other-mcp-servers-tools). For
 * checks and views only: a decision never reads what a server says of itself.
 */
export function withArguments(
  catalog: ProjectCatalog,
  lookup: (server: string, tool: string) => readonly string[] | undefined,
): ProjectCatalog {
  if (catalog.servers.length === 0) return catalog;
  return Object.freeze({
    ...catalog,
    knownArguments: (name: string) => {
      const known = catalog.knownArguments(name);
      if (known !== undefined) return known;
      const tool = catalog.find(name);
      return tool?.server === undefined || tool.serverTool === undefined ? undefined : lookup(tool.server, tool.serverTool);
    },
  });
}

/** A catalog as plain data, for checks on another thread: its servers file's document and the arguments known. */
export type CatalogSnapshot =
  | { readonly kind: 'idea' }
  | { readonly kind: 'invalid-servers' }
  | {
      readonly kind: 'declared';
      readonly revision: string;
      readonly document: ServersDocument;
      readonly arguments: readonly (readonly [string, readonly string[]])[];
    };

/** `catalog` as plain data (see {@link catalogFromSnapshot}). */
export function catalogSnapshot(catalog: ProjectCatalog): CatalogSnapshot {
  if (catalog === IDEA_CATALOG) return { kind: 'idea' };
  if (catalog === INVALID_SERVERS_CATALOG) return { kind: 'invalid-servers' };
  const servers: Record<string, DeclaredServer> = {};
  const args: [string, readonly string[]][] = [];
  for (const server of catalog.servers) {
    const tools: DeclaredServer['tools'] = {};
    for (const tool of server.tools) {
      if (tool.serverTool === undefined || SERVER_METHODS.some(({ method }) => method === tool.serverTool)) continue;
      tools[tool.serverTool] = { access: tool.access, label: tool.label };
      const known = catalog.knownArguments(tool.name);
      if (known !== undefined) args.push([tool.name, known]);
    }
    servers[server.id] = { label: server.label, tools };
  }
  return { kind: 'declared', revision: catalog.revision, document: { version: 1, servers }, arguments: args };
}

/** A catalog that checks names and arguments as `catalogSnapshot`'s did. */
export function catalogFromSnapshot(snapshot: CatalogSnapshot): ProjectCatalog {
  if (snapshot.kind === 'idea') return IDEA_CATALOG;
  if (snapshot.kind === 'invalid-servers') return INVALID_SERVERS_CATALOG;
  const known = new Map(snapshot.arguments);
  const catalog = projectCatalog(snapshot.document, snapshot.revision);
  return withArguments(catalog, (server, tool) => known.get(qualifiedToolName(server, tool)));
}

/** Sorts names in the catalog's order (unknown names last, in their order). */
export function sortInCatalogOrder<T extends string>(catalog: ProjectCatalog, names: Iterable<T>): T[] {
  return [...names].sort((a, b) => catalog.order(a) - catalog.order(b));
}
