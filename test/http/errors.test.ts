/** The framework-level errors keep the one error shape with a stable code. */
import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ADMIN_TOKEN, buildTestApp, demoProjects, suiteScope } from '../support/app.js';

const suite = suiteScope();
let app: FastifyInstance;
beforeAll(async () => {
  ({ app } = await buildTestApp(suite, demoProjects(), { rescanMs: 0 }));
});

describe('framework errors', () => {
  it('answers 415 unsupported_media_type to a body that is not JSON', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/decide',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'project=demo',
    });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toMatchObject({ error: { code: 'unsupported_media_type' } });
  });

  it('answers 400 invalid_request to malformed JSON and to an empty JSON body', async () => {
    for (const payload of ['{"project": ', '']) {
      const response = await app.inject({ method: 'POST', url: '/decide', headers: { 'content-type': 'application/json' }, payload });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ error: { code: 'invalid_request' } });
    }
  });

  it('answers 404 not_found to a route that does not exist, without echoing a token', async () => {
    const response = await app.inject({ method: 'GET', url: '/nope', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toMatchObject({ error: { code: 'not_found' } });
    expect(response.body).not.toContain(ADMIN_TOKEN);
  });

  it('serves the bundled demo projects: QA is denied idea_memory_write with a message naming tool, agent and project', async () => {
    const response = await app.inject({
      method: 'POST',
      url: '/decide',
      payload: { project: 'demo', requester: 'QA', tool: 'idea_memory_write' },
    });
    expect(response.json()).toMatchObject({ allow: false, reason: 'not_in_allowlist', source: 'builtin-read-only' });
    expect(response.json<{ message: string }>().message).toMatch(/idea_memory_write.*QA.*demo/);
    const granted = await app.inject({
      method: 'POST',
      url: '/decide',
      payload: { project: 'demo', requester: 'DevFrontend', tool: 'idea_ticket_update_carnet' },
    });
    expect(granted.json()).toMatchObject({ allow: true, source: 'agent-override' });
  });

  it('with loopbackHostsOnly, refuses a request addressed to another host name (DNS rebinding) with 403 forbidden_host', async (t) => {
    const { app: guarded } = await buildTestApp(t, demoProjects(), { rescanMs: 0, loopbackHostsOnly: true });
    const query = { project: 'demo', requester: 'QA', tool: 'idea_ticket_read' };
    for (const host of ['attacker.example', 'attacker.example:8787', '127.0.0.1.attacker.example', '10.0.0.1:8787']) {
      const response = await guarded.inject({ method: 'POST', url: '/decide', headers: { host }, payload: query });
      expect(response.statusCode, host).toBe(403);
      expect(response.json()).toMatchObject({ error: { code: 'forbidden_host' } });
    }
    for (const host of ['localhost:8787', '127.0.0.1:8787', '127.0.0.1', '[::1]:8787', 'LOCALHOST']) {
      const response = await guarded.inject({ method: 'POST', url: '/decide', headers: { host }, payload: query });
      expect(response.statusCode, host).toBe(200);
    }
  });
});
