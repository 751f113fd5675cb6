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

/** Constant-time comparison of a presented token with the expected one (hashing first equalizes lengths). */
export function tokenMatches(presented: string | undefined, expected: string): boolean {
  if (presented === undefined || expected === '') return false;
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
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

/** Adds the app-wide `onRequest` check. Unmatched routes (404) pass: they answer nothing. */
export function installAuth(app: FastifyInstance, options: AuthOptions): void {
  if (options.adminToken === '') throw new Error('an admin token is required');
  app.addHook('onRequest', async (request) => {
    if (options.loopbackHostsOnly && !isLoopbackHostHeader(request.headers.host)) {
      throw new AppError(403, 'forbidden_host', 'This service only answers requests addressed to the loopback interface (Host: 127.0.0.1, localhost or [::1]).');
    }
    if (request.is404) return;
    const access = accessOf(request);
    if (access === 'public') return;
    const token = bearerToken(request);
    if (access === 'read') {
      if (!options.decideToken) return;
      if (tokenMatches(token, options.decideToken) || tokenMatches(token, options.adminToken)) return;
      throw new AppError(401, 'unauthorized', 'This route needs the decide token or the admin token (Authorization: Bearer <token>).');
    }
    if (!tokenMatches(token, options.adminToken)) {
      throw new AppError(401, 'unauthorized', 'This route needs the admin token (Authorization: Bearer <token>).');
    }
  });
}
