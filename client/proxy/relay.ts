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
import {
  ErrorCode,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type JSONRPCResponse,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpApprovalOptions } from '../guards/approval-elicitation.js';
import { decideQueryFor, isJsonObject, type ClientDecision, type FormatRefusal } from '../decision.js';
import type { GuardClient } from '../guards/common.js';
import { mcpRefusal } from '../guards/refusal.js';
import { decideToolCall, toolCallParams, warnOnceAboutRequester } from '../guards/tool-call.js';
import { filterToolList } from '../guards/tool-list.js';
import { ToolListFollower } from '../guards/tool-list-follower.js';
import { HostElicitor, isProxyRequestId } from './host-elicitor.js';
import { JsonRpcChannel } from './json-rpc-channel.js';
import { methodRefusal, type ServerScope } from './server-scope.js';
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
type Forwarded = 'initialize' | 'tools/list' | 'other';

export class McpRelay {
  private readonly host: JsonRpcChannel;
  private readonly server: JsonRpcChannel;
  private readonly elicitor: HostElicitor;
  private readonly follower: ToolListFollower;
  /** Requests of the host the server has not answered yet. */
  private readonly forwarded = new Map<RequestId, Forwarded>();
  /** `tools/call` requests being decided, and how to give up on each. */
  private readonly deciding = new Map<RequestId, AbortController>();
  private readonly warned = new Set<string>();
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
      (message) => {
        this.fromHost(message);
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
      (message) => {
        this.fromServer(message);
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

  private fromHost(message: JSONRPCMessage): void {
    if ('method' in message && 'id' in message) {
      this.hostRequest(message);
      return;
    }
    if ('method' in message) {
      if (message.method === 'tools/call') {
        // No id, so nothing to answer a refusal to; a server that runs it anyway would run it unguarded.
        this.options.logger.warn({ from: 'host' }, 'tools/call without an id dropped: it is not decided nor forwarded');
        return;
      }
      if (message.method === 'notifications/initialized') this.hostInitialized = true;
      if (message.method === 'notifications/cancelled' && this.cancelDecision(message.params?.requestId)) return;
      this.server.send(message);
      return;
    }
    // An answer: to one of the proxy's own questions, else to the server's.
    if (this.elicitor.takeAnswer(message)) return;
    this.server.send(message);
  }

  private hostRequest(request: JSONRPCRequest): void {
    if (this.serverGone) {
      this.answerError(request.id, ErrorCode.ConnectionClosed, 'the MCP server has exited');
      return;
    }
    if (this.forwarded.has(request.id) || this.deciding.has(request.id)) {
      // Two requests under one id: the server's answers could no longer be told apart (a tools/list taken for the other, unfiltered).
      this.answerError(
        request.id,
        ErrorCode.InvalidRequest,
        `request id ${JSON.stringify(request.id)} is already used by a request not answered yet`,
      );
      return;
    }
    if (request.method === 'tools/call') {
      void this.guardCall(request);
      return;
    }
    const guardedAs = this.options.server?.methodName(request.method);
    if (guardedAs !== undefined) {
      void this.guardCall(request, guardedAs);
      return;
    }
    if (request.method === 'initialize' && isJsonObject(request.params) && isJsonObject(request.params.capabilities)) {
      this.elicitor.hostCapabilities = request.params.capabilities;
    }
    this.forward(request, request.method === 'initialize' ? 'initialize' : request.method === 'tools/list' ? 'tools/list' : 'other');
  }

  private forward(request: JSONRPCRequest, kind: Forwarded): void {
    this.forwarded.set(request.id, kind);
    this.server.send(request);
  }

  /** Decides a `tools/call`, or (`method`: its qualified name) a guarded method of a declared server, before forwarding it. */
  private async guardCall(request: JSONRPCRequest, method?: string): Promise<void> {
    const { options } = this;
    const scope = options.server;
    let name: string;
    let args: Record<string, unknown> | undefined;
    if (method !== undefined && scope !== undefined) {
      [name, args] = [method, scope.methodArguments(request)];
    } else {
      const call = toolCallParams(request.params);
      if (!call.ok) {
        // Nothing to decide about and nothing a server would run: the protocol's own error, as guardMcpServer answers.
        this.answerError(request.id, ErrorCode.InvalidParams, call.message);
        return;
      }
      [name, args] = [scope === undefined ? call.name : scope.toolName(call.name), call.args];
    }
    const abort = new AbortController();
    this.deciding.set(request.id, abort);
    const query = decideQueryFor(options.project, options.requester, name, args);
    const decision = await decideToolCall(
      {
        client: options.client,
        approval: options.approval,
        logger: options.logger,
        elicitor: this.elicitor,
        signal: abort.signal,
        requestId: request.id,
        owner: 'idea-mcp-proxy',
      },
      query,
    );
    const cancelled = abort.signal.aborted;
    this.deciding.delete(request.id);
    if (cancelled) return; // cancelled by the host (nothing to answer) or answered when the server exited
    options.onDecision?.(decision);
    if (!decision.allow) {
      if (method !== undefined) this.host.send({ jsonrpc: '2.0', id: request.id, error: methodRefusal(decision, options.formatRefusal) });
      else this.host.send({ jsonrpc: '2.0', id: request.id, result: mcpRefusal(decision, options.formatRefusal) });
      return;
    }
    if (this.serverGone) {
      this.answerError(request.id, ErrorCode.ConnectionClosed, 'the MCP server has exited');
      return;
    }
    this.forward(request, 'other');
  }

  /** A `notifications/cancelled` for a call still being decided: the decision stops there, and the server never hears of it. */
  private cancelDecision(requestId: unknown): boolean {
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return false;
    const abort = this.deciding.get(requestId);
    if (abort === undefined) return false;
    abort.abort();
    return true;
  }

  private fromServer(message: JSONRPCMessage): void {
    if ('method' in message && 'id' in message && isProxyRequestId(message.id)) {
      // The host's answer to it would be taken for the user's answer to the proxy's own approval form.
      this.options.logger.warn({ id: message.id, method: message.method }, 'server request under an id of the proxy: refused');
      this.server.send({
        jsonrpc: '2.0',
        id: message.id,
        error: { code: ErrorCode.InvalidRequest, message: `request id ${String(message.id)} is reserved by idea-mcp-proxy` },
      });
      return;
    }
    if ('method' in message || !('id' in message) || message.id === undefined) {
      this.host.send(message);
      return;
    }
    const kind = this.forwarded.get(message.id);
    if (kind === undefined) {
      // The host would take it for the answer to a call being decided or refused under that id.
      this.options.logger.warn({ id: message.id }, 'answer to a request the proxy did not forward: dropped');
      return;
    }
    this.forwarded.delete(message.id);
    if (kind === 'initialize' && 'result' in message) this.declareListChanged(message.result);
    if (kind === 'tools/list' && 'result' in message) this.options.server?.report(message.result);
    if (kind === 'tools/list' && 'result' in message && this.options.filterToolsList) {
      const filtered = this.filterList(message);
      this.filtering.add(filtered);
      void filtered.finally(() => this.filtering.delete(filtered));
      return;
    }
    this.host.send(message);
  }

  /** The proxy tells the host of list changes itself: it says so in the `initialize` answer, when the server has tools. */
  private declareListChanged(result: Record<string, unknown>): void {
    if (!this.options.filterToolsList || !isJsonObject(result.capabilities) || !isJsonObject(result.capabilities.tools)) return;
    result.capabilities.tools.listChanged = true;
    this.declaredListChanged = true;
  }

  private async filterList(response: JSONRPCResponse & { result: Record<string, unknown> }): Promise<void> {
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
    this.host.send({ ...response, result: result as Record<string, unknown> });
  }

  private sendToolListChanged(): void {
    // Never before the host's `notifications/initialized`, and only when the `initialize` answer said so.
    if (!this.hostInitialized || !this.declaredListChanged || this.serverGone) return;
    this.host.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  }

  private answerError(id: RequestId, code: number, message: string): void {
    this.host.send({ jsonrpc: '2.0', id, error: { code, message } });
  }

  /** The host closed our stdin: the server's stdin is closed, then SIGTERM after 2 s, then SIGKILL 2 s later. */
  private hostClosed(): void {
    this.elicitor.abandonAll();
    this.server.end();
    if (this.serverGone) return;
    const signal = (name: NodeJS.Signals) => () => {
      if (!this.serverGone) {
        this.options.logger.warn({ signal: name }, 'the MCP server is still running after its stdin closed');
        this.child.kill(name);
      }
    };
    this.shutdownTimers.push(setTimeout(signal('SIGTERM'), SHUTDOWN_GRACE_MS), setTimeout(signal('SIGKILL'), 2 * SHUTDOWN_GRACE_MS));
  }

  /** The server exited: every request it had not answered gets a JSON-RPC error; answers the code to exit with. */
  private serverExited(code: number | null, signal: NodeJS.Signals | null): number {
    this.serverGone = true;
    for (const timer of this.shutdownTimers) clearTimeout(timer);
    this.follower.stop();
    this.elicitor.abandonAll();
    const why = signal === null ? `exited with code ${String(code)}` : `was killed by ${signal}`;
    for (const id of [...this.forwarded.keys(), ...this.deciding.keys()]) {
      this.answerError(id, ErrorCode.ConnectionClosed, `the MCP server ${why} before answering`);
    }
    for (const abort of this.deciding.values()) abort.abort();
    this.forwarded.clear();
    this.deciding.clear();
    this.options.logger.info({ code, signal }, `the MCP server ${why}`);
    if (code !== null) return code;
    // A shell's way of saying a process was killed by signal n: 128 + n.
    return 128 + (signal === null ? 0 : constants.signals[signal]);
  }
}
