/**
 * One HTTP exchange with the policy service under a hard deadline. Everything that can go wrong
 * below the HTTP status line (refused connection, reset, timeout, oversized body, closed client)
 * becomes a {@link TransportFailure} whose message is a short human cause for denial messages.
 */
import { EventEmitter } from 'node:events';
import type { Pool } from 'undici';

/** The whole exchange (connect, send, headers, body) failed; `message` is the cause. */
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
  /**
   * Safe to send twice (a decision query, a read): when a kept-alive socket turns out to be
   * closed by the service, it is retried once on a fresh one, within the same deadline.
   */
  retryOnStaleSocket?: boolean;
}

/**
 * Runs one request and reads its whole body, or fails within `timeoutMs`. The deadline is
 * enforced twice: the abort signal tears the request down in undici (socket included), and the
 * race makes sure the caller gets its answer on time even if some stage ignored the signal.
 */
export async function exchangeWithDeadline(pool: Pool, request: ExchangeRequest, timeoutMs: number): Promise<Exchange> {
  // undici accepts an EventEmitter as abort signal; it costs a fraction of an AbortController,
  // which matters on a path that adds well under a millisecond to every tool call.
  const abort = new EventEmitter();
  let timer: NodeJS.Timeout | undefined;
  let timedOut: TransportFailure | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      timedOut = new TransportFailure(`timeout after ${timeoutMs} ms`);
      abort.emit('abort');
      reject(timedOut);
    }, timeoutMs);
  });
  try {
    return await Promise.race([exchangeOnce(pool, request, abort, () => timedOut !== undefined), deadline]);
  } catch (error) {
    if (timedOut !== undefined) throw timedOut;
    throw new TransportFailure(describeTransportError(error), { cause: error });
  } finally {
    clearTimeout(timer);
  }
}

async function exchangeOnce(pool: Pool, request: ExchangeRequest, signal: EventEmitter, expired: () => boolean): Promise<Exchange> {
  try {
    return await exchange(pool, request, signal);
  } catch (error) {
    if (request.retryOnStaleSocket !== true || expired() || !isStaleSocket(error)) throw error;
    return exchange(pool, request, signal);
  }
}

/** The service closed an idle kept-alive socket just as the request went out. */
function isStaleSocket(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'UND_ERR_SOCKET' || code === 'ECONNRESET' || code === 'EPIPE';
}

async function exchange(pool: Pool, request: ExchangeRequest, signal: EventEmitter): Promise<Exchange> {
  const response = await pool.request({
    method: request.method,
    path: request.path,
    headers: request.headers,
    body: request.body ?? null,
    signal,
  });
  const text = await response.body.text();
  return { status: response.statusCode, headers: response.headers, text };
}

/** A short cause for a failed exchange: "connection refused (127.0.0.1:9)", "socket closed", ... */
export function describeTransportError(error: unknown): string {
  if (error instanceof TransportFailure) return error.message;
  const { code, message, address, port } = (error ?? {}) as {
    code?: unknown;
    message?: unknown;
    address?: unknown;
    port?: unknown;
  };
  const where = typeof address === 'string' ? ` (${address}${typeof port === 'number' ? `:${port}` : ''})` : '';
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused${where}`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found${typeof message === 'string' ? `: ${message}` : ''}`;
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timeout';
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return 'response too large';
    case 'UND_ERR_DESTROYED':
    case 'UND_ERR_CLOSED':
      return 'client closed';
    default:
      break;
  }
  if (typeof code === 'string' && typeof message === 'string') return `${code}: ${message}`;
  if (typeof message === 'string' && message !== '') return message;
  return 'unknown transport error';
}
