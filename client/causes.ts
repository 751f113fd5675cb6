/**
 * The causes a local denial quotes: short, one line, in words an agent (and the person reading its
 * transcript) can act on. Everything quoted from outside the SDK (an error message, a service's
 * answer) goes through {@link oneLine} first.
 */

/** Most characters of a cause quoted in a message (docs/api.md#the-client-sdk). */
export const MAX_CAUSE_LENGTH = 200;

// C0 and C1 control characters, DEL, and the Unicode line and paragraph separators.
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g;

/**
 * A cause as a message may quote it: control characters (newlines included) become one space,
 * runs of spaces one space, and at most {@link MAX_CAUSE_LENGTH} characters are kept.
 */
export function oneLine(text: string, max: number = MAX_CAUSE_LENGTH): string {
  const flat = text.replace(CONTROL_CHARACTERS, ' ').replace(/ {2,}/g, ' ').trim();
  if (flat.length <= max) return flat;
  // Never cut a surrogate pair in two.
  const cut = /[\ud800-\udbff]/.test(flat.charAt(max - 2)) ? max - 2 : max - 1;
  return `${flat.slice(0, cut)}…`;
}

/** Text for any thrown value (never `[object Object]`), without ever throwing itself. */
export function errorText(error: unknown): string {
  try {
    if (error instanceof Error) return error.message;
    // JSON.stringify answers undefined for some values (a toJSON that returns nothing), whatever its type says.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    if (typeof error === 'object' && error !== null) return JSON.stringify(error) ?? Object.prototype.toString.call(error);
    return String(error);
  } catch {
    return 'unprintable error';
  }
}

/**
 * A short cause for a failed exchange: "connection refused (127.0.0.1:9)", "connection reset",
 * "TLS error (ERR_SSL_WRONG_VERSION_NUMBER)", ... Never a multi-line library message.
 */
export function describeTransportError(error: unknown): string {
  const { code, message, address, port } = (error ?? {}) as {
    code?: unknown;
    message?: unknown;
    address?: unknown;
    port?: unknown;
  };
  const where = typeof address === 'string' ? ` (${address}${typeof port === 'number' ? `:${String(port)}` : ''})` : '';
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused${where}`;
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return 'connection reset';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found${typeof message === 'string' ? `: ${oneLine(message, 120)}` : ''}`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `host unreachable${where}`;
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'timeout';
    case 'UND_ERR_RES_EXCEEDED_MAX_SIZE':
      return 'answer too large';
    case 'IDEA_SOCKET_REFUSED':
      return typeof message === 'string' ? oneLine(message) : 'socket refused';
    case 'UND_ERR_DESTROYED':
    case 'UND_ERR_CLOSED':
      return 'client closed';
    default:
      break;
  }
  // OpenSSL errors (an https:// URL on a plain HTTP port, a bad certificate) carry their code.
  if (typeof code === 'string' && (code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_') || /CERT|SSL/.test(code))) {
    return `TLS error (${code})`;
  }
  if (typeof code === 'string' && typeof message === 'string') return oneLine(`${code}: ${message}`);
  if (typeof message === 'string' && message !== '') return oneLine(message);
  return 'unknown transport error';
}

/**
 * What an HTTP error answer says about the caller, worded as docs/api.md#the-client-sdk does: `401 unauthorized: decide token
 * missing or wrong`, `404 not_found: no such route (check the path of baseUrl)`, ...
 */
export function rejectionCause(status: number, code: string | undefined, serverMessage: string | undefined): string {
  const label = code === undefined ? `HTTP ${String(status)}` : `${String(status)} ${oneLine(code, 40)}`;
  switch (status) {
    case 401:
      return `${label}: decide token missing or wrong`;
    case 403:
      return `${label}: ${serverMessage === undefined ? 'the service refuses this caller' : oneLine(serverMessage, 120)}`;
    case 404:
      return `${label}: no such route (check the path of baseUrl)`;
    case 413:
      return `${label}: the query is too large`;
    default:
      return serverMessage === undefined ? label : `${label}: ${oneLine(serverMessage, 120)}`;
  }
}

/**
 * HTTP statuses that mean the caller is wrong (bad URL prefix, token, query), not that the service
 * is down: a `pdp_rejected` denial rather than `pdp_unavailable`. 408 and 429 are about load.
 */
export function isRejection(status: number): boolean {
  return status >= 400 && status < 500 && status !== 408 && status !== 429;
}
