/**
 * The 2026-07-28 half of the stdio bridge. That revision is stateless: every HTTP POST is one
 * request, whatever connection it came on. They all go to one stdio process (so a subscription
 * opened by `subscriptions/listen` hears the change another request triggers, and a `requestState`
 * sealed by the process is verified by it on the retry), each under an id of the bridge's own,
 * since several hosts' ids may collide on one pipe. What the process writes is routed back to the
 * POST it belongs to: the response by id, a subscription's notifications by their subscription id,
 * progress by its token, anything else to the latest request still open. The HTTP response is one
 * JSON body, or an SSE stream once something comes before the result.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createInterface } from 'node:readline';
import { PROTOCOL_VERSION_META_KEY, SUBSCRIPTION_ID_META_KEY } from '@modelcontextprotocol/server';
import type { StdioCommand } from './stdio-command.js';

export type Message = Record<string, unknown> & { id?: unknown; method?: unknown; params?: Record<string, unknown> };

interface Exchange {
  originalId: unknown;
  response: ServerResponse;
  streaming: boolean;
  done: boolean;
  progressToken: unknown;
}

/**
 * The HTTP status of a JSON-RPC error, as the SDK's own HTTP entry maps the errors of its gates
 * before dispatch (stdio does not tell where an error came from; the example's handlers throw none
 * of these codes): method not found 404; parse, invalid request, header mismatch, missing
 * capability, unsupported version 400. Any other error is in-band: 200.
 */
const ERROR_STATUS: Record<number, number> = { [-32700]: 400, [-32600]: 400, [-32601]: 404, [-32020]: 400, [-32021]: 400, [-32022]: 400 };

/** The revision the shared process is pinned to. */
export const MODERN_REVISION = '2026-07-28';

/** The revision a request's `_meta` envelope claims. */
export function claimedRevision(message: Message): unknown {
  const meta = isObject(message.params?._meta) ? message.params._meta : undefined;
  return meta?.[PROTOCOL_VERSION_META_KEY];
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export class ModernRelay {
  private child: ChildProcessWithoutNullStreams | undefined;
  private readonly open = new Map<string, Exchange>();
  private sequence = 0;

  constructor(private readonly stdio: StdioCommand) {}

  /** Serves one POSTed request or notification the SDK's classifier routed to this revision. */
  handle(message: Message, response: ServerResponse): void {
    const child = this.start();
    if (message.id === undefined) {
      child.stdin.write(`${JSON.stringify(this.outgoingNotification(message))}\n`);
      response.writeHead(202).end();
      return;
    }
    this.sequence += 1;
    const id = `bridge-${String(this.sequence)}`;
    const meta = isObject(message.params?._meta) ? message.params._meta : undefined;
    const exchange: Exchange = { originalId: message.id, response, streaming: false, done: false, progressToken: meta?.progressToken };
    this.open.set(id, exchange);
    response.on('close', () => {
      if (exchange.done) return;
      exchange.done = true;
      this.open.delete(id);
      // The host went away: the stdio side stops the request (or the subscription) too.
      this.child?.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })}\n`);
    });
    child.stdin.write(`${JSON.stringify({ ...message, id })}\n`);
  }

  async close(): Promise<void> {
    for (const exchange of this.open.values()) exchange.response.destroy();
    this.open.clear();
    const child = this.child;
    if (child?.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }

  private start(): ChildProcessWithoutNullStreams {
    if (this.child !== undefined) return this.child;
    const child = spawn(this.stdio.command, this.stdio.args, { cwd: this.stdio.cwd, env: this.stdio.env, stdio: ['pipe', 'pipe', 'pipe'] });
    const log = process.env.CONFORMANCE_STDERR_FILE;
    if (log === undefined) child.stderr.resume();
    else
      child.stderr.on('data', (chunk: Buffer) => {
        appendFileSync(log, chunk);
      });
    createInterface({ input: child.stdout }).on('line', (line) => {
      let message: unknown;
      try {
        message = JSON.parse(line);
      } catch {
        return;
      }
      if (isObject(message)) this.fromChild(message);
    });
    child.once('exit', () => {
      for (const exchange of this.open.values()) exchange.response.destroy();
      this.open.clear();
    });
    this.child = child;
    return child;
  }

  /** A host's notification: a cancellation names the bridge's id of its request. */
  private outgoingNotification(message: Message): Message {
    if (message.method !== 'notifications/cancelled' || message.params === undefined) return message;
    for (const [id, exchange] of this.open) {
      if (exchange.originalId === message.params.requestId) return { ...message, params: { ...message.params, requestId: id } };
    }
    return message;
  }

  private fromChild(message: Message): void {
    if (message.method === undefined) {
      const id = typeof message.id === 'string' ? message.id : '';
      const exchange = this.open.get(id);
      if (exchange === undefined) return;
      this.open.delete(id);
      this.finish(exchange, this.restoreSubscription({ ...message, id: exchange.originalId }, id, exchange));
      return;
    }
    if (message.id !== undefined) return; // no server-to-client request on this revision
    const [id, exchange] = this.exchangeOf(message);
    if (exchange === undefined) return;
    this.stream(exchange, this.restoreSubscription(message, id, exchange));
  }

  private exchangeOf(message: Message): [string, Exchange | undefined] {
    const meta = isObject(message.params?._meta) ? message.params._meta : undefined;
    const subscription = meta?.[SUBSCRIPTION_ID_META_KEY];
    if (typeof subscription === 'string') return [subscription, this.open.get(subscription)];
    const token = message.method === 'notifications/progress' ? message.params?.progressToken : undefined;
    const entries = [...this.open].reverse();
    const match = token === undefined ? entries[0] : entries.find(([, exchange]) => exchange.progressToken === token);
    return match ?? ['', undefined];
  }

  /** The subscription id the process stamped is the bridge's id of the `subscriptions/listen` request: the host's own id again. */
  private restoreSubscription(message: Message, id: string, exchange: Exchange): Message {
    const holder = message.method === undefined ? message.result : message.params;
    if (!isObject(holder) || !isObject(holder._meta) || holder._meta[SUBSCRIPTION_ID_META_KEY] !== id) return message;
    const restored = { ...holder, _meta: { ...holder._meta, [SUBSCRIPTION_ID_META_KEY]: exchange.originalId } };
    return message.method === undefined ? { ...message, result: restored } : { ...message, params: restored };
  }

  private stream(exchange: Exchange, message: Message): void {
    if (!exchange.streaming) {
      exchange.streaming = true;
      exchange.response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    }
    exchange.response.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  }

  private finish(exchange: Exchange, message: Message): void {
    exchange.done = true;
    if (exchange.streaming) {
      this.stream(exchange, message);
      exchange.response.end();
      return;
    }
    const code = isObject(message.error) ? message.error.code : undefined;
    exchange.response.writeHead((typeof code === 'number' ? ERROR_STATUS[code] : undefined) ?? 200, { 'content-type': 'application/json' });
    exchange.response.end(JSON.stringify(message));
  }
}
