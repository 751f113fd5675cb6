/**
 * `idea-mcp-proxy --server <id>` (docs/client.md#any-mcp-server-idea-mcp-proxy): the proxied server is one a
 * project's `.ideai/mcp-servers.json` declares, so its tools are decided and listed as `<id>/<tool>`,
 * its `resources/read` and `prompts/get` are decided as `<id>/resources/read` and `<id>/prompts/get`,
 * and what its `tools/list` holds is reported to the service, which keeps the undeclared tools for a
 * person to declare (never a permission). Kept apart from the relay, which only calls it.
 */
import { ARGUMENT_NAME_REGEX } from '../../schemas/conditions.js';
import {
  MAX_DISCOVERED_ARGUMENTS,
  MAX_DISCOVERED_DESCRIPTION,
  MAX_DISCOVERED_PER_SERVER,
  MAX_DISCOVERED_TITLE,
  SERVER_ID_REGEX,
  SERVER_TOOL_REGEX,
} from '../../schemas/servers.js';
import type { DiscoveredBody, DiscoveredTool, ToolAnnotations } from '../../schemas/servers.js';
import { errorText } from '../causes.js';
import { formatRefusalSafely, isJsonObject, type ClientDecision, type FormatRefusal } from '../decision.js';
import { DECISION_META_KEY, type RefusalDecisionMeta } from '../guards/refusal.js';
import { RpcErrorCode, type JsonRpcRequest } from './json-rpc.js';
import type { ProxyLogger } from './stderr-logger.js';

/** The MCP methods, besides `tools/call`, the proxy decides for a declared server. */
export const GUARDED_METHODS: ReadonlySet<string> = new Set(['resources/read', 'prompts/get']);

/** The params members of each guarded method, so that another spelling of one is refused, not forwarded. */
export const GUARDED_METHOD_MEMBERS: Readonly<Record<string, readonly string[]>> = {
  'resources/read': ['uri'],
  'prompts/get': ['name', 'arguments'],
};

const HINTS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** Sends a report to the service (`PdpClient.reportDiscovered`). */
export type DiscoveryReporter = (project: string, server: string, body: DiscoveredBody) => Promise<unknown>;

/** Whether `id` may be given to `--server` (the pattern of a server id in `.ideai/mcp-servers.json`). */
export const isServerId = (id: string): boolean => SERVER_ID_REGEX.test(id);

export class ServerScope {
  /** The last list reported, so the same list is sent once (the service also limits the rate). */
  private lastReported: string | undefined;

  constructor(
    readonly id: string,
    private readonly project: string,
    private readonly logger: ProxyLogger,
    private readonly reporter: DiscoveryReporter | undefined,
  ) {}

  /** The name a tool of this server is decided as. */
  toolName(name: string): string {
    return `${this.id}/${name}`;
  }

  /** The name a guarded method is decided as, or undefined for a method the proxy forwards as it is. */
  methodName(method: string): string | undefined {
    return GUARDED_METHODS.has(method) ? `${this.id}/${method}` : undefined;
  }

  /** The arguments a guarded method is decided with: its params (a `uri`, a prompt's `name`), never its `_meta`. */
  methodArguments(request: JsonRpcRequest): Record<string, unknown> | undefined {
    if (!isJsonObject(request.params)) return undefined;
    const { _meta: _ignored, ...args } = request.params;
    return args;
  }

  /**
   * Filters a `tools/list` result by qualified names: the tools are renamed `<id>/<name>` for
   * `filter`, and those it keeps are sent back as the server named them (the very objects).
   */
  async filterQualified(
    result: Record<string, unknown>,
    filter: (qualified: Record<string, unknown>) => Promise<unknown>,
  ): Promise<unknown> {
    if (!Array.isArray(result.tools)) return filter(result);
    const byQualified = new Map<string, unknown>();
    const renamed = result.tools.map((tool: unknown) => {
      if (!isJsonObject(tool) || typeof tool.name !== 'string') return tool;
      const qualified = this.toolName(tool.name);
      byQualified.set(qualified, tool);
      return { ...tool, name: qualified };
    });
    const filtered = await filter({ ...result, tools: renamed });
    if (!isJsonObject(filtered) || !Array.isArray(filtered.tools)) return filtered;
    const kept = filtered.tools.flatMap((tool: unknown) => {
      const original = isJsonObject(tool) && typeof tool.name === 'string' ? byQualified.get(tool.name) : undefined;
      return original === undefined ? [] : [original];
    });
    return { ...filtered, tools: kept };
  }

