/**
 * How the client talks to the service: undici `Pool`s of keep-alive connections, every exchange
 * bounded by one `AbortSignal` (its deadline joined with its caller's signal). Everything that can
 * go wrong below the HTTP status line (refused connection, reset, timeout, oversized body, closed
 * client, a caller that gave up) becomes a {@link TransportFailure} whose message is a short cause.
 */
import { Pool, type buildConnector } from 'undici';
import { describeTransportError } from '../causes.js';
import type { Method } from './endpoints.js';

/** The whole exchange (wait for a connection, connect, send, headers, body) failed; `message` is the cause. */
export class TransportFailure extends Error {
  override readonly name = 'TransportFailure';
}

/** A failure without a stack: it is only ever a cause in a message, and a burst makes thousands. */
function transportFailure(cause: string): TransportFailure {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new TransportFailure(cause);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export interface Exchange {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export interface ExchangeRequest {
  method: Method;
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
  /** The answer's body is refused past this many bytes (announced or received). */
  maxBodyBytes: number;
  /**
   * Safe to send twice (a decision query, a read): when a kept-alive socket turns out to be
   * closed by the service, it is retried once on a fresh one, within the same deadline.
   */
  retryOnStaleSocket: boolean;
  /** A long-poll: on connections of its own, so waiting never holds a place decisions queue for. */
  longPoll?: boolean | undefined;
}

/**
 * The time one call may take from the moment it is made (waiting for a connection, the exchange
 * and the reading of the answer all count), and its caller giving up, as the one `AbortSignal`
 * undici and the queue listen to; its reason is the {@link TransportFailure} to report.
 *
 * Not `AbortSignal.timeout`, whose timer cannot be cleared: over 27 bursts of 5,000 concurrent
 * calls the next call took up to 81 ms with it (target 50 ms), 26 ms with a timer cleared when the
 * call ends. Not `AbortSignal.any`: on Node 20 it keeps every composite of a long-lived caller
 * signal (200,000 kept after 200,000 calls), where this listener is removed when the call ends.
 */
export class Deadline {
  readonly ends: number;
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly timeoutMs: number,
    private readonly caller?: AbortSignal,
  ) {
    this.ends = performance.now() + timeoutMs;
    this.timer = setTimeout(expire, timeoutMs, this);
    if (caller?.aborted === true) this.abort('cancelled by the caller');
    else caller?.addEventListener('abort', this, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** The signal's reason once it aborted. */
  get reason(): TransportFailure {
    return this.signal.reason as TransportFailure;
  }

  /** Why the call can no longer succeed; a time that is up ends it even if its timer has not run yet (a busy loop). */
  failure(): TransportFailure | undefined {
    if (!this.signal.aborted && performance.now() >= this.ends) expire(this);
    return this.signal.aborted ? this.reason : undefined;
  }

  /** The failure of a call whose answer was complete, parsed and checked only after its deadline; `undefined` when on time. */
  lateFailure(): TransportFailure | undefined {
    if (this.signal.aborted) return this.reason;
    if (performance.now() <= this.ends) return undefined;
    return transportFailure(`timeout after ${String(this.timeoutMs)} ms (the answer came too late)`);
  }

  abort(cause: string): void {
    if (!this.signal.aborted) this.controller.abort(transportFailure(cause));
  }

  /** The caller's signal fired (this object is its listener, to avoid a closure per call). */
  handleEvent(): void {
    this.abort('cancelled by the caller');
  }

  /** Call it once the call is over, whatever its outcome. */
  end(): void {
    clearTimeout(this.timer);
    this.caller?.removeEventListener('abort', this);
  }
}

// One function for every timer: a closure per call would cost memory a burst multiplies.
function expire(deadline: Deadline): void {
  deadline.abort(`timeout after ${String(deadline.timeoutMs)} ms`);
}

/**
 * The connections to the service: `connections` for decisions and admin calls, any number for
 * long-polls. At most `connections` requests are handed to undici at once; the others wait in a
 * queue they leave the moment their signal aborts. undici's own queue is not enough: a request
 * aborted while queued there destroys a socket when its turn comes, so after 5,000 concurrent calls
 * the next one was denied on its 500 ms deadline in 22 of 27 bursts (with this queue: answered in
 * at most 26 ms, 27 of 27).
 */
export class Transport {
  private readonly pool: Pool;
  private readonly longPolls: Pool;
  private readonly queue: Queue;

  /** `connect`: how a new connection is opened (the unix socket's, checked first), else TCP to `origin`. */
  constructor(
    origin: string,
    connections: number,
    options: { backstopMs: number; maxBodyBytes: number; connect?: buildConnector.connector | undefined },
  ) {
    // Backstops only: the per-call deadline is what enforces the timeouts.
    const limits = { headersTimeout: options.backstopMs, bodyTimeout: options.backstopMs, maxResponseSize: options.maxBodyBytes };
    const through = options.connect === undefined ? {} : { connect: options.connect };
    this.pool = new Pool(origin, { connections, keepAliveTimeout: 30_000, ...limits, ...through });
    this.longPolls = new Pool(origin, { maxResponseSize: options.maxBodyBytes, headersTimeout: 0, bodyTimeout: 0, ...through });
    this.queue = new Queue(connections);
  }

  /**
   * Runs one request and reads its whole body, or fails as soon as the deadline's signal aborts:
   * the caller gets the failure at once, whatever stage the request is in.
   */
  async send(request: ExchangeRequest, deadline: Deadline): Promise<Exchange> {
    const failure = deadline.failure();
    if (failure !== undefined) throw failure;
    if (request.longPoll === true) return untilAborted(exchangeWithRetry(this.longPolls, request, deadline.signal), deadline);
    await this.queue.enter(deadline);
    const exchange = exchangeWithRetry(this.pool, request, deadline.signal);
    // The place is given back when undici is done with the request, not when the caller stops waiting.
    const leave = (): void => {
      this.queue.leave();
    };
    exchange.then(leave, leave);
    return untilAborted(exchange, deadline);
  }

  /** Lets the calls on the wire end (each within its deadline); queued and later calls fail at once. */
  async close(): Promise<void> {
    this.queue.close();
    await Promise.all([this.pool.close(), this.longPolls.destroy()]).catch(() => undefined);
  }
}

/** `exchange`, or the deadline's failure the moment its signal aborts (undici only notices once a request is connected). */
function untilAborted(exchange: Promise<Exchange>, deadline: Deadline): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => {
    const onAbort = (): void => {
      reject(deadline.reason);
    };
    deadline.signal.addEventListener('abort', onAbort, { once: true });
    exchange.then(
      (answer) => {
        deadline.signal.removeEventListener('abort', onAbort);
        resolve(answer);
      },
      (error: unknown) => {
        deadline.signal.removeEventListener('abort', onAbort);
        reject(error instanceof TransportFailure ? error : transportFailure(describeTransportError(error)));
      },
    );
  });
}

interface Waiting {
  deadline: Deadline;
  start: () => void;
}

/** `size` places for requests, and the calls waiting for one in arrival order. */
class Queue {
  private free: number;
  // A Set keeps arrival order and lets a call that gave up leave in O(1).
  private readonly waiting = new Set<Waiting>();
  private closed = false;

  constructor(size: number) {
    this.free = size;
  }

  enter(deadline: Deadline): Promise<void> | undefined {
    if (this.closed) throw transportFailure('client closed');
    if (this.free > 0 && this.waiting.size === 0) {
      this.free -= 1;
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const waiting: Waiting = {
        deadline,
        start: () => {
          deadline.signal.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = (): void => {
        this.waiting.delete(waiting);
        reject(deadline.reason);
      };
      deadline.signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.add(waiting);
    });
  }

  /** Hands the place to the oldest call that can still use it, else frees it. */
  leave(): void {
    for (const waiting of this.waiting) {
      this.waiting.delete(waiting);
      // Its time may be up though its timer has not run yet: it must not start a request it cannot finish.
      if (waiting.deadline.failure() !== undefined) continue; // its abort listener rejected it
      waiting.start();
      return;
    }
    this.free += 1;
  }

  close(): void {
    this.closed = true;
    for (const waiting of this.waiting) waiting.deadline.abort('client closed');
  }
}

async function exchangeWithRetry(pool: Pool, request: ExchangeRequest, signal: AbortSignal): Promise<Exchange> {
  try {
    return await exchangeOnce(pool, request, signal);
  } catch (error) {
    if (!request.retryOnStaleSocket || signal.aborted || !isStaleSocket(error)) throw error;
    return exchangeOnce(pool, request, signal);
  }
}

/** The service closed an idle kept-alive socket just as the request went out. */
function isStaleSocket(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

async function exchangeOnce(pool: Pool, request: ExchangeRequest, signal: AbortSignal): Promise<Exchange> {
  const response = await pool.request({
    method: request.method,
    path: request.path,
    headers: request.headers,
    body: request.body ?? null,
    signal,
  });
  const announced = Number(response.headers['content-length']);
  if (announced > request.maxBodyBytes) {
    response.body.destroy();
    throw tooLarge(request.maxBodyBytes);
  }
  // With a length within the cap, undici's own reader is the fastest; without one, count as it comes.
  const text = Number.isFinite(announced) ? await response.body.text() : await readCapped(response.body, request.maxBodyBytes);
  return { status: response.statusCode, headers: response.headers, text };
}

async function readCapped(body: AsyncIterable<Buffer> & { destroy(): unknown }, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      throw tooLarge(maxBytes);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function tooLarge(maxBytes: number): TransportFailure {
  const size = maxBytes % 1024 === 0 ? `${String(maxBytes / 1024)} KiB` : `${String(maxBytes)} bytes`;
  return transportFailure(`answer larger than ${size}`);
}
