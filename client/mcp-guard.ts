/**
 * Enforcement point for `@modelcontextprotocol/sdk` servers (SPEC §8): every `tools/call` is
 * decided by the policy service before the tool's handler runs.
 *
 * Why this mechanism: the SDK has no middleware hook. Every request handler, however it was
 * registered (`Server.setRequestHandler`, `McpServer` registering its `tools/call` handler lazily
 * when the first tool is added, or a handler replaced later), ends up in the one map
 * `Protocol._requestHandlers` that `Protocol._onrequest` reads to dispatch. The guard wraps the
 * `tools/call` (and `tools/list`) entry already in that map and replaces the map's own `set` so any
 * later entry for those methods is wrapped when it is stored. There is no path from a request to a
 * tool handler that skips the wrapper, and the wrapper runs before the SDK even parses the request.
 * (The dispatcher's other source, `fallbackRequestHandler`, is wrapped the same way.)
 * If a future SDK stops keeping its handlers in that map, installing the guard throws instead of
 * leaving the server silently unguarded.
 */
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { decideQueryFor, isJsonObject, localDenial, refusalText, type ClientDecision } from './decision.js';
import { resolveRequester, unresolvedRequesterDenial, type GuardClient, type GuardLogger } from './guard-common.js';

/** The `extra` argument the SDK passes to request handlers (session id, auth info, ...). */
export type McpRequestExtra = Record<string, unknown> & { sessionId?: string | undefined };

export interface McpGuardOptions {
  client: GuardClient;
  project: string;
  /**
   * Who is calling: a fixed agent id, or a function of the request handler's `extra` (the
   * session's agent id). Never taken from the tool arguments.
   */
  requester: string | ((extra: McpRequestExtra) => string | Promise<string>);
  /**
   * When true, `tools/list` only lists the tools the requester may call, from
   * `GET /projects/:p/requesters/:r/effective`. If that lookup fails the list is EMPTY (fail
   * closed: a tool the service did not confirm is never advertised). Calls are still decided one
   * by one either way.
   */
  filterToolsList?: boolean;
  logger?: GuardLogger;
  /** Called with every decision the guard acts on (audit, tests). */
  onDecision?: (decision: ClientDecision) => void;
}

/** The text result of a refused `tools/call`. */
export interface McpRefusal {
  [key: string]: unknown;
  content: [{ type: 'text'; text: string }];
  isError: true;
}

/** What {@link guardMcpServer} returns: the guard's live options. */
export interface McpGuard {
  readonly options: Readonly<McpGuardOptions>;
}

type Handler = (request: unknown, extra: unknown) => Promise<unknown>;
interface GuardState {
  options: McpGuardOptions;
}

const GUARD_STATE = Symbol.for('idea-mcp-tool-permissions.mcp-guard');
const GUARDED_HANDLER = Symbol.for('idea-mcp-tool-permissions.guarded-handler');
const GUARDED_METHODS = new Set(['tools/call', 'tools/list']);

/** The MCP tool result of a refused call: the same text as the OpenAI guard's tool message. */
export function mcpRefusal(decision: ClientDecision): McpRefusal {
  return { content: [{ type: 'text', text: refusalText(decision) }], isError: true };
}

/**
 * Guards an MCP server: `McpServer` (`@modelcontextprotocol/sdk/server/mcp.js`) or the low-level
 * `Server` (`server/index.js`). Install it before or after registering tools and before or after
 * `connect()`: tools registered later are guarded too. Calling it again on the same server does
 * not add a second check: it replaces the options of the guard already installed.
 *
 * @example
 * ```ts
 * const server = new McpServer({ name: 'idea', version: '1.0.0' });
 * guardMcpServer(server, { client: pdp, project: 'demo', requester: (extra) => agentOfSession(extra.sessionId) });
 * server.registerTool('idea_memory_write', { inputSchema: { text: z.string() } }, writeMemory);
 * ```
 */
export function guardMcpServer(server: object, options: McpGuardOptions): McpGuard {
  const target = lowLevelServer(server) as { [GUARD_STATE]?: GuardState };
  const existing = target[GUARD_STATE];
  if (existing !== undefined) {
    existing.options = options;
    return existing;
  }
  const handlers = handlerMap(target);
  const state: GuardState = { options };
  const storeRaw = Map.prototype.set.bind(handlers) as (method: string, handler: Handler) => Map<string, Handler>;
  for (const method of GUARDED_METHODS) {
    const registered = handlers.get(method);
    if (registered !== undefined) storeRaw(method, wrapHandler(method, registered, state));
  }
  Object.defineProperty(handlers, 'set', {
    value: (method: string, handler: Handler) => {
      storeRaw(method, GUARDED_METHODS.has(method) ? wrapHandler(method, handler, state) : handler);
      return handlers;
    },
    writable: false,
    configurable: false,
    enumerable: false,
  });
  guardFallbackHandler(target, state);
  Object.defineProperty(target, GUARD_STATE, { value: state, writable: false, configurable: false, enumerable: false });
  return state;
}