  /** Reports a `tools/list` result (at most 500 tools, each cut to what the service keeps); never throws, never delays the answer. */
  report(result: Record<string, unknown>): void {
    if (this.reporter === undefined || !Array.isArray(result.tools)) return;
    const tools: DiscoveredTool[] = [];
    for (const tool of result.tools as unknown[]) {
      if (tools.length >= MAX_DISCOVERED_PER_SERVER) break;
      const reported = reportedTool(tool);
      if (reported !== undefined) tools.push(reported);
    }
    const body: DiscoveredBody = { tools };
    const text = JSON.stringify(body);
    if (text === this.lastReported) return;
    this.lastReported = text;
    this.reporter(this.project, this.id, body).catch((error: unknown) => {
      // Sent again with the next different list, or the same one after a restart of the proxy.
      this.lastReported = undefined;
      this.logger.warn({ server: this.id, cause: errorText(error) }, 'could not report the server’s tools to the policy service');
    });
  }
}

/** A tool of a `tools/list` result as the service takes it, or undefined for one it would refuse (a name it cannot hold). */
function reportedTool(tool: unknown): DiscoveredTool | undefined {
  if (!isJsonObject(tool) || typeof tool.name !== 'string' || !SERVER_TOOL_REGEX.test(tool.name)) return undefined;
  const reported: DiscoveredTool = { name: tool.name };
  if (typeof tool.title === 'string') reported.title = tool.title.slice(0, MAX_DISCOVERED_TITLE);
  if (typeof tool.description === 'string') reported.description = tool.description.slice(0, MAX_DISCOVERED_DESCRIPTION);
  if (isJsonObject(tool.annotations)) {
    const annotations: ToolAnnotations = {};
    const given = tool.annotations;
    if (typeof given.title === 'string') annotations.title = given.title.slice(0, MAX_DISCOVERED_TITLE);
    for (const hint of HINTS) if (typeof given[hint] === 'boolean') annotations[hint] = given[hint];
    reported.annotations = annotations;
  }
  // Only the names a condition can name, each as {}: the service keeps names, and a schema's text may be long (no properties: unknown).
  const properties = isJsonObject(tool.inputSchema) ? tool.inputSchema.properties : undefined;
  if (isJsonObject(properties)) {
    const names = Object.keys(properties).filter((name) => ARGUMENT_NAME_REGEX.test(name));
    // More than the service takes: the arguments are left unknown rather than cut.
    if (names.length <= MAX_DISCOVERED_ARGUMENTS)
      reported.inputSchema = { type: 'object', properties: Object.fromEntries(names.map((name) => [name, {}])) };
  }
  return reported;
}

/**
 * The JSON-RPC error a refused `resources/read` or `prompts/get` is answered with (their results
 * have no error form): the refusal's text, and the decision under `data["io.ideai/decision"]`.
 */
export function methodRefusal(
  decision: ClientDecision,
  formatRefusal?: FormatRefusal,
): { code: number; message: string; data: Record<string, unknown> } {
  const meta: RefusalDecisionMeta = { reason: decision.reason, decisionId: decision.decisionId };
  if (decision.approval !== undefined) meta.approvalId = decision.approval.id;
  if (decision.argument !== undefined) meta.argument = decision.argument;
  return { code: RpcErrorCode.InvalidRequest, message: formatRefusalSafely(decision, formatRefusal), data: { [DECISION_META_KEY]: meta } };
}
