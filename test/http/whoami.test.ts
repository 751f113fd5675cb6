/** GET /whoami tells the panel which token it holds (docs/api.md#security). */
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN as ADMIN, DECIDE_TOKEN as DECIDE, buildTestApp, suiteScope } from '../support/app.js';

const suite = suiteScope();
let open: FastifyInstance;
let guarded: FastifyInstance;
beforeAll(async () => {
  const first = await buildTestApp(suite, { demo: {} }, { rescanMs: 0 });
  open = first.app;
  ({ app: guarded } = await buildTestApp(suite, {}, { projects: first, decideToken: DECIDE, rescanMs: 0 }));
});

const whoami = (app: FastifyInstance, authorization?: string) =>
  app.inject({ method: 'GET', url: '/whoami', ...(authorization === undefined ? {} : { headers: { authorization } }) });

describe('GET /whoami', () => {
  it('names the role of the token: admin, decide, or anonymous without one where reads are open', async () => {
    for (const [app, authorization, role] of [
      [guarded, `Bearer ${ADMIN}`, 'admin'],
      [guarded, `bearer  ${DECIDE} `, 'decide'],
      [open, `Bearer ${ADMIN}`, 'admin'],
      [open, undefined, 'anonymous'],
    ] as const) {
      const response = await whoami(app, authorization);
      expect(response.statusCode, authorization).toBe(200);
      expect(response.json()).toEqual({ role });
    }
  });

  it('refuses a token that matches neither (even where reads are open), and no token where a decide token is needed', async () => {
    for (const [app, authorization] of [
      [open, 'Bearer not-a-token'],
      [open, `Bearer ${DECIDE}`], // no decide token is configured on this app
      [open, `Basic ${Buffer.from(`admin:${ADMIN}`).toString('base64')}`],
      [guarded, 'Bearer not-a-token'],
      [guarded, `Bearer ${ADMIN}x`],
      [guarded, undefined],
    ] as const) {
      const response = await whoami(app, authorization);
      expect(response.statusCode, authorization).toBe(401);
      expect(response.json()).toMatchObject({ error: { code: 'unauthorized' } });
      expect(response.body).not.toContain(ADMIN);
    }
  });

  it('is documented in the OpenAPI document with its answer schema', async () => {
    const document = (await open.inject({ method: 'GET', url: '/docs/json' })).json<{
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    }>();
    const operation = document.paths['/whoami']?.get;
    expect(JSON.stringify(operation?.responses['200'])).toContain('"anonymous"');
    expect(JSON.stringify(operation?.responses['401'])).toContain('"code"');
  });
});
