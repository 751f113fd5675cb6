/**
 * Enforcement point for MCP servers of either TypeScript SDK line (`@modelcontextprotocol/server` v2,
 * `@modelcontextprotocol/sdk` v1) (docs/api.md#the-client-sdk): every `tools/call` is
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
import type { DecideQuery } from '../../schemas/api.js';
import { decideQueryFor, isJsonObject, type ClientDecision, type FormatRefusal } from '../decision.js';
import { guardLogger, resolveHostValue, unresolvedDenial, type GuardClient, type GuardLogger, type HostValue } from '../guards/common.js';
import { ToolListFollower } from '../guards/tool-list-follower.js';
import { approvalWaitMsOf } from '../guards/approval-wait.js';
import { checkElicitOptions, type ElicitingServer, type McpApprovalOptions } from '../guards/approval-elicitation.js';
import { mcpRefusal } from '../guards/refusal.js';
import { decideToolCall as decideCall, toolCallParams, warnOnceAboutRequester } from '../guards/tool-call.js';
import { filterToolList } from '../guards/tool-list.js';
import { decideModernCall, type ModernOutcome } from '../guards/input-required.js';
import { resultFor } from '../proxy/era.js';
import { guardSeal, modernCallOf, withoutGuardRetry, type ModernCall } from './modern.js';
import { declareToolListChanged, sendToolListChangedIfAllowed, servesTool, watchInitialization, type SessionState } from './protocol.js';

/** JSON-RPC's invalid-params code, which both SDK lines answer for a malformed call or an unknown tool. */
const INVALID_PARAMS = -32602;

/**
 * A JSON-RPC error thrown from a request handler: both SDK lines answer a thrown error with its
 * `code` when it is an integer, so the guard needs neither SDK's own error class. The message has
 * the v1 SDK's `McpError` wording.
 */
class GuardProtocolError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(`MCP error ${String(code)}: ${message}`);
    this.name = 'McpError';
  }
}

/** The `extra` argument the SDK passes to request handlers (session id, auth info, abort signal, ...). */
export type McpRequestExtra = Record<string, unknown> & { sessionId?: string | undefined; signal?: AbortSignal | undefined };

/** Options of {@link guardMcpServer}. */
export interface McpGuardOptions {
  /** A {@link PdpClient} (or anything with its `decide`, `decideBatch`, `effective` and `timeoutMs`). */
  client: GuardClient;
  /**
   * The project the tools act on: a project id, or a function of the request handler's `extra`
   * for a server that serves several projects.
   */
  project: HostValue<[extra: McpRequestExtra]>;
  /**
   * Who is calling: a fixed agent id (typically read from an environment variable at start), or a
   * function of the request handler's `extra` (the session's agent id). Never taken from the tool
   * arguments. A requester that resolves to the anonymous kind (`""`, `"mcp"`) gets the read-only
   * set and is logged once as a warning: it is almost always a missing agent id.
   */
  requester: HostValue<[extra: McpRequestExtra]>;
  /**
   * When true, `tools/list` only lists the tools the requester may call, from
   * `GET /projects/:p/requesters/:r/effective`: its allowed tools and its tools on ask (a tool
   * the model never sees could never be approved). If that lookup fails the list is EMPTY (fail
   * closed: a tool the service did not confirm is never advertised). Calls are still decided one
   * by one either way. The guard then also follows the service's events (`GET /events`) and sends
   * `notifications/tools/list_changed` whenever what it would list changes: a policy change, an
   * answered approval, the service becoming unreachable and reachable again. It declares the
   * server's `tools.listChanged` capability when installed before `connect()`; on a server
   * connected without it, and before the session is initialized, it sends no notification.
   */
  filterToolsList?: boolean | undefined;
  /** Words the text of a refused call (default: the decision's message). Give the OpenAI guard the same function to keep parity. */
  formatRefusal?: FormatRefusal | undefined;
  /**
   * Calls that need the user's approval (`approval_required`, docs/api.md#approvals-and-temporary-grants): with `waitMs` > 0
   * the `tools/call` waits up to that long for the answer, then runs or is refused. Default 0:
   * refused at once with a text that says approval was requested and to retry later. The MCP
   * client's own request timeout (60 s in the SDK) must be longer than `waitMs`.
   * With `elicit: { approverToken }`, a client that declared the `elicitation` capability is first
   * asked in its own window (Autoriser une fois / Autoriser pendant 1 h / Refuser); the answer is
   * posted with the approver token and the call decided again. A declined or cancelled form, or
   * any failure, falls back to waiting for the panel.
   */
  approval?: McpApprovalOptions | undefined;
  /** Where the guard's warnings go (anonymous requester, service unreachable). Default: `process.emitWarning`, on stderr. */
  logger?: GuardLogger | undefined;
  /** Called with every decision the guard acts on (audit, tests). */
  onDecision?: ((decision: ClientDecision) => void) | undefined;
}

