/**
 * Bearer-token checks (docs/api.md#security). Each route declares `config.access`:
 * - `admin`: mutating routes, need the admin token;
 * - `approve`: answering an approval request, needs the admin token or the approver token (the
 *   route itself narrows what the approver token may answer);
 * - `read`: `/decide` and the GET routes, need the decide token or the admin token when a decide
 *   token is configured, else open;
 * - `public`: `/healthz`, `/readyz`, the static pages of `/ui` and `/docs`.
 * A route without `access` is treated as `admin` unless it is a GET (fail closed for new routes).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export type RouteAccess = 'admin' | 'approve' | 'read' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

export interface AuthOptions {
  readonly adminToken: string;
  readonly decideToken?: string | undefined;
  /** PDP_APPROVER_TOKEN: may answer approval requests (`once`, `for` up to 8 h, `deny`), nothing else. */
  readonly approverToken?: string | undefined;
  /** Told of every refused credential (it logs them, rate-limited). */
  readonly onRefused?: ((refusal: RefusedCredential) => void) | undefined;
  readonly loopbackHostsOnly?: boolean | undefined;
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/** True when a `Host` header names the loopback interface (DNS-rebinding defence). */
function isLoopbackHostHeader(host: string | undefined): boolean {
  return host !== undefined && LOOPBACK_HOST.test(host);
}

const digest = (token: string): Buffer => createHash('sha256').update(token).digest();

/**
 * Constant-time comparison of a presented token with an expected one, given as its SHA-256 digest
 * (hashing equalizes lengths; the expected digest is computed once, at start).
 */
function tokenMatches(presented: string | undefined, expectedDigest: Buffer | undefined): boolean {
  if (presented === undefined || expectedDigest === undefined) return false;
  return timingSafeEqual(digest(presented), expectedDigest);
}

/** The tokens of {@link AuthOptions}, digested once. */
interface Digests {
  readonly admin: Buffer;
  readonly decide: Buffer | undefined;
  readonly approver: Buffer | undefined;
}

