/**
 * Token checks are attached to each route when it is registered (server/http/auth.ts): this walks the
 * app's own route table (`printRoutes`, HEAD routes included), so a route added later without
 * `config.access`, or a plugin's route, cannot slip through. With a decide token configured, every
 * route but health, `/ui` and `/docs` answers 401 without a token; write routes refuse the decide
 * token too.
 */
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { policyText } from '../support/files.js';
import { buildTestApp, suiteScope } from '../support/app.js';

const ADMIN = 'route-guards-admin-token-0123456789';
const DECIDE = 'route-guards-decide-token-0123456789';
const APPROVER = 'route-guards-approver-token-0123456789';
/** The one route the approver token may call. */
const ANSWER = { method: 'POST', pattern: '/projects/:project/approvals/:id' };
const PUBLIC = [/^\/healthz$/, /^\/readyz$/, /^\/ui(\/|$)/, /^\/docs(\/|$)/];

let app: FastifyInstance;
const suite = suiteScope();

beforeAll(async () => {
  ({ app } = await buildTestApp(
    suite,
    { demo: policyText(undefined, {}) },
    { adminToken: ADMIN, decideToken: DECIDE, approverToken: APPROVER, rescanMs: 0 },
  ));
});

/** (method, pattern) pairs from Fastify's printed route tree. */
function routeTable(printed: string): { method: string; pattern: string }[] {
  const routes: { method: string; pattern: string }[] = [];
  const stack: string[] = [];
  for (const line of printed.split('\n')) {
    const match = /^([│ ├└─]*)(\S.*?) \(([A-Z, ]+)\)$/.exec(line);
    if (!match) continue;
    const depth = Math.floor((match[1] ?? '').length / 4);
    stack.length = depth;
    stack.push(match[2] ?? '');
    const pattern = stack.join('').replace(/\/\//g, '/');
    for (const method of (match[3] ?? '').split(', ')) routes.push({ method, pattern });
  }
  return routes;
}

const sample = (pattern: string): string =>
  pattern
    .replace(':project', 'demo')
    .replace(':agentId', 'QA')
    .replace(':requester', encodeURIComponent('ticket-assistant:demo:82'))
    .replace(':id', 'no-such-id')
    .replace('*', 'x');

describe('every route of the app is guarded unless it is public', () => {
  it('finds the route table (sanity: the walk below is not empty)', () => {
    const routes = routeTable(app.printRoutes({ commonPrefix: false }));
    expect(routes.length).toBeGreaterThan(30);
    expect(routes).toContainEqual({ method: 'POST', pattern: '/decide' });
    expect(routes).toContainEqual({ method: 'HEAD', pattern: '/projects/:project/mcp-tool-permissions' });
    expect(routes).toContainEqual({ method: 'DELETE', pattern: '/projects/:project/mcp-tool-permissions/agents/:agentId' });
  });

  it('answers 401 without a token, and 401 to the decide token on every write route', async () => {
    const routes = routeTable(app.printRoutes({ commonPrefix: false }));
    for (const { method, pattern } of routes) {
      // An open event stream never ends under inject: ask about an unknown project, which answers 404 once past the token check.
      const url = pattern === '/events' ? '/events?project=no-such-project' : sample(pattern);
      const isPublic = PUBLIC.some((regex) => regex.test(pattern));
      const bare = await app.inject({ method: method as 'GET', url, headers: { host: '127.0.0.1' } });
      if (isPublic) {
        expect(bare.statusCode, `${method} ${pattern}`).not.toBe(401);
        continue;
      }
      expect(bare.statusCode, `${method} ${pattern} without a token`).toBe(401);
      const withDecide = await app.inject({
        method: method as 'GET',
        url,
        headers: { host: '127.0.0.1', authorization: `Bearer ${DECIDE}` },
      });
      // A preview reads: it writes nothing, so the decide token may ask for one. A report of discovered
      // tools changes no decision: the proxy sends it with the decide token.
      const decideMay =
        pattern.startsWith('/decide') ||
        pattern.endsWith('/mcp-tool-permissions/preview') ||
        pattern.endsWith('/servers/:server/discovered');
      if (method === 'GET' || method === 'HEAD' || decideMay) {
        expect(withDecide.statusCode, `${method} ${pattern} with the decide token`).not.toBe(401);
      } else {
        expect(withDecide.statusCode, `${method} ${pattern} with the decide token`).toBe(401);
      }
    }
  });

  it('answers 403 forbidden to the approver token everywhere but the answer to an approval request', async () => {
    const routes = routeTable(app.printRoutes({ commonPrefix: false }));
    expect(routes).toContainEqual(ANSWER);
    for (const { method, pattern } of routes) {
      if (PUBLIC.some((regex) => regex.test(pattern))) continue;
      const url = pattern === '/events' ? '/events?project=no-such-project' : sample(pattern);
      const hasBody = !(method === 'GET' || method === 'HEAD' || method === 'DELETE');
      const headers = { host: '127.0.0.1', authorization: `Bearer ${APPROVER}` };
      const response = hasBody
        ? await app.inject({
            method: method as 'POST',
            url,
            headers: { ...headers, 'content-type': 'application/json' },
            payload: JSON.stringify({ answer: 'once' }),
          })
        : await app.inject({ method: method as 'GET', url, headers });
      if (pattern === '/whoami') {
        if (method === 'GET') expect(response.json()).toEqual({ role: 'approver' });
        continue;
      }
      if (method === ANSWER.method && pattern === ANSWER.pattern) {
        // Past the token check: the request id is unknown.
        expect(response.statusCode, `${method} ${pattern} with the approver token`).toBe(404);
        continue;
      }
      expect(response.statusCode, `${method} ${pattern} with the approver token`).toBe(403);
      if (method !== 'HEAD') {
        const { error } = response.json<{ error: { code: string; message: string } }>();
        expect(error.code).toBe('forbidden');
        expect(error.message).toMatch(/^The approver token only answers approval requests/);
      }
    }
  });
});
