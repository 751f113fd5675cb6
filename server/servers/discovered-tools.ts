/**
 * Tools other MCP servers listed that their project's catalog does not declare (docs/api.md#other-mcp-servers-tools),
 * as `idea-mcp-proxy` reports them: shown to a person to declare, never a permission (no decision
 * reads this). Bounded in every direction, so a hostile server that lists 100,000 tools with giant
 * descriptions costs the service at most a few MB: 500 tools a server, 32 servers a project, a
 * description cut at 300 characters, and 10 reports a minute per project and server. The argument
 * names of each tool's `inputSchema` (declared tools included) are what the catalog knows the tool
 * takes, for checks of conditions (withArguments); no decision reads them either.
 */
import {
  ARGUMENT_NAME_REGEX,
  MAX_DISCOVERED_ARGUMENT_NAMES,
  MAX_DISCOVERED_DESCRIPTION,
  MAX_DISCOVERED_PER_SERVER,
  type DiscoveredInput,
  type DiscoveredTool,
  type ServersResponse,
  type ToolAnnotations,
} from '../../schemas/index.js';
import { withArguments, type ProjectCatalog } from '../domain/project-catalog.js';
import { ApiError } from '../errors.js';

/** Servers only discovered (not declared) a project keeps: 32 × 500 tools × ~1 KB is ~16 MB at most. */
export const MAX_DISCOVERED_SERVERS = 32;
/** Reports a minute per project and server: a proxy reports once per distinct list, so 10 leaves room for restarts. */
export const DISCOVERY_REPORTS_PER_MINUTE = 10;

interface Kept {
  readonly name: string;
  title: string | null;
  description: string | null;
  annotations: ToolAnnotations;
  readonly firstSeen: number;
  lastSeen: number;
}

interface ServerEntry {
  readonly tools: Map<string, Kept>;
  /** Times of the reports of the last minute (at most {@link DISCOVERY_REPORTS_PER_MINUTE}). */
  reports: number[];
  /** The argument names of the last report's tools that gave an `inputSchema`, by the server's tool name. */
  arguments: ReadonlyMap<string, readonly string[]>;
}

/** The names of an `inputSchema`'s properties a condition can name; undefined without properties (any object, by JSON Schema). */
function argumentNames(input: DiscoveredInput | undefined): readonly string[] | undefined {
  if (input?.properties === undefined) return undefined;
  return Object.freeze(Object.keys(input.properties).filter((name) => ARGUMENT_NAME_REGEX.test(name)));
}

export interface DiscoveredToolsOptions {
  readonly now?: () => number;
}

export class DiscoveredTools {
  private readonly byProject = new Map<string, Map<string, ServerEntry>>();
  private readonly now: () => number;

  constructor(options: DiscoveredToolsOptions = {}) {
    this.now = options.now ?? Date.now;
  }

  /** Keeps the tools of `server`'s report that `catalog` does not declare; throws `rate_limited` past the rate. */
  report(project: string, server: string, tools: readonly DiscoveredTool[], catalog: ProjectCatalog): { undeclared: number; kept: number } {
    const now = this.now();
    let servers = this.byProject.get(project);
    if (servers === undefined) this.byProject.set(project, (servers = new Map<string, ServerEntry>()));
    let entry = servers.get(server);
    if (entry === undefined) {
      if (servers.size >= MAX_DISCOVERED_SERVERS) {
        throw new ApiError('limit_exceeded', `Project ${project} already keeps the discovered tools of ${MAX_DISCOVERED_SERVERS} servers.`);
      }
      servers.set(server, (entry = { tools: new Map(), reports: [], arguments: new Map() }));
    }
    entry.reports = entry.reports.filter((at) => now - at < 60_000);
    if (entry.reports.length >= DISCOVERY_REPORTS_PER_MINUTE) {
      throw new ApiError(
        'rate_limited',
        `Server ${server} of project ${project} reported its tools ${DISCOVERY_REPORTS_PER_MINUTE} times in the last minute; retry later.`,
      );
    }
    entry.reports.push(now);
    // The last list is the server's own word on its tools' arguments: it replaces the one before.
    const args = new Map<string, readonly string[]>();
    let budget = MAX_DISCOVERED_ARGUMENT_NAMES;
    for (const tool of tools) {
      const names = argumentNames(tool.inputSchema);
      if (names === undefined || names.length > budget) continue;
      budget -= names.length;
      args.set(tool.name, names);
    }
    entry.arguments = args;
    let undeclared = 0;
    for (const tool of tools) {
      if (catalog.find(`${server}/${tool.name}`) !== undefined) continue;
      undeclared += 1;
      const known = entry.tools.get(tool.name);
      if (known === undefined && entry.tools.size >= MAX_DISCOVERED_PER_SERVER) continue;
      const kept: Kept = known ?? { name: tool.name, title: null, description: null, annotations: {}, firstSeen: now, lastSeen: now };
      kept.title = tool.title ?? null;
      kept.description = tool.description === undefined ? null : tool.description.slice(0, MAX_DISCOVERED_DESCRIPTION);
      kept.annotations = { ...tool.annotations };
      kept.lastSeen = now;
      entry.tools.set(tool.name, kept);
    }
    return { undeclared, kept: entry.tools.size };
  }

  /** Declared servers with their tools, then servers only discovered; discovered tools the catalog now declares are left out. */
  list(project: string, catalog: ProjectCatalog): ServersResponse {
    const discovered = this.byProject.get(project) ?? new Map<string, ServerEntry>();
    const undeclaredOf = (server: string) =>
      [...(discovered.get(server)?.tools.values() ?? [])]
        .filter((tool) => catalog.find(`${server}/${tool.name}`) === undefined)
        .map((tool) => ({
          name: tool.name,
          title: tool.title,
          description: tool.description,
          annotations: tool.annotations,
          firstSeen: new Date(tool.firstSeen).toISOString(),
          lastSeen: new Date(tool.lastSeen).toISOString(),
        }));
    const declared = catalog.servers.map((server) => ({
      id: server.id,
      label: server.label,
      tools: server.tools.map(({ name, access, label }) => ({ name, access, label })),
      discovered: undeclaredOf(server.id),
    }));
    const declaredIds = new Set(catalog.servers.map((server) => server.id));
    const onlyDiscovered = [...discovered.keys()]
      .filter((id) => !declaredIds.has(id))
      .sort()
      .map((id) => ({ id, label: id, tools: [], discovered: undeclaredOf(id) }));
    return { servers: [...declared, ...onlyDiscovered] };
  }

  /** The argument names `server` last reported for its tool `tool`, or undefined when it gave no `inputSchema`. */
  argumentsOf(project: string, server: string, tool: string): readonly string[] | undefined {
    return this.byProject.get(project)?.get(server)?.arguments.get(tool);
  }

  /** `catalog` knowing the arguments of the declared tools whose server reported an `inputSchema`. */
  catalogWithArguments(project: string, catalog: ProjectCatalog): ProjectCatalog {
    return withArguments(catalog, (server, tool) => this.argumentsOf(project, server, tool));
  }

  /** Forgets what a project's servers listed (the project is gone). */
  forget(project: string): void {
    this.byProject.delete(project);
  }

  /** Told of every project change (server/projects/project-changes.ts): a removed project's reports go. */
  projectChanged(project: string, change: string): void {
    if (change === 'removed') this.forget(project);
  }
}
