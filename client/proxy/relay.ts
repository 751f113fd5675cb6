/**
 * The relay of `idea-mcp-proxy` (docs/client.md): every JSON-RPC message passes unchanged between
 * the host and the real server, except a `tools/call` (decided first; a refusal is answered here
 * and never reaches the server), a `tools/list` answer (filtered), the `initialize` answer (declares
 * `tools.listChanged` when the proxy follows the agent's list) and the proxy's own
 * `notifications/tools/list_changed` and elicitation requests.
 */
import type { ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { DecideQuery } from '../../schemas/api.js';
import type { McpApprovalOptions } from '../guards/approval-elicitation.js';
import { decideQueryFor, isJsonObject, localDenial, type ClientDecision, type FormatRefusal } from '../decision.js';
import type { GuardClient } from '../guards/common.js';
import { mcpRefusal } from '../guards/refusal.js';
import { decideToolCall, toolCallParams, warnOnceAboutRequester } from '../guards/tool-call.js';
import { filterToolList } from '../guards/tool-list.js';
import { ToolListFollower } from '../guards/tool-list-follower.js';
import { decideModernCall, withoutRetry, type ModernOutcome } from '../guards/input-required.js';
import { RequestStateSeal } from '../guards/request-state.js';
import { modernRequest, resultFor, type ModernRequest } from './era.js';
import { DECIDED_METHODS, decidedMethodSpelling, decidedParamsProblem, envelopeProblem } from './host-checks.js';
import { HostElicitor, isProxyRequestId } from './host-elicitor.js';
import { GUARDED_METHOD_MEMBERS, GUARDED_METHODS, methodRefusal, type ServerScope } from './server-scope.js';
import { ToolListSubscriptions } from './subscriptions.js';
import { JsonRpcChannel, type Received, type Unreadable } from './json-rpc-channel.js';
import { RpcErrorCode, type JsonObject, type JsonRpcRequest, type JsonRpcResult, type RequestId } from './json-rpc.js';
import type { ProxyLogger } from './stderr-logger.js';

export interface RelayOptions {
  client: GuardClient;
  project: string;
  requester: string;
  /** Filter `tools/list` and follow the agent's list (default true; `--no-filter` turns it off). */
  filterToolsList: boolean;
  approval: McpApprovalOptions | undefined;
  formatRefusal?: FormatRefusal | undefined;
  logger: ProxyLogger;
  onDecision?: ((decision: ClientDecision) => void) | undefined;
  /** `--server <id>`: the server is a declared one, its tools named `<id>/<tool>` (server-scope.ts). */
  server?: ServerScope | undefined;
}

/** How long the real server has after its stdin closes before SIGTERM, then before SIGKILL. */
export const SHUTDOWN_GRACE_MS = 2000;

/** A request forwarded to the server, answered by it: what its answer needs. */
interface Forwarded {
  kind: 'initialize' | 'tools/list' | 'listen' | 'other';
  rawId: string;
}

/** The requests whose answer the proxy reads: `server/discover` declares capabilities as `initialize` does on 2026-07-28. */
const FORWARDED_KINDS = new Map<string, Forwarded['kind']>([
  ['initialize', 'initialize'],
  ['server/discover', 'initialize'],
  ['tools/list', 'tools/list'],
  ['subscriptions/listen', 'listen'],
]);

/** The deepest message whose `arguments` are sent to the service without measuring their own depth. */
const PLAIN_DEPTH = 64;

/**
 * The deepest `arguments` a `tools/call` may carry: Python's json module, the parser of most MCP
 * servers not written for Node, stops near 1,000 levels, and V8's JSON.stringify near 5,000 before Node 26.
 */
const MAX_ARGUMENTS_DEPTH = 1_000;

export class McpRelay {
  private readonly host: JsonRpcChannel;
  private readonly server: JsonRpcChannel;
  private readonly elicitor: HostElicitor;
  private readonly follower: ToolListFollower;
  /** Requests of the host the server has not answered yet. */
  private readonly forwarded = new Map<RequestId, Forwarded>();
  /** `tools/call` requests being decided, and how to give up on each. */
  private readonly deciding = new Map<RequestId, { abort: AbortController; rawId: string }>();
  private readonly warned = new Set<string>();
  /** Seals the state of approvals asked through `input_required` (2026-07-28); its key lives and dies with the process. */
  private readonly seal = new RequestStateSeal();
  private readonly subscriptions = new ToolListSubscriptions();
  private hostInitialized = false;
  private declaredListChanged = false;
  private serverGone = false;
  private readonly shutdownTimers: NodeJS.Timeout[] = [];
  /** `tools/list` answers the server gave, being filtered: sent before the proxy exits. */
  private readonly filtering = new Set<Promise<void>>();
  /** Resolves with the exit code the proxy should exit with: the server's. */
  readonly done: Promise<number>;

  constructor(
    private readonly options: RelayOptions,
    hostIo: { input: Readable; output: Writable },
    private readonly child: ChildProcess,
  ) {
    const { logger } = options;
    if (child.stdin === null || child.stdout === null) throw new Error('the server must be spawned with piped stdin and stdout');
    this.host = new JsonRpcChannel(
      'host',
      hostIo.input,
      hostIo.output,
      logger,
      {
        onMessage: (received) => {
          this.fromHost(received);
        },
        onUnreadable: (unreadable) => {
          this.hostUnreadable(unreadable);
        },
        shape: true,
      },
      () => {
        this.hostClosed();
      },
    );
    this.server = new JsonRpcChannel(
      'server',
      child.stdout,
      child.stdin,
      logger,
      {
        onMessage: (received) => {
          this.fromServer(received);
        },
      },
      () => undefined,
    );
    this.elicitor = new HostElicitor((message) => {
      this.host.send(message);
    });
    this.follower = new ToolListFollower({
      options: { client: options.client, project: options.project, filterToolsList: options.filterToolsList, logger },
      sendToolListChanged: () => {
        this.sendToolListChanged();
        return Promise.resolve();
      },
    });
    this.follower.restart();
    warnOnceAboutRequester(this.warned, logger, options.project, options.requester);
    this.done = new Promise<number>((resolve) => {
      child.once('exit', (code, signal) => {
        const exitCode = this.serverExited(code, signal);
        void Promise.all(this.filtering).then(() => {
          resolve(exitCode);
        });
      });
    });
  }

  private fromHost(received: Received): void {
    const { message } = received;
    const problem = envelopeProblem(received);
    if (problem !== undefined) {
      this.refuseHostMessage(received, RpcErrorCode.InvalidRequest, `Invalid request: ${problem}`);
      return;
    }
    if ('method' in message && 'id' in message) {
      this.hostRequest(message, received);
      return;
    }
    if ('method' in message) {
      if (message.method === 'tools/call' || decidedMethodSpelling(message.method) !== undefined) {
        // No id, so nothing to answer a refusal to; a server that runs it anyway would run it unguarded.
        this.options.logger.warn({ from: 'host' }, 'tools/call without an id dropped: it is not decided nor forwarded');
        return;
      }
      if (message.method === 'notifications/initialized') this.hostInitialized = true;
      if (message.method === 'notifications/cancelled') {
        if (this.cancelDecision(message.params?.requestId)) return;
        this.subscriptions.closed(message.params?.requestId);
      }
      this.server.sendRaw(received.raw);
      return;
    }
    // An answer: to one of the proxy's own questions, else to the server's.
    if (this.elicitor.takeAnswer(message)) return;
    this.server.sendRaw(received.raw);
  }

  /** A host message that may not pass: a request is answered with `code`, anything else is logged and dropped. */
  private refuseHostMessage({ message, rawId }: Received, code: number, text: string): void {
    if ('method' in message && 'id' in message) {
      this.answerError(rawId ?? JSON.stringify(message.id), code, text);
      return;
    }
    this.options.logger.warn({ from: 'host', cause: text }, 'message dropped: it is not forwarded');
  }

  /** A request that is not a valid JSON-RPC message (params that are no object, ...): the protocol's error, never forwarded. */
  private hostUnreadable({ id, why }: Unreadable): void {
    this.answerError(JSON.stringify(id), RpcErrorCode.InvalidRequest, `Invalid request: ${why}`);
  }

  private hostRequest(request: JsonRpcRequest, received: Received): void {
    const rawId = received.rawId ?? JSON.stringify(request.id);
    if (this.serverGone) {
      this.answerError(rawId, RpcErrorCode.ConnectionClosed, 'the MCP server has exited');
      return;
    }
    if (this.forwarded.has(request.id) || this.deciding.has(request.id)) {
      // Two requests under one id: the server's answers could no longer be told apart (a tools/list taken for the other, unfiltered).
      this.answerError(rawId, RpcErrorCode.InvalidRequest, `request id ${rawId} is already used by a request not answered yet`);
      return;
    }
    const spelling = decidedMethodSpelling(request.method, this.decidedMethods);
    if (spelling !== undefined) {
      // A lenient server could run it as tools/call, undecided: the method is unknown here, as it is to the protocol.
      this.answerError(rawId, RpcErrorCode.MethodNotFound, `Method not found: ${JSON.stringify(request.method.slice(0, 40))}`);
      return;
    }
    if (request.method === 'tools/call') {
      void this.guardCall(request, received, rawId).catch((error: unknown) => {
        this.deciding.delete(request.id);
        this.options.logger.error({ cause: String(error) }, 'tools/call could not be decided: refused');
        this.answerError(rawId, RpcErrorCode.InternalError, 'the tool call could not be decided');
      });
      return;
    }
    const guardedAs = this.options.server?.methodName(request.method);
    if (guardedAs !== undefined) {
      void this.guardCall(request, received, rawId, guardedAs).catch((error: unknown) => {
        this.deciding.delete(request.id);
        this.options.logger.error({ cause: String(error) }, `${request.method} could not be decided: refused`);
        this.answerError(rawId, RpcErrorCode.InternalError, 'the request could not be decided');
      });
      return;
    }
    if (request.method === 'initialize' && isJsonObject(request.params) && isJsonObject(request.params.capabilities)) {
      this.elicitor.hostCapabilities = request.params.capabilities;
    }
    if (request.method === 'subscriptions/listen' && this.options.filterToolsList)
      this.subscriptions.opened(request.id, rawId, request.params);
    this.forward(request.id, received, { kind: FORWARDED_KINDS.get(request.method) ?? 'other', rawId });
  }

  private forward(id: RequestId, received: Received, forwarded: Forwarded): void {
    this.forwarded.set(id, forwarded);
    this.server.sendRaw(received.raw);
  }

  /** The methods decided before forwarding: `tools/call`, and a declared server's guarded methods. */
  private get decidedMethods(): readonly string[] {
    return this.options.server === undefined ? DECIDED_METHODS : [...DECIDED_METHODS, ...GUARDED_METHODS];
  }

  /** Decides a `tools/call`, or (`method`: its qualified name) a guarded method of a declared server, before forwarding it. */
  private async guardCall(request: JsonRpcRequest, received: Received, rawId: string, method?: string): Promise<void> {
    const { options } = this;
    const scope = options.server;
    let query: DecideQuery;
    if (method !== undefined && scope !== undefined) {
      const ambiguous = decidedParamsProblem(request, received, GUARDED_METHOD_MEMBERS[request.method]);
      if (ambiguous !== undefined) {
        this.answerError(rawId, RpcErrorCode.InvalidParams, `Invalid ${request.method} request: ${ambiguous}`);
        return;
      }
      query = decideQueryFor(options.project, options.requester, method, scope.methodArguments(request));
    } else {
      const call = toolCallParams(request.params);
      const ambiguous = decidedParamsProblem(request, received);
      if (!call.ok || ambiguous !== undefined) {
        // Nothing to decide about and nothing a server would run: the protocol's own error, as guardMcpServer answers.
        this.answerError(rawId, RpcErrorCode.InvalidParams, call.ok ? `Invalid tools/call request: ${ambiguous ?? ''}` : call.message);
        return;
      }
      query = decideQueryFor(options.project, options.requester, scope === undefined ? call.name : scope.toolName(call.name), call.args);
    }
    const abort = new AbortController();
    this.deciding.set(request.id, { abort, rawId });
    // A guarded method is not a tool call: its approvals go through the host's form, in every era.
    const modern = method === undefined ? modernRequest(request.params) : undefined;
    const outcome = await this.decide(query, request, received, modern, abort.signal);
    const cancelled = abort.signal.aborted;
    this.deciding.delete(request.id);
    if (cancelled) return; // cancelled by the host (nothing to answer) or answered when the server exited
    if (outcome.kind === 'input_required') {
      this.host.sendText(`{"jsonrpc":"2.0","id":${rawId},"result":${JSON.stringify(outcome.result)}}`);
      return;
    }
    const { decision } = outcome;
    options.onDecision?.(decision);
    if (!decision.allow) {
      if (method !== undefined) {
        this.host.sendText(`{"jsonrpc":"2.0","id":${rawId},"error":${JSON.stringify(methodRefusal(decision, options.formatRefusal))}}`);
        return;
      }
      const refusal = resultFor(mcpRefusal(decision, options.formatRefusal), modern);
      this.host.sendText(`{"jsonrpc":"2.0","id":${rawId},"result":${JSON.stringify(refusal)}}`);
      return;
    }
    if (this.serverGone) {
      this.answerError(rawId, RpcErrorCode.ConnectionClosed, 'the MCP server has exited');
      return;
    }
    if (outcome.stripRetry && request.params !== undefined) {
      // The approval's state and answer were the proxy's: the server gets the call without them.
      this.forwarded.set(request.id, { kind: 'other', rawId });
      if (!this.server.send({ ...request, params: withoutRetry(request.params) })) {
        this.forwarded.delete(request.id);
        this.answerError(rawId, RpcErrorCode.InternalError, 'the tool call could not be written to the MCP server');
      }
      return;
    }
    // The bytes the host sent, which the service decided on: nothing of them is written anew.
    this.forward(request.id, received, { kind: 'other', rawId });
  }

  /** The decision on a call, in the request's era (2026-07-28 asks for approvals through `input_required`). */
  private async decide(
    query: DecideQuery,
    request: JsonRpcRequest,
    received: Received,
    modern: ModernRequest | undefined,
    signal: AbortSignal,
  ): Promise<ModernOutcome> {
    const { options } = this;
    const early = tooDeepToSend(query, received);
    if (early !== undefined) return { kind: 'decided', decision: early, stripRetry: false };
    const owner = 'idea-mcp-proxy';
    if (modern !== undefined) {
      const context = { client: options.client, approval: options.approval, logger: options.logger, seal: this.seal, signal, owner };
      return decideModernCall(context, query, request.params ?? {}, modern.capabilities);
    }
    const context = {
      client: options.client,
      approval: options.approval,
      logger: options.logger,
      elicitor: this.elicitor,
      signal,
      requestId: request.id,
      owner,
    };
    return { kind: 'decided', decision: await decideToolCall(context, query), stripRetry: false };
  }

  /** A `notifications/cancelled` for a call still being decided: the decision stops there, and the server never hears of it. */
  private cancelDecision(requestId: unknown): boolean {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return false;
    const deciding = this.deciding.get(requestId);
    if (deciding === undefined) return false;
    deciding.abort.abort();
    return true;
  }

  private fromServer(received: Received): void {
    const { message } = received;
    if ('method' in message && 'id' in message && isProxyRequestId(message.id)) {
      // The host's answer to it would be taken for the user's answer to the proxy's own approval form.
      this.options.logger.warn({ id: message.id, method: message.method }, 'server request under an id of the proxy: refused');
      this.server.send({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: RpcErrorCode.InvalidRequest, message: `request id ${String(message.id)} is reserved by idea-mcp-proxy` },
      });
      return;
    }
    if ('method' in message && !('id' in message)) {
      const acknowledgement = this.subscriptions.acknowledgement(message);
      if (acknowledgement !== undefined) this.host.send(acknowledgement);
      else this.host.sendRaw(received.raw);
      return;
    }
    if ('method' in message || message.id === null) {
      this.host.sendRaw(received.raw);
      return;
    }
    const forwarded = this.forwarded.get(message.id);
    if (forwarded === undefined) {
      // The host would take it for the answer to a call being decided or refused under that id.
      this.options.logger.warn({ id: message.id }, 'answer to a request the proxy did not forward: dropped');
      return;
    }
    this.forwarded.delete(message.id);
    if (forwarded.kind === 'listen') {
      const ownAcknowledgement = this.subscriptions.answered(message.id, 'error' in message);
      if (ownAcknowledgement !== undefined) {
        // A server that does not listen: the proxy keeps the host's subscription for tool changes itself.
        this.host.sendText(ownAcknowledgement);
        return;
      }
    }
    if (forwarded.kind === 'initialize' && 'result' in message && this.declareListChanged(message.result)) {
      this.sendRewritten(message, forwarded.rawId);
      return;
    }
    if (forwarded.kind === 'tools/list' && 'result' in message) this.options.server?.report(message.result);
    if (forwarded.kind === 'tools/list' && 'result' in message && this.options.filterToolsList) {
      const filtered = this.filterList(message, forwarded.rawId);
      this.filtering.add(filtered);
      void filtered.finally(() => this.filtering.delete(filtered));
      return;
    }
    this.host.sendRaw(received.raw);
  }

  /** An answer the proxy changed, written anew; one it cannot write (nested too deep) becomes a JSON-RPC error. */
  private sendRewritten(message: JsonRpcResult, rawId: string): void {
    if (this.host.send(message)) return;
    this.options.logger.warn({ id: message.id }, 'answer of the server too deeply nested to rewrite: answered with an error');
    this.answerError(rawId, RpcErrorCode.InternalError, 'the MCP server answered a message idea-mcp-proxy cannot rewrite');
  }

  /** The proxy tells the host of list changes itself: it says so in the `initialize` answer, when the server has tools. */
  private declareListChanged(result: JsonObject): boolean {
    if (!this.options.filterToolsList || !isJsonObject(result.capabilities) || !isJsonObject(result.capabilities.tools)) return false;
    result.capabilities.tools.listChanged = true;
    this.declaredListChanged = true;
    return true;
  }

  private async filterList(response: JsonRpcResult, rawId: string): Promise<void> {
    const { options } = this;
    const resolved = (value: string) => ({ ok: true as const, value });
    const filter = (listed: unknown) =>
      filterToolList(
        {
          client: options.client,
          logger: options.logger,
          follower: this.follower,
          project: resolved(options.project),
          requester: resolved(options.requester),
          signal: undefined,
        },
        listed,
      );
    const result =
      options.server === undefined ? await filter(response.result) : await options.server.filterQualified(response.result, filter);
    this.sendRewritten({ ...response, result: result as JsonObject }, rawId);
  }

  private sendToolListChanged(): void {
    if (this.serverGone) return;
    // 2026-07-28: on each subscription that asked for it.
    for (const text of this.subscriptions.notifications()) this.host.sendText(text);
    // Earlier revisions: never before the host's `notifications/initialized`, and only when the `initialize` answer said so.
    if (!this.hostInitialized || !this.declaredListChanged) return;
    this.host.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  /** An error answer to the host's request whose id was written `rawId` (echoed as it came, 9007199254740993 included). */
  private answerError(rawId: string, code: number, message: string): void {
    this.host.sendText(`{"jsonrpc":"2.0","id":${rawId},"error":${JSON.stringify({ code, message })}}`);
  }

  /** The host closed our stdin: the server's stdin is closed, then SIGTERM after 2 s, then SIGKILL 2 s later. */
  private hostClosed(): void {
    this.elicitor.abandonAll();
    this.server.end();
    if (this.serverGone) return;
    const signal = (name: NodeJS.Signals) => () => {
      if (!this.serverGone) {
        this.options.logger.warn({ signal: name }, 'the MCP server is still running after its stdin closed');
        this.signalServer(name);
      }
    };
    this.shutdownTimers.push(setTimeout(signal('SIGTERM'), SHUTDOWN_GRACE_MS), setTimeout(signal('SIGKILL'), 2 * SHUTDOWN_GRACE_MS));
  }

  /**
   * The proxy was asked to stop (`signal` from the host or a terminal): the server is given the same
   * signal, then SIGKILL 2 s later if it is still running; the proxy exits when it has.
   */
  stop(signal: NodeJS.Signals): void {
    if (this.serverGone) return;
    this.options.logger.info({ signal }, 'idea-mcp-proxy stopping: passing the signal to the MCP server');
    this.signalServer(signal);
    const kill = setTimeout(() => {
      if (!this.serverGone) this.signalServer('SIGKILL');
    }, SHUTDOWN_GRACE_MS);
    this.shutdownTimers.push(kill);
  }

  /**
   * A signal to the server's whole process group (it is spawned leading its own): a server started
   * through a launcher (`npx`, `sh -c`, `uv run`) stops with its launcher instead of being left
   * running, or writing to a closed pipe, once the launcher is gone.
   */
  private signalServer(name: NodeJS.Signals): void {
    const { pid } = this.child;
    if (pid !== undefined && process.platform !== 'win32') {
      try {
        process.kill(-pid, name);
        return;
      } catch {
        // No such group (the server was not spawned detached): the server alone.
      }
    }
    this.child.kill(name);
  }

  /** The server exited: every request it had not answered gets a JSON-RPC error; answers the code to exit with. */
  private serverExited(code: number | null, signal: NodeJS.Signals | null): number {
    this.serverGone = true;
    for (const timer of this.shutdownTimers) clearTimeout(timer);
    this.follower.stop();
    this.subscriptions.clear();
    this.elicitor.abandonAll();
    const why = signal === null ? `exited with code ${String(code)}` : `was killed by ${signal}`;
    for (const { rawId } of [...this.forwarded.values(), ...this.deciding.values()]) {
      this.answerError(rawId, RpcErrorCode.ConnectionClosed, `the MCP server ${why} before answering`);
    }
    for (const { abort } of this.deciding.values()) abort.abort();
    this.forwarded.clear();
    this.deciding.clear();
    this.options.logger.info({ code, signal }, `the MCP server ${why}`);
    if (code !== null) return code;
    // A shell's way of saying a process was killed by signal n: 128 + n.
    return 128 + (signal === null ? 0 : constants.signals[signal]);
  }
}

/**
 * Arguments nested deeper than MAX_ARGUMENTS_DEPTH are refused here (`invalid_arguments`), on every
 * Node line: the server may not read them as the service judged them, or at all.
 */
function tooDeepToSend(query: DecideQuery, received: Received): ClientDecision | undefined {
  if (query.arguments === undefined || (received.shape?.depth ?? 0) <= PLAIN_DEPTH) return undefined;
  if (depthOf(query.arguments) <= MAX_ARGUMENTS_DEPTH) return undefined;
  return localDenial(query, 'invalid_arguments', `its arguments are nested more than ${String(MAX_ARGUMENTS_DEPTH)} levels deep`);
}

/** The nesting of objects and arrays in `value` (a scalar is 0), without recursion: any depth is measured. */
function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (typeof next.value !== 'object' || next.value === null) continue;
    const depth = next.depth + 1;
    if (depth > deepest) deepest = depth;
    for (const child of Object.values(next.value)) pending.push({ value: child, depth });
  }
  return deepest;
}