/** What {@link guardMcpServer} returns: the guard's live options, and a way to tell the client its tool list changed. */
export interface McpGuard {
  readonly options: Readonly<McpGuardOptions>;
  /**
   * Sends `notifications/tools/list_changed` to the connected client, so a host that caches
   * `tools/list` lists again (after a grant or a revocation). Does nothing when no client is
   * connected, before its initialization completes, or when the server did not declare
   * `tools.listChanged`; never throws.
   */
  sendToolListChanged(): Promise<void>;
  /** Stops following the service's events (closing the `PdpClient` stops it too). Calls stay guarded. */
  close(): void;
}

type Handler = (request: unknown, extra: unknown) => Promise<unknown>;
interface GuardState extends McpGuard, SessionState {
  options: McpGuardOptions;
  /** Guarded through an `McpServer`, which answers an unknown tool with an `isError` result, not a protocol error. */
  viaMcpServer: boolean;
  /** The server's own `tools/list` handler, unfiltered. */
  rawListTools(): Handler | undefined;
  /** Requester kinds already warned about (anonymous, invalid): each is logged once. */
  warned: Set<string>;
  follower: ToolListFollower;
  /** The low-level `Server`, which asks the user through elicitation. */
  server: ElicitingServer;
}

const GUARD_STATE = Symbol.for('idea-mcp-tool-permissions.mcp-guard');
const GUARDED_HANDLER = Symbol.for('idea-mcp-tool-permissions.guarded-handler');
const RAW_HANDLER = Symbol.for('idea-mcp-tool-permissions.raw-handler');
const GUARDED_METHODS = new Set(['tools/call', 'tools/list']);

export { mcpRefusal, DECISION_META_KEY, type McpRefusal, type RefusalDecisionMeta } from '../guards/refusal.js';

/**
 * Guards an MCP server: `McpServer` (`@modelcontextprotocol/sdk/server/mcp.js`) or the low-level
 * `Server` (`server/index.js`). Install it before or after registering tools and before or after
 * `connect()`: tools registered later are guarded too. Calling it again on the same server does
 * not add a second check: it replaces the options of the guard already installed.
 *
 * @example
 * ```ts
 * import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
 * import { PdpClient } from 'idea-mcp-permissions-client';
 * import { guardMcpServer } from 'idea-mcp-permissions-client/mcp';
 *
 * // One stdio server per agent session: the host starts it with the agent's id in its environment.
 * const pdp = new PdpClient({ baseUrl: process.env.PDP_URL ?? 'http://127.0.0.1:8787', token: process.env.PDP_DECIDE_TOKEN });
 * const server = new McpServer({ name: 'idea', version: '1.0.0' });
 * guardMcpServer(server, { client: pdp, project: 'demo', requester: process.env.IDEA_AGENT_ID ?? '' });
 * server.registerTool('idea_memory_write', { inputSchema: { text: z.string() } }, writeMemory);
 * ```
 */