/** Which token a refused request needed, and what it carried instead (never the token itself). */
export interface RefusedCredential {
  readonly method: string;
  /** The route's pattern (`/projects/:project/approvals/:id`), not the URL: no ids or query in the log. */
  readonly route: string;
  readonly remoteAddress: string | undefined;
  /** The token kinds that route accepts. */
  readonly expected: 'admin' | 'admin or approver' | 'decide or admin';
  /**
   * `none`: no Authorization header; `malformed`: not `Bearer <token>`; `unknown`: no token of this
   * service; else the kind of token it was.
   */
  readonly presented: 'none' | 'malformed' | 'unknown' | 'decide' | 'approver';
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

/** What a route requires, from its declared `access`, else from its URL and method (fail closed). */
function accessOfRoute(route: {
  readonly url: string;
  readonly method: string | readonly string[];
  readonly config?: { access?: RouteAccess } | undefined;
}): RouteAccess {
  const declared = route.config?.access;
  if (declared) return declared;
  const { url } = route;
  if (url === '/ui' || url.startsWith('/ui/') || url === '/docs' || url.startsWith('/docs/')) return 'public';
  const methods = typeof route.method === 'string' ? [route.method] : route.method;
  return methods.every((method) => method === 'GET' || method === 'HEAD') ? 'read' : 'admin';
}

const forbiddenHost = (): ApiError =>
  new ApiError(
    'forbidden_host',
    'This service only answers requests addressed to the loopback interface (Host: 127.0.0.1, localhost or [::1]).',
  );

/** The refusal of a request and the description of its credential for the log. */
interface Refusal {
  readonly error: ApiError;
  readonly expected: RefusedCredential['expected'];
  readonly presented: RefusedCredential['presented'];
}

const APPROVER_ONLY =
  'The approver token only answers approval requests (POST /projects/:project/approvals/:id with once, for up to 8 h, or deny).';

/** Why a request to a route of this access may not proceed for want of a token, or null when it may. */
function refusalOf(request: FastifyRequest, access: RouteAccess, digests: Digests): Refusal | null {
  if (access === 'public') return null;
  const token = bearerToken(request);
  if (access === 'read') {
    if (digests.decide === undefined) return null;
    if (tokenMatches(token, digests.decide) || tokenMatches(token, digests.admin)) return null;
    const presented = presentedKind(request, token, digests);
    if (presented === 'approver') {
      return {
        error: new ApiError('forbidden', `${APPROVER_ONLY} Reads need the decide token or the admin token.`),
        expected: 'decide or admin',
        presented,
      };
    }
    return {
      error: new ApiError('unauthorized', 'This route needs the decide token or the admin token (Authorization: Bearer <token>).'),
      expected: 'decide or admin',
      presented,
    };
  }
  if (tokenMatches(token, digests.admin)) return null;
  if (access === 'approve') {
    if (tokenMatches(token, digests.approver)) return null;
    return {
      error: new ApiError(
        'unauthorized',
        'Answering an approval request needs the admin token or the approver token (Authorization: Bearer <token>).',
      ),
      expected: 'admin or approver',
      presented: presentedKind(request, token, digests),
    };
  }
  const presented = presentedKind(request, token, digests);
  if (presented === 'approver') {
    return { error: new ApiError('forbidden', `${APPROVER_ONLY} This route needs the admin token.`), expected: 'admin', presented };
  }
  return {
    error: new ApiError('unauthorized', 'This route needs the admin token (Authorization: Bearer <token>).'),
    expected: 'admin',
    presented,
  };
}

/** What a refused request carried, for the log: which token kind it was, never the token. */
function presentedKind(request: FastifyRequest, token: string | undefined, digests: Digests): RefusedCredential['presented'] {
  if (request.headers.authorization === undefined) return 'none';
  if (token === undefined) return 'malformed';
  if (tokenMatches(token, digests.approver)) return 'approver';
  if (tokenMatches(token, digests.decide)) return 'decide';
  return 'unknown';
}

type OnRequestHook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/** Who a request's credentials make the caller (`GET /whoami`, and who answered an approval). */
export type Role = 'admin' | 'decide' | 'approver' | 'anonymous';

export interface Auth {
  /**
   * The role of the request's caller, or undefined when it may not ask: an `Authorization` header
   * that carries neither token, or none at all while a decide token is configured.
   */
  roleOf(request: FastifyRequest): Role | undefined;
}

/**
 * The Host check (when asked) is one app-wide `onRequest` hook, 404s included. The token check is
 * added to every route registered after this call (all of them: call it first), chosen once from
 * the route's access: a route with no token to check (an open read route when no decide token is
 * set) runs no token hook at all.
 */
export function installAuth(app: FastifyInstance, options: AuthOptions): Auth {
  if (options.adminToken === '') throw new Error('an admin token is required');
  const digests: Digests = {
    admin: digest(options.adminToken),
    decide: options.decideToken ? digest(options.decideToken) : undefined,
    approver: options.approverToken ? digest(options.approverToken) : undefined,
  };
  if (options.loopbackHostsOnly) {
    app.addHook('onRequest', (request, _reply, done) => {
      if (isLoopbackHostHeader(request.headers.host)) done();
      else done(forbiddenHost());
    });
  }
  const checkFor = (access: RouteAccess): OnRequestHook | undefined => {
    if (access === 'public' || (access === 'read' && digests.decide === undefined)) return undefined;
    // Callback style: no promise per request.
    return (request, _reply, done) => {
      const refusal = refusalOf(request, access, digests);
      if (refusal === null) {
        done();
        return;
      }
      options.onRefused?.({
        method: request.method,
        route: request.routeOptions.url ?? request.url.split('?')[0] ?? '',
        remoteAddress: request.socket.remoteAddress,
        expected: refusal.expected,
        presented: refusal.presented,
      });
      done(refusal.error);
    };
  };
  app.addHook('onRoute', (route) => {
    const check = checkFor(accessOfRoute(route));
    if (!check) return;
    const existing = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest];
    route.onRequest = [check, ...existing];
  });
  return {
    roleOf(request) {
      if (request.headers.authorization === undefined) return digests.decide === undefined ? 'anonymous' : undefined;
      const token = bearerToken(request);
      if (tokenMatches(token, digests.admin)) return 'admin';
      if (tokenMatches(token, digests.decide)) return 'decide';
      if (tokenMatches(token, digests.approver)) return 'approver';
      return undefined;
    },
  };
}
