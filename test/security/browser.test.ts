/**
 * A web page in the user's browser can send requests to 127.0.0.1:8787. The service sends no CORS
 * headers (so a page can neither read answers nor pass a JSON preflight) and accepts only JSON
 * bodies on writes, which a page cannot send cross-site without a preflight; writes also need
 * the admin token, which a page does not have.
 */
import type { FastifyInstance } from 'fastify';
import { beforeAll, describe, expect, it } from 'vitest';
import { changedPaths, policyText, snapshotTree } from '../support/files.js';
import { buildTestApp, suiteScope, type TestApp } from '../support/app.js';

const ADMIN = 'browser-admin-token-0123456789abcdef';
const ORIGIN = 'https://evil.example';
let app: FastifyInstance;
const suite = suiteScope();
let made: TestApp;

beforeAll(async () => {
  made = await buildTestApp(suite, { demo: policyText(undefined) }, { adminToken: ADMIN, rescanMs: 0 });
  ({ app } = made);
});

const corsHeaders = (headers: Record<string, unknown>): string[] =>
  Object.keys(headers).filter((name) => name.startsWith('access-control-'));

describe('cross-site requests from a browser', () => {
  it('answers no CORS preflight and sends no Access-Control-* header on any route', async () => {
    for (const url of [
      '/decide',
      '/decide/batch',
      '/projects/demo/mcp-tool-permissions/agents/Main',
      '/projects/demo/mcp-tool-permissions',
    ]) {
      const preflight = await app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: ORIGIN,
          'access-control-request-method': 'PUT',
          'access-control-request-headers': 'content-type, authorization',
        },
      });
      expect(preflight.statusCode, url).toBeGreaterThanOrEqual(400);
      expect(corsHeaders(preflight.headers), url).toEqual([]);
    }
    for (const url of ['/catalog', '/projects', '/projects/demo/mcp-tool-permissions', '/projects/demo/decisions']) {
      const response = await app.inject({ method: 'GET', url, headers: { origin: ORIGIN } });
      expect(corsHeaders(response.headers), url).toEqual([]);
    }
  });

  it('refuses the "simple" cross-site writes a page can send without a preflight, and writes nothing', async () => {
    const before = await snapshotTree(made.outer);
    const body = JSON.stringify({ allowedTools: ['idea_memory_write'] });
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      for (const [method, url] of [
        ['PUT', '/projects/demo/mcp-tool-permissions/agents/Main'],
        ['PUT', '/projects/demo/mcp-tool-permissions/default'],
        ['PUT', '/projects/demo/ephemeral-policies/ticket-assistant%3Ademo%3A1'],
        ['POST', '/projects/demo/mcp-tool-permissions/agents/Main'],
      ] as const) {
        const response = await app.inject({ method, url, headers: { origin: ORIGIN, 'content-type': contentType }, payload: body });
        expect(response.statusCode, `${method} ${url} ${contentType}`).toBeGreaterThanOrEqual(400);
        expect(response.statusCode).toBeLessThan(500);
        expect(corsHeaders(response.headers)).toEqual([]);
      }
    }
    expect(changedPaths(before, await snapshotTree(made.outer))).toEqual([]);
    // Nor can a page get a decision made (and logged) without a preflight: only JSON bodies are decided.
    const query = JSON.stringify({ project: 'demo', requester: 'Main', tool: 'idea_memory_write' });
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const response = await app.inject({
        method: 'POST',
        url: '/decide',
        headers: { origin: ORIGIN, 'content-type': contentType },
        payload: query,
      });
      expect([400, 415], contentType).toContain(response.statusCode);
    }
    const recent = await app.inject({ method: 'GET', url: '/projects/demo/decisions' });
    expect(recent.json()).toEqual({ decisions: [] });
    const decision = await app.inject({
      method: 'POST',
      url: '/decide',
      payload: { project: 'demo', requester: 'Main', tool: 'idea_memory_write' },
    });
    expect(decision.json()).toMatchObject({ allow: false });
  });
});