export function guardMcpServer(server: object, options: McpGuardOptions): McpGuard {
  const target = lowLevelServer(server) as { [GUARD_STATE]?: GuardState; fallbackRequestHandler?: Handler };
  const existing = target[GUARD_STATE];
  options = { ...options, logger: guardLogger(options.logger) };
  checkElicitOptions(options.approval);
  approvalWaitMsOf('guardMcpServer', options.approval);
  if (options.filterToolsList === true) declareToolListChanged(target);
  if (existing !== undefined) {
    existing.options = options;
    existing.viaMcpServer ||= target !== server;
    existing.follower.restart();
    return existing;
  }
  const handlers = handlerMap(target);
  const state = {
    options,
    warned: new Set<string>(),
    initializedOn: undefined,
    viaMcpServer: target !== server,
    rawListTools: () => rawHandlerOf(handlers.get('tools/list') ?? target.fallbackRequestHandler),
    sendToolListChanged: async () => {
      await sendToolListChangedIfAllowed(target, state);
    },
    close: () => {
      state.follower.stop();
    },
  } as GuardState;
  watchInitialization(target, state);
  state.follower = new ToolListFollower(state);
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
  state.server = target as unknown as ElicitingServer;
  state.follower.restart();
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
      const method = isJsonObject(request) ? request.method : undefined;
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
  throw new TypeError(
    'guardMcpServer: expected an McpServer or a Server from @modelcontextprotocol/server (v2) or @modelcontextprotocol/sdk (v1); install one of them',
  );
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
          // The era of this very request: a 2026-07-28 one may be answered `input_required`.
          const modern = modernCallOf(request, extra);
          if (modern !== undefined) return guardModernCall(state, handler, request as Record<string, unknown>, extra, modern);
          const decision = await decideToolCall(state, request, extra);
          state.options.onDecision?.(decision);
          if (decision.allow) return handler(request, extra);
          await throwIfNotServed(state, decision.tool.name, extra);
          return mcpRefusal(decision, state.options.formatRefusal);
        }
      : async (request, extra) => filterToolsList(state, await handler(request, extra), extra);
  Object.defineProperty(guarded, GUARDED_HANDLER, { value: true });
  Object.defineProperty(guarded, RAW_HANDLER, { value: handler });
  return guarded;
}

function rawHandlerOf(handler: Handler | undefined): Handler | undefined {
  return (handler as { [RAW_HANDLER]?: Handler } | undefined)?.[RAW_HANDLER] ?? handler;
}

/**
 * A low-level `Server` answers a name it does not serve with its own JSON-RPC error (`-32602`),
 * and a refusal must not turn that into a tool result. The handler is never run to find out (a
 * server may serve tools it does not list): a refused name absent from the server's own
 * `tools/list` gets the same protocol error.
 */
async function throwIfNotServed(state: GuardState, name: string, extra: unknown): Promise<void> {
  if (state.viaMcpServer) return;
  if ((await servesTool(state.rawListTools(), name, extra)) === false) {
    throw new GuardProtocolError(INVALID_PARAMS, `Unknown tool: ${name}`);
  }
}

/** What a `tools/call` is about, or the denial when its project or requester cannot be resolved; throws `-32602` for a malformed call. */
async function queryOf(
  state: GuardState,
  request: unknown,
  context: McpRequestExtra,
): Promise<{ ok: true; query: DecideQuery } | { ok: false; denial: ClientDecision }> {
  const { options } = state;
  const call = toolCallParams(isJsonObject(request) ? request.params : undefined);
  // Nothing to decide about and nothing the SDK would run: the protocol's own error, no handler call.
  if (!call.ok) throw new GuardProtocolError(INVALID_PARAMS, call.message);
  const { name, args } = call;
  const [project, who] = await Promise.all([resolveHostValue(options.project, context), resolveHostValue(options.requester, context)]);
  if (!project.ok || !who.ok) return { ok: false, denial: unresolvedDenial(project, who, name) };
  warnOnceAbout(state, project.value, who.value);
  return { ok: true, query: decideQueryFor(project.value, who.value, name, args) };
}

