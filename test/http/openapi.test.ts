/** The OpenAPI document is generated from the route schemas: every route, its errors, examples. */
import { beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { APPROVER_TOKEN, buildTestApp, DECIDE_TOKEN, demoProjects, suiteScope } from '../support/app.js';

interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown; example?: unknown; examples?: unknown }> }>;
  requestBody?: { content: Record<string, { schema?: { examples?: unknown }; example?: unknown; examples?: unknown }> };
}

const suite = suiteScope();
let app: FastifyInstance;
let paths: Record<string, Record<string, Operation>>;
beforeAll(async () => {
  ({ app } = await buildTestApp(suite, demoProjects(), { rescanMs: 0 }));
  paths = (app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }).paths;
});

const PUBLIC = new Set(['/healthz', '/readyz']);

describe('OpenAPI document', () => {
  it('is served at /docs/json and documents every API route (and none of the UI pages)', async () => {
    const served = await app.inject({ method: 'GET', url: '/docs/json' });
    expect(served.statusCode).toBe(200);
    const operations = Object.entries(paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      [
        'POST /decide',
        'POST /decide/batch',
        'GET /catalog',
        'GET /projects',
        'GET /projects/{project}/mcp-tool-permissions',
        'PUT /projects/{project}/mcp-tool-permissions',
        'PUT /projects/{project}/mcp-tool-permissions/default',
        'DELETE /projects/{project}/mcp-tool-permissions/default',
        'PUT /projects/{project}/mcp-tool-permissions/agents/{agentId}',
        'DELETE /projects/{project}/mcp-tool-permissions/agents/{agentId}',
        'POST /projects/{project}/mcp-tool-permissions/preview',
        'GET /projects/{project}/requesters/{requester}/effective',
        'GET /projects/{project}/servers',
        'GET /projects/{project}/decisions',
        'GET /projects/{project}/ephemeral-policies',
        'PUT /projects/{project}/ephemeral-policies/{requester}',
        'DELETE /projects/{project}/ephemeral-policies/{requester}',
        'GET /healthz',
        'GET /readyz',
        'GET /whoami',
        'GET /metrics',
        'GET /events',
        'GET /projects/{project}/approvals',
        'GET /projects/{project}/approvals/{id}',
        'GET /projects/{project}/catalog',
        'POST /projects/{project}/approvals/{id}',
        'GET /projects/{project}/grants',
        'POST /projects/{project}/grants',
        'POST /projects/{project}/servers/{server}/discovered',
        'PUT /projects/{project}/servers/{server}/tools/{tool}',
        'DELETE /projects/{project}/grants/{id}',
      ].sort(),
    );
  });

  it('documents the 401 error shape on every guarded route, and the write errors on every write', () => {
    for (const [path, methods] of Object.entries(paths)) {
      if (PUBLIC.has(path) || path === '/metrics') continue;
      for (const [method, operation] of Object.entries(methods)) {
        const unauthorized = JSON.stringify(operation.responses['401'] ?? {});
        expect(unauthorized, `${method} ${path}`).toContain('"code"');
        // The preview writes nothing: it has none of the write errors.
        if (method !== 'get' && path.includes('mcp-tool-permissions') && !path.endsWith('/preview')) {
          for (const status of ['400', '404', '409', '412', '500'])
            expect(operation.responses[status], `${method} ${path} ${status}`).toBeDefined();
        }
      }
    }
  });

  it("lists /decide's and /decide/batch's 403 and 500 answers, with the error shape the service sends", async () => {
    for (const path of ['/decide', '/decide/batch']) {
      const { responses } = paths[path]?.post ?? { responses: {} };
      for (const status of ['403', '500']) expect(JSON.stringify(responses[status] ?? {}), `${path} ${status}`).toContain('"code"');
    }
    // Both 403s are real: a Host that is not loopback, and a token that may not decide.
    const guarded = await buildTestApp(suite, demoProjects(), {
      rescanMs: 0,
      decideToken: DECIDE_TOKEN,
      approverToken: APPROVER_TOKEN,
      loopbackHostsOnly: true,
    });
    const query = { project: 'demo', requester: 'QA', tool: 'idea_ticket_read' };
    const foreignHost = await guarded.app.inject({
      method: 'POST',
      url: '/decide',
      headers: { host: 'x', authorization: `Bearer ${DECIDE_TOKEN}` },
      payload: query,
    });
    expect([foreignHost.statusCode, foreignHost.json()]).toMatchObject([403, { error: { code: 'forbidden_host' } }]);
    const approver = await guarded.app.inject({
      method: 'POST',
      url: '/decide',
      headers: { host: '127.0.0.1', authorization: `Bearer ${APPROVER_TOKEN}` },
      payload: query,
    });
    expect([approver.statusCode, approver.json()]).toMatchObject([403, { error: { code: 'forbidden' } }]);
  });

  it('carries examples for the decision query and answer', () => {
    const decide = paths['/decide']?.post;
    expect(JSON.stringify(decide?.requestBody)).toContain('idea_ticket_update_carnet');
    expect(JSON.stringify(decide?.responses['200'])).toContain('not_in_allowlist');
    expect(JSON.stringify(paths['/projects/{project}/mcp-tool-permissions/agents/{agentId}']?.put?.requestBody)).toContain(
      'idea_ticket_list',
    );
  });
});
