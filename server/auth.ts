/**
 * Bearer-token checks (SPEC §7). Each route declares `config.access`:
 * - `admin`: mutating routes, need the admin token;
 * - `read`: `/decide` and the GET routes, need the decide token or the admin token when a decide
 *   token is configured, else open;
 * - `public`: `/healthz`, `/readyz`, the static pages of `/ui` and `/docs`.
 * A route without `access` is treated as `admin` unless it is a GET (fail closed for new routes).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from './errors.js';

export type RouteAccess = 'admin' | 'read' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

export interface AuthOptions {
  readonly adminToken: string;
  readonly decideToken?: string | undefined;
  readonly loopbackHostsOnly?: boolean | undefined;
}

const LOOPBACK_HOST = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/** True when a `Host` header names the loopback interface (DNS-rebinding defence). */
export function isLoopbackHostHeader(host: string | undefined): boolean {
  return host !== undefined && LOOPBACK_HOST.test(host);
}

const digest = (token: string): Buffer => createHash('sha256').update(token).digest();

/**
 * Constant-time comparison of a presented token with an expected one, given as its SHA-256 digest
 * (hashing equalizes lengths; the expected digest is computed once, at start).
 */
export function tokenMatches(presented: string | undefined, expectedDigest: Buffer | undefined): boolean {
  if (presented === undefined || expectedDigest === undefined) return false;
  return timingSafeEqual(digest(presented), expectedDigest);
}

/** The tokens of {@link AuthOptions}, digested once. */
interface Digests {
  readonly admin: Buffer;
  readonly decide: Buffer | undefined;
}

function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}

function accessOf(request: FastifyRequest): RouteAccess {
  const declared = request.routeOptions.config.access;
  if (declared) return declared;
  const url = request.routeOptions.url ?? '';
  if (url === '/ui' || url.startsWith('/ui/') || url === '/docs' || url.startsWith('/docs/')) return 'public';
  return request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'admin';
}

/** Why a request may not proceed, or null when it may. Pure over the request and the options. */
export function refusalOf(request: FastifyRequest, options: AuthOptions, digests: Digests): AppError | null {
  if (options.loopbackHostsOnly && !isLoopbackHostHeader(request.headers.host)) {
    return new AppError(403, 'forbidden_host', 'This service only answers requests addressed to the loopback interface (Host: 127.0.0.1, localhost or [::1]).');
  }
  if (request.is404) return null;
  const access = accessOf(request);
  if (access === 'public') return null;
  const token = bearerToken(request);
  if (access === 'read') {
    if (digests.decide === undefined) return null;
    if (tokenMatches(token, digests.decide) || tokenMatches(token, digests.admin)) return null;
    return new AppError(401, 'unauthorized', 'This route needs the decide token or the admin token (Authorization: Bearer <token>).');
  }
  return tokenMatches(token, digests.admin)
    ? null
    : new AppError(401, 'unauthorized', 'This route needs the admin token (Authorization: Bearer <token>).');
}

/** Adds the app-wide `onRequest` check (callback style: no promise per request on the hot path). */
export function installAuth(app: FastifyInstance, options: AuthOptions): void {
  if (options.adminToken === '') throw new Error('an admin token is required');
  const digests: Digests = {
    admin: digest(options.adminToken),
    decide: options.decideToken ? digest(options.decideToken) : undefined,
  };
  app.addHook('onRequest', (request, _reply, done) => {
    const refusal = refusalOf(request, options, digests);
    if (refusal) done(refusal);
    else done();
  });
}