/** An `initialize`-era call; the same steps as {@link queryOf}, inline: this is every allowed call's path. */
async function decideToolCall(state: GuardState, request: unknown, extra: unknown): Promise<ClientDecision> {
  const { options } = state;
  const call = toolCallParams(isJsonObject(request) ? request.params : undefined);
  if (!call.ok) throw new GuardProtocolError(INVALID_PARAMS, call.message);
  const { name, args } = call;
  const context = (extra ?? {}) as McpRequestExtra;
  const [project, who] = await Promise.all([resolveHostValue(options.project, context), resolveHostValue(options.requester, context)]);
  if (!project.ok || !who.ok) return unresolvedDenial(project, who, name);
  warnOnceAbout(state, project.value, who.value);
  return decideCall(
    {
      client: options.client,
      approval: options.approval,
      logger: options.logger,
      elicitor: state.server,
      signal: signalOf(context),
      requestId: requestIdOf(context),
      owner: 'guardMcpServer',
    },
    decideQueryFor(project.value, who.value, name, args),
  );
}

/**
 * A 2026-07-28 `tools/call`: decided as the proxy decides it (an approval asked through
 * `input_required`, its retry's state opened first); an allowed retry runs without the guard's
 * state and answer; a refusal carries `resultType: "complete"`.
 */
async function guardModernCall(
  state: GuardState,
  handler: Handler,
  request: Record<string, unknown>,
  extra: unknown,
  call: ModernCall,
): Promise<unknown> {
  const { options } = state;
  const context = (extra ?? {}) as McpRequestExtra;
  const prepared = await queryOf(state, request, context);
  const outcome: ModernOutcome = prepared.ok
    ? await decideModernCall(
        {
          client: options.client,
          approval: options.approval,
          logger: options.logger,
          seal: guardSeal(),
          signal: signalOf(context),
          owner: 'guardMcpServer',
        },
        prepared.query,
        call.params,
        call.modern.capabilities,
      )
    : { kind: 'decided', decision: prepared.denial, stripRetry: false };
  if (outcome.kind === 'input_required') return outcome.result;
  const { decision } = outcome;
  options.onDecision?.(decision);
  if (decision.allow) return outcome.stripRetry ? handler(...withoutGuardRetry(request, extra)) : handler(request, extra);
  await throwIfNotServed(state, decision.tool.name, extra);
  return resultFor(mcpRefusal(decision, options.formatRefusal), call.modern);
}

async function filterToolsList(state: GuardState, result: unknown, extra: unknown): Promise<unknown> {
  const { options } = state;
  if (options.filterToolsList !== true) return result;
  const context = (extra ?? {}) as McpRequestExtra;
  const [project, requester] = await Promise.all([
    resolveHostValue(options.project, context),
    resolveHostValue(options.requester, context),
  ]);
  if (project.ok && requester.ok) warnOnceAbout(state, project.value, requester.value);
  return filterToolList(
    { client: options.client, logger: options.logger, follower: state.follower, project, requester, signal: signalOf(context) },
    result,
  );
}

function warnOnceAbout(state: GuardState, project: string, requester: string): void {
  warnOnceAboutRequester(state.warned, state.options.logger, project, requester);
}

/** The host gave up on the request: `extra.signal` in SDK v1, `ctx.mcpReq.signal` in v2. */
function signalOf(extra: McpRequestExtra): AbortSignal | undefined {
  if (extra.signal instanceof AbortSignal) return extra.signal;
  const mcpReq = extra.mcpReq;
  const signal = isJsonObject(mcpReq) ? mcpReq.signal : undefined;
  return signal instanceof AbortSignal ? signal : undefined;
}

/** The request's id, for a form sent as part of it: `extra.requestId` in SDK v1, `ctx.mcpReq.id` in v2. */
function requestIdOf(extra: McpRequestExtra): string | number | undefined {
  const mcpReq = extra.mcpReq;
  const id = extra.requestId ?? (isJsonObject(mcpReq) ? mcpReq.id : undefined);
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}
