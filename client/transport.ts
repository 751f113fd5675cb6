/**
 * One HTTP exchange with the policy service under a hard deadline. Everything that can go wrong
 * below the HTTP status line (refused connection, reset, timeout, oversized body, closed client,
 * a caller that gave up) becomes a {@link TransportFailure} whose message is a short cause.
 */
import { EventEmitter } from 'node:events';
import type { Pool } from 'undici';
import { describeTransportError } from './causes.js';
import type { RequestSlots } from './request-slots.js';

/** The whole exchange (wait for a slot, connect, send, headers, body) failed; `message` is the cause. */
export class TransportFailure extends Error {
  override readonly name = 'TransportFailure';
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

/** undici reads `aborted` before it sends, so a request started after the deadline never goes out. */
class DeadlineSignal extends EventEmitter {
  aborted = false;
}

/**
 * The time one call may take, from the moment it is made: waiting for a free socket, the exchange
 * and the reading of the answer all count against it. `signal` is what undici aborts on; it fires
 * when the time is up or when the caller's own signal aborts.
 */
export class Deadline {
  /** undici accepts an EventEmitter as abort signal; it costs a fraction of an AbortController. */
  readonly signal = new DeadlineSignal();
  readonly ends: number;
  /** Set once the call can no longer succeed: the time is up, or the caller gave up. */
  failure: TransportFailure | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly callerSignal: AbortSignal | undefined;
  private readonly onCallerAbort = (): void => this.fail('cancelled by the caller');

  constructor(
    readonly timeoutMs: number,
    callerSignal?: AbortSignal,
  ) {
    this.ends = performance.now() + timeoutMs;
    this.timer = setTimeout(() => this.fail(`timeout after ${String(timeoutMs)} ms`), timeoutMs);
    this.callerSignal = callerSignal;
    if (callerSignal === undefined) return;
    if (callerSignal.aborted) this.fail('cancelled by the caller');
    else callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  /** True once the call failed or its time is up, even if the timer could not run yet (a busy loop). */
  get passed(): boolean {
    return this.failure !== undefined || performance.now() > this.ends;
  }

  /** The failure to report for a call that ended past its deadline. */
  lateFailure(): TransportFailure {
    return this.failure ?? new TransportFailure(`timeout after ${String(this.timeoutMs)} ms (the answer came too late)`);
  }

  /** Stops the timer; call it once the call is over, whatever its outcome. */
  finish(): void {
    clearTimeout(this.timer);
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
  }

  private fail(cause: string): void {
    if (this.failure !== undefined) return;
    this.failure = new TransportFailure(cause);
    this.signal.aborted = true;
    this.signal.emit('abort');
  }
}

/**
 * Runs one request and reads its whole body, or fails as soon as the deadline fires. The deadline
 * is enforced twice: the abort signal tears the request down in undici (socket included) and takes
 * it out of the slot queue, and the race makes sure the caller gets its answer on time even if some
 * stage ignored the signal.
 */
export async function exchangeWithDeadline(
  pool: Pool,
  slots: RequestSlots,
  request: ExchangeRequest,
  deadline: Deadline,
): Promise<Exchange> {
  if (deadline.failure !== undefined) throw deadline.failure;
  let onAbort: (() => void) | undefined;
  const expiry = new Promise<never>((_resolve, reject) => {
    onAbort = () => reject(deadline.failure ?? new TransportFailure('aborted'));
    deadline.signal.once('abort', onAbort);
  });
  try {
    return await Promise.race([exchangeInSlot(pool, slots, request, deadline), expiry]);
  } catch (error) {
    if (deadline.failure !== undefined) throw deadline.failure;
    if (error instanceof TransportFailure) throw error;
    throw new TransportFailure(describeTransportError(error), { cause: error });
  } finally {
    if (onAbort !== undefined) deadline.signal.removeListener('abort', onAbort);
  }
}

async function exchangeInSlot(pool: Pool, slots: RequestSlots, request: ExchangeRequest, deadline: Deadline): Promise<Exchange> {
  const waiting = slots.acquire(deadline);
  if (waiting !== undefined) await waiting;
  try {
    if (deadline.failure !== undefined) throw deadline.failure;
    try {
      return await exchangeOnce(pool, request, deadline);
    } catch (error) {
      if (request.retryOnStaleSocket !== true || deadline.failure !== undefined || !isStaleSocket(error)) throw error;
      return await exchangeOnce(pool, request, deadline);
    }
  } finally {
    slots.release();
  }
}

/** The service closed an idle kept-alive socket just as the request went out. */
function isStaleSocket(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

async function exchangeOnce(pool: Pool, request: ExchangeRequest, deadline: Deadline): Promise<Exchange> {
  const response = await pool.request({
    method: request.method,
    path: request.path,
    headers: request.headers,
    body: request.body ?? null,
    signal: deadline.signal,
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
  return new TransportFailure(`answer larger than ${size}`);
}
