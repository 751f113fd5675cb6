/**
 * One HTTP exchange with the policy service under a hard deadline. Everything that can go wrong
 * below the HTTP status line (refused connection, reset, timeout, oversized body, closed client,
 * a caller that gave up) becomes a {@link TransportFailure} whose message is a short cause.
 */
import type { Client } from 'undici';
import { describeTransportError } from './causes.js';
import type { RequestSlots, Slot } from './request-slots.js';

/** The whole exchange (wait for a slot, connect, send, headers, body) failed; `message` is the cause. */
export class TransportFailure extends Error {
  override readonly name = 'TransportFailure';
}

/** A failure without a stack: it is only ever a cause in a message, and a burst makes thousands. */
export function transportFailure(cause: string): TransportFailure {
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
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** The answer's body is refused past this many bytes (announced or received). */
  maxBodyBytes: number;
  /**
   * Safe to send twice (a decision query, a read): when a kept-alive socket turns out to be
   * closed by the service, it is retried once on a fresh one, within the same deadline.
   */
  retryOnStaleSocket?: boolean;
}

type Listener = () => void;

/**
 * The time one call may take, from the moment it is made: waiting for a free socket, the exchange
 * and the reading of the answer all count against it. It is also the abort signal undici gets
 * (undici accepts any object with `aborted`, `once` and `removeListener`): it fires when the time
 * is up or when the caller's own signal aborts. Kept small: a burst holds thousands at once.
 */
export class Deadline {
  /** Read by undici before it sends: a request started after the deadline never goes out. */
  aborted = false;
  readonly ends: number;
  /** Set once the call can no longer succeed: the time is up, or the caller gave up. */
  failure: TransportFailure | undefined;
  /** While the call waits for a slot: the queue it waits in, and what to run once it has one. */
  queue: Set<Deadline> | undefined;
  start: ((slot: Slot) => void) | undefined;
  private listeners: Listener[] | undefined;
  private readonly timer: NodeJS.Timeout;
  private callerSignal: AbortSignal | undefined;

  constructor(
    readonly timeoutMs: number,
    callerSignal?: AbortSignal,
  ) {
    this.ends = performance.now() + timeoutMs;
    this.timer = setTimeout(expire, timeoutMs, this);
    if (callerSignal === undefined) return;
    if (callerSignal.aborted) {
      this.fail('cancelled by the caller');
    } else {
      this.callerSignal = callerSignal;
      callerSignal.addEventListener('abort', this, { once: true });
    }
  }

  /** True once the call failed or its time is up, even if the timer could not run yet (a busy loop). */
  get passed(): boolean {
    return this.failure !== undefined || performance.now() > this.ends;
  }

  /**
   * Fails the call now if its time is up though its timer has not run yet (timers of a burst fire
   * one after another): a call about to get a connection must not start a request it cannot finish.
   */
  expireIfPassed(): boolean {
    if (this.failure === undefined && performance.now() >= this.ends) expire(this);
    return this.failure !== undefined;
  }

  /** The failure to report for a call that ended past its deadline. */
  lateFailure(): TransportFailure {
    return this.failure ?? transportFailure(`timeout after ${String(this.timeoutMs)} ms (the answer came too late)`);
  }

  /** Stops the timer; call it once the call is over, whatever its outcome. */
  finish(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this);
    this.callerSignal = undefined;
  }

  /** The caller's `AbortSignal` fired (this object is its listener, to avoid a closure per call). */
  handleEvent(): void {
    this.fail('cancelled by the caller');
  }

  once(_event: 'abort', listener: Listener): this {
    (this.listeners ??= []).push(listener);
    return this;
  }

  on(event: 'abort', listener: Listener): this {
    return this.once(event, listener);
  }

  addListener(event: 'abort', listener: Listener): this {
    return this.once(event, listener);
  }

  removeListener(_event: 'abort', listener: Listener): this {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.listeners?.splice(index, 1);
    return this;
  }

  off(event: 'abort', listener: Listener): this {
    return this.removeListener(event, listener);
  }

  /** Ends the call: out of the slot queue at once, and every listener (undici, the caller's promise) told. */
  fail(cause: string): void {
    if (this.failure !== undefined) return;
    this.failure = transportFailure(cause);
    this.aborted = true;
    this.queue?.delete(this);
    this.queue = undefined;
    this.start = undefined;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners !== undefined) for (const listener of listeners) listener();
  }
}

// One function for every timer: a closure per call would cost memory a burst multiplies.
function expire(deadline: Deadline): void {
  deadline.fail(`timeout after ${String(deadline.timeoutMs)} ms`);
}

/**
 * Runs one request and reads its whole body, or fails as soon as the deadline fires: the request is
 * taken out of the slot queue or torn down in undici (socket included), and the caller gets the
 * failure at once even if some stage ignored the signal.
 */
export function exchangeWithDeadline(slots: RequestSlots, request: ExchangeRequest, deadline: Deadline): Promise<Exchange> {
  return new Promise<Exchange>((resolve, reject) => {
    if (deadline.failure !== undefined) {
      reject(deadline.failure);
      return;
    }
    let settled = false;
    const onAbort = (): void => {
      settled = true;
      reject(deadline.lateFailure());
    };
    deadline.once('abort', onAbort);
    slots.enter(deadline, (slot) => {
      exchangeWithRetry(slot.client, request, deadline).then(
        (answer) => {
          slots.release(slot, true);
          if (settled) return;
          deadline.removeListener('abort', onAbort);
          resolve(answer);
        },
        (error: unknown) => {
          slots.release(slot, false);
          if (settled) return;
          deadline.removeListener('abort', onAbort);
          reject(error instanceof TransportFailure ? error : transportFailure(describeTransportError(error)));
        },
      );
    });
  });
}

async function exchangeWithRetry(client: Client, request: ExchangeRequest, deadline: Deadline): Promise<Exchange> {
  try {
    return await exchangeOnce(client, request, deadline);
  } catch (error) {
    if (request.retryOnStaleSocket !== true || deadline.failure !== undefined || !isStaleSocket(error)) throw error;
    return exchangeOnce(client, request, deadline);
  }
}

/** The service closed an idle kept-alive socket just as the request went out. */
function isStaleSocket(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

async function exchangeOnce(client: Client, request: ExchangeRequest, deadline: Deadline): Promise<Exchange> {
  const response = await client.request({
    method: request.method,
    path: request.path,
    headers: request.headers,
    body: request.body ?? null,
    signal: deadline,
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
