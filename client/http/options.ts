/**
 * The options of `PdpClient`, checked when the client is built: a wrong URL or duration is a
 * programming error the host must see at start, not a stream of denials later.
 */
import { oneLine } from '../causes.js';
import type { PdpClientLogger } from './socket-trust.js';

/** Options of `PdpClient`. */
export interface PdpClientOptions {
  /**
   * Where the service listens: an absolute `http://` or `https://` URL such as
   * `http://127.0.0.1:8787`. A path is kept as a prefix of every route (`http://gw/pdp`).
   */
  baseUrl?: string | undefined;
  /**
   * The service's unix domain socket (`PDP_SOCKET`, by default `pdp.sock` in its state folder, `~/.local/state/idea-pdp`):
   * every request goes through it, never through TCP. `baseUrl` then only gives the path prefix and
   * the `Host` header (default `http://localhost`). Prefer it on one machine: while the service is
   * down another local process can take its TCP port, never its socket in a folder only the
   * service's user may write. Before each new connection the socket and its folder must belong to
   * this process's user and the folder must not be writable by group or others; otherwise nothing
   * is sent there (no token), every decision is denied (`pdp_unavailable`) and `logger` gets one line.
   */
  socketPath?: string | undefined;
  /**
   * Where the client reports a `socketPath` it does not trust (pino-compatible `warn(fields, message)`).
   * Default: a process warning of type `IdeaPdpClientWarning` (stderr, never stdout).
   */
  logger?: PdpClientLogger | undefined;
  /** Sent as `Authorization: Bearer <token>`: the decide token, or the admin token for writes. */
  token?: string | undefined;
  /**
   * Hard deadline of one decision (or one batch) in milliseconds: waiting for a socket, the
   * exchange and the reading of the answer included. Default 500. Must be a finite number
   * greater than 0: `0`, a negative number or `NaN` throws (there is no "no deadline").
   */
  timeoutMs?: number | undefined;
  /** Deadline of one admin call in milliseconds (writes are fsync'ed by the service). Default 10,000. */
  adminTimeoutMs?: number | undefined;
  /** Most requests on the wire at once (one socket each); later ones wait their turn. Default 16. */
  connections?: number | undefined;
}

export interface CheckedOptions {
  url: URL;
  socketPath: string | undefined;
  logger: PdpClientLogger | undefined;
  token: string | undefined;
  timeoutMs: number;
  adminTimeoutMs: number;
  connections: number;
}

/** The longest delay Node's timers accept: a longer one would fire after 1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

export function checkOptions(options: PdpClientOptions): CheckedOptions {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a JavaScript caller may pass anything
  if (typeof options !== 'object' || options === null) {
    throw new TypeError('PdpClient: expected options such as { baseUrl: "http://127.0.0.1:8787" }');
  }
  const socketPath = socketPathOf(options.socketPath);
  return {
    url: baseUrlOf(socketPath !== undefined && options.baseUrl === undefined ? SOCKET_BASE_URL : options.baseUrl),
    socketPath,
    logger: loggerOf(options.logger),
    token: tokenOf(options.token),
    timeoutMs: durationOf('timeoutMs', options.timeoutMs, 500),
    adminTimeoutMs: durationOf('adminTimeoutMs', options.adminTimeoutMs, 10_000),
    connections: connectionsOf(options.connections),
  };
}

/** What `baseUrl` is with a `socketPath` and no `baseUrl`: a loopback name the service's Host check accepts. */
const SOCKET_BASE_URL = 'http://localhost';

function socketPathOf(raw: unknown): string | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || raw === '' || raw.includes('\0')) {
    throw new TypeError(
      'PdpClient: socketPath must be the path of the service\'s unix socket, such as "/home/me/.local/state/idea-pdp/pdp.sock"',
    );
  }
  return raw;
}

function loggerOf(raw: unknown): PdpClientLogger | undefined {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'object' || raw === null || typeof (raw as { warn?: unknown }).warn !== 'function') {
    throw new TypeError('PdpClient: logger must have a warn(fields, message) method, such as a pino logger');
  }
  return raw as PdpClientLogger;
}

function baseUrlOf(raw: unknown): URL {
  const expected = 'an absolute http:// or https:// URL such as "http://127.0.0.1:8787"';
  if (typeof raw !== 'string' || raw === '') throw new TypeError(`PdpClient: baseUrl is required: ${expected}`);
  let url: URL | undefined;
  try {
    url = new URL(raw);
  } catch {
    url = undefined;
  }
  // "localhost:8787" parses as a URL whose scheme is "localhost:", hence the protocol check.
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new TypeError(`PdpClient: baseUrl must be ${expected} (got ${JSON.stringify(oneLine(raw, 100))})`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new TypeError('PdpClient: baseUrl must not carry credentials: pass the token as the `token` option');
  }
  if (url.search !== '' || url.hash !== '') {
    throw new TypeError(`PdpClient: baseUrl must not have a query or a fragment (got ${JSON.stringify(oneLine(raw, 100))})`);
  }
  return url;
}

function tokenOf(token: unknown): string | undefined {
  if (token === undefined || token === '') return undefined;
  return checkToken(token, 'PdpClient: token');
}

/** A bearer token as the service accepts it: a string without spaces or control characters. */
export function checkToken(token: unknown, what: string): string {
  // eslint-disable-next-line no-control-regex
  if (typeof token !== 'string' || token === '' || /[\u0000-\u0020\u007f]/.test(token)) {
    throw new TypeError(`${what} must be a string without spaces or control characters (is there a trailing newline?)`);
  }
  return token;
}

function durationOf(name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS) {
    throw new RangeError(
      `PdpClient: ${name} must be a number of milliseconds greater than 0 and at most ${String(MAX_TIMER_MS)} (got ${shown(value)}); leave it out for the default of ${String(fallback)} ms`,
    );
  }
  return value;
}

function connectionsOf(value: unknown): number {
  if (value === undefined) return 16;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw new RangeError(`PdpClient: connections must be a whole number of at least 1 (got ${shown(value)})`);
  }
  return value;
}

/** `baseUrl` as messages may show it. */
export function displayUrl(url: URL): string {
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

/** A bad option's value as an error message shows it. */
function shown(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) return String(value);
  return typeof value === 'string' ? JSON.stringify(value) : typeof value;
}