/**
 * The dispatcher falls back to `fallbackRequestHandler` for a method without an entry in the map,
 * so a host could serve `tools/call` from there. Whatever is assigned to it (before or after the
 * guard), what the dispatcher reads is a wrapper that guards those two methods.
 */
function guardFallbackHandler(server: object, state: GuardState): void {
  let raw = (server as { fallbackRequestHandler?: Handler }).fallbackRequestHandler;
  let wrapped: Handler | undefined;
  const wrap = (handler: Handler): Handler => {
    const calls = wrapHandler('tools/call', handler, state);
    const lists = wrapHandler('tools/list', handler, state);
    return async (request, extra) => {
      const method = isJsonObject(request) ? request['method'] : undefined;
      if (method === 'tools/call') return calls(request, extra);
      if (method === 'tools/list') return lists(request, extra);
      return handler(request, extra);
    };
  };
  if (raw !== undefined) wrapped = wrap(raw);
  Object.defineProperty(server, 'fallbackRequestHandler', {
    get: () => wrapped,
    set: (handler: Handler | undefined) => {
      raw = handler;
      wrapped = raw === undefined ? undefined : wrap(raw);
    },
    configurable: false,
    enumerable: true,
  });
}

function lowLevelServer(server: object): object {
  const inner = (server as { server?: unknown }).server;
  if (typeof inner === 'object' && inner !== null && typeof (inner as { setRequestHandler?: unknown }).setRequestHandler === 'function') {
    return inner; // McpServer: its tools live on the low-level Server it owns
  }
  if (typeof (server as { setRequestHandler?: unknown }).setRequestHandler === 'function') return server;
  throw new TypeError('guardMcpServer: expected an McpServer or a Server from @modelcontextprotocol/sdk');
}

function handlerMap(server: object): Map<string, Handler> {
  const handlers = (server as { _requestHandlers?: unknown })._requestHandlers;
  if (!(handlers instanceof Map)) {
    throw new TypeError(
      'guardMcpServer: this @modelcontextprotocol/sdk version does not keep its request handlers in `_requestHandlers`; refusing to run unguarded',
    );
  }
  return handlers as Map<string, Handler>;
}

function wrapHandler(method: string, handler: Handler, state: GuardState): Handler {
  if ((handler as { [GUARDED_HANDLER]?: true })[GUARDED_HANDLER]) return handler;
  const guarded: Handler =
    method === 'tools/call'
      ? async (request, extra) => {
          const decision = await decideToolCall(state.options, request, extra);
          state.options.onDecision?.(decision);
          if (!decision.allow) return mcpRefusal(decision);
          return handler(request, extra);
        }
      : async (request, extra) => filterToolsList(state.options, await handler(request, extra), extra);
  Object.defineProperty(guarded, GUARDED_HANDLER, { value: true });
  return guarded;
}

async function decideToolCall(options: McpGuardOptions, request: unknown, extra: unknown): Promise<ClientDecision> {
  const params = isJsonObject(request) ? request['params'] : undefined;
  const name = isJsonObject(params) ? params['name'] : undefined;
  if (typeof name !== 'string') {
    // Nothing to decide about and nothing the SDK would run: a protocol error, no handler call.
    throw new McpError(ErrorCode.InvalidParams, 'Invalid tools/call request: params.name must be a string');
  }
  const args = isJsonObject(params) ? params['arguments'] : undefined;
  const who = await resolveRequester(options.requester, (extra ?? {}) as McpRequestExtra);
  if (!who.ok) return unresolvedRequesterDenial(options.project, name, who.cause);
  if (args !== undefined && !isJsonObject(args)) {
    return localDenial(
      { project: options.project, requester: who.requester, tool: name },
      'invalid_call',
      'the arguments are not a JSON object',
    );
  }
  return options.client.decide(decideQueryFor(options.project, who.requester, name, args));
}

async function filterToolsList(options: McpGuardOptions, result: unknown, extra: unknown): Promise<unknown> {
  if (options.filterToolsList !== true) return result;
  if (!isJsonObject(result) || !Array.isArray(result['tools'])) return { tools: [] };
  const tools = result['tools'] as unknown[];
  const who = await resolveRequester(options.requester, (extra ?? {}) as McpRequestExtra);
  if (!who.ok) {
    options.logger?.warn({ project: options.project, cause: who.cause }, 'tools/list: requester unresolved, listing no tools');
    return { ...result, tools: [] };
  }
  try {
    const effective = await options.client.effective(options.project, who.requester, { timeoutMs: options.client.timeoutMs });
    if (effective.project !== options.project) throw new Error(`effective policy of project ${effective.project}`);
    const allowed = new Set(effective.allowedTools);
    return { ...result, tools: tools.filter((tool) => isJsonObject(tool) && allowed.has(tool['name'] as string)) };
  } catch (error) {
    options.logger?.warn(
      { project: options.project, requester: who.requester, cause: error instanceof Error ? error.message : String(error) },
      'tools/list: effective policy unavailable, listing no tools',
    );
    return { ...result, tools: [] };
  }
}
