/**
 * The baseline servers the service is compared with (docs/api.md#targets):
 *  - `bare`: Fastify + the same TypeBox type provider and validator compiler + the same
 *    `DecideQuerySchema` body schema and `DecisionSchema` response schema, answering a constant
 *    decision (requester, tool and project echoed): the stack's own ceiling;
 *  - `node-http`: the same constant answer from a plain `node:http` handler (body read, parsed and
 *    checked against the same schema, answer made with JSON.stringify, no framework): a route with
 *    no framework, for scale (no target);
 *  - `cedar` / `cedar-text`: the same route deciding the same policy with `@cedar-policy/cedar-wasm`,
 *    either on a policy set parsed once (`statefulIsAuthorized`, the fastest way to use Cedar) or
 *    by handing the policy text to `isAuthorized` on every call (the plain API).
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import http from 'node:http';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import * as cedar from '@cedar-policy/cedar-wasm/nodejs';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { DecideQuerySchema, DecisionSchema, findTool, type DecideQuery, type Decision } from '../../schemas/index.js';
import { loadCedarProject, type CedarProject } from './cedar-policy.js';

const routeSchema = { body: DecideQuerySchema, response: { 200: DecisionSchema } } as const;

const CONSTANT_DECISION: Decision = {
  allow: true,
  reason: 'allowed',
  message: 'Tool idea_ticket_read is allowed for agent Main in project demo (policy: project-default).',
  source: 'project-default',
  requester: { id: 'Main', kind: 'agent' },
  tool: { name: 'idea_ticket_read', access: 'read' },
  project: 'demo',
  revision: '3f2a9c1b0d4e5f60',
  decisionId: '00000000-0000-4000-8000-000000000000',
};

/**
 * The constant decision, with the requester, tool and project of the query echoed: PdpClient
 * rightly refuses an `allow` about another call.
 */
function answerFor(query: DecideQuery): Decision {
  return {
    ...CONSTANT_DECISION,
    requester: { id: query.requester, kind: 'agent' },
    tool: { name: query.tool, access: 'read' },
    project: query.project,
  };
}

/** Fastify with the service's validation stack: the TypeBox type provider and its validator compiler. */
function typedFastify() {
  const app = Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  return app;
}

/** Bare Fastify route: body validated by the same schema, constant answer. */
export function buildBareApp(): FastifyInstance {
  const app = typedFastify();
  app.post('/decide', { schema: routeSchema }, async (request) => answerFor(request.body));
  app.get('/readyz', async () => ({ status: 'ok' }));
  return app;
}

/** What the server child needs of a server: a Fastify instance, or the plain node:http one below. */
export interface BenchServer {
  readonly server: http.Server;
  listen(options: { port: number; host: string }): Promise<unknown>;
  close(): Promise<unknown>;
}

const BODY_LIMIT = 1024 * 1024;

/**
 * Plain node:http route: the floor of any Node HTTP service answering the same queries. The body
 * is read, parsed and checked against the same `DecideQuerySchema` (compiled by TypeBox), and the
 * bare route's constant answer is sent; anything else gets a 4xx with no body.
 */
export function buildNodeHttpServer(): BenchServer {
  const isQuery = TypeCompiler.Compile(DecideQuerySchema);
  const fail = (response: http.ServerResponse, status: number): void => {
    response.writeHead(status, { 'content-length': '0' });
    response.end();
  };
  const server = http.createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== '/decide') return fail(response, 404);
    if (!request.headers['content-type']?.startsWith('application/json')) return fail(response, 415);
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
      if (body.length > BODY_LIMIT) request.destroy();
    });
    request.on('end', () => {
      let query: unknown;
      try {
        query = JSON.parse(body);
      } catch {
        return fail(response, 400);
      }
      if (!isQuery.Check(query)) return fail(response, 400);
      const payload = JSON.stringify(answerFor(query));
      response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(payload) });
      response.end(payload);
    });
  });
  return {
    server,
    listen: async ({ port, host }) => {
      server.listen(port, host);
      await once(server, 'listening');
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

interface LoadedProject extends CedarProject {
  readonly policySetId: string;
}

async function loadCedarProjects(projectsRoot: string, preparse: boolean): Promise<Map<string, LoadedProject>> {
  const projects = new Map<string, LoadedProject>();
  const entries = await readdir(projectsRoot, { withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    const compiled = await loadCedarProject(path.join(projectsRoot, entry.name), entry.name);
    const policySetId = `project:${entry.name}`;
    if (preparse) {
      const parsed = cedar.preparsePolicySet(policySetId, { staticPolicies: compiled.text });
      if (parsed.type !== 'success') throw new Error(`Cedar rejected the policy of ${entry.name}: ${JSON.stringify(parsed.errors)}`);
    }
    projects.set(entry.name, { ...compiled, policySetId });
  }
  return projects;
}

/** Fastify route deciding with Cedar; `preparse` selects the stateful (parsed once) API. */
export async function buildCedarApp(projectsRoot: string, preparse: boolean): Promise<FastifyInstance> {
  const projects = await loadCedarProjects(projectsRoot, preparse);
  const app = typedFastify();
  app.post('/decide', { schema: routeSchema }, async (request) => {
    const { project, requester, tool } = request.body;
    const loaded = projects.get(project);
    const access = findTool(tool)?.access ?? 'unknown';
    if (!loaded) {
      return decision(false, 'unknown_project', 'none', requester, tool, access, project, 'none');
    }
    const principal = { type: 'Agent', id: requester };
    const action = { type: 'Action', id: tool };
    const resource = { type: 'Project', id: project };
    const answer = preparse
      ? cedar.statefulIsAuthorized({
          principal,
          action,
          resource,
          context: {},
          preparsedPolicySetId: loaded.policySetId,
          entities: loaded.entities,
        })
      : cedar.isAuthorized({
          principal,
          action,
          resource,
          context: {},
          policies: { staticPolicies: loaded.text },
          entities: loaded.entities,
        });
    // Fail closed, like the service: a Cedar failure is a denial.
    const allow = answer.type === 'success' && answer.response.decision === 'allow';
    const viaOverride = answer.type === 'success' && answer.response.diagnostics.reason.some((id) => loaded.overridePolicyIds.has(id));
    const reason = allow ? 'allowed' : access === 'unknown' ? 'unknown_tool' : 'not_in_allowlist';
    return decision(
      allow,
      reason,
      viaOverride ? 'agent-override' : 'project-default',
      requester,
      tool,
      access,
      project,
      loaded.policySetId,
    );
  });
  app.get('/readyz', async () => ({ status: 'ok' }));
  return app;
}

function decision(
  allow: boolean,
  reason: Decision['reason'],
  source: Decision['source'],
  requester: string,
  tool: string,
  access: Decision['tool']['access'],
  project: string,
  revision: string,
): Decision {
  const verdict = allow ? 'allowed' : 'denied';
  return {
    allow,
    reason,
    message: `Tool ${tool} is ${verdict} for agent ${requester} in project ${project} (policy: ${source}).`,
    source,
    requester: { id: requester, kind: 'agent' },
    tool: { name: tool, access },
    project,
    revision,
    decisionId: randomUUID(),
  };
}
