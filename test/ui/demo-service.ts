/**
 * The real service for the browser tests: `buildApp` on a loopback port over a temp copy of the
 * demo projects, plus the API calls the tests make behind the page's back.
 */
import type { FastifyInstance } from 'fastify';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Decision, PermissionsView } from '../../schemas/index.js';
import { closableScope, demoProjects, startTestServer } from '../support/app.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DEMO_PROJECTS = path.join(repoRoot, 'examples', 'projects');
export const ADMIN_TOKEN = 'ui-test-admin-token';

export interface RunningService {
  app: FastifyInstance;
  baseUrl: string;
  projectsRoot: string;
  close(): Promise<void>;
  /** `POST /decide`; `args` are the call's arguments (read by conditions, docs/api.md#conditions-on-a-tools-arguments). */
  decide(project: string, requester: string, tool: string, args?: Record<string, unknown>): Promise<Decision>;
  permissions(project: string): Promise<{ view: PermissionsView; etag: string }>;
  /** An authenticated admin call, as another user (curl, another browser) would make it. */
  admin(method: string, urlPath: string, body?: unknown): Promise<Response>;
}

/** Starts the service over a temp copy of `examples/projects` (demo and sandbox). */
export async function startService(options: { decideToken?: string } = {}): Promise<RunningService> {
  const scope = closableScope();
  const {
    app,
    baseUrl,
    root: projectsRoot,
  } = await startTestServer(scope, demoProjects(), {
    adminToken: ADMIN_TOKEN,
    decideToken: options.decideToken,
    rescanMs: 0,
  });
  const authorization = { Authorization: `Bearer ${ADMIN_TOKEN}` };
  return {
    app,
    baseUrl,
    projectsRoot,
    close: () => scope.close(),
    async decide(project, requester, tool, args) {
      const response = await fetch(`${baseUrl}/decide`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...authorization },
        body: JSON.stringify(args === undefined ? { project, requester, tool } : { project, requester, tool, arguments: args }),
      });
      if (response.status !== 200) throw new Error(`/decide answered ${response.status}`);
      return (await response.json()) as Decision;
    },
    async permissions(project) {
      const response = await fetch(`${baseUrl}/projects/${encodeURIComponent(project)}/mcp-tool-permissions`, { headers: authorization });
      if (response.status !== 200) throw new Error(`GET permissions answered ${response.status}`);
      return { view: (await response.json()) as PermissionsView, etag: response.headers.get('etag') ?? '' };
    },
    admin(method, urlPath, body) {
      return fetch(baseUrl + urlPath, {
        method,
        headers: { ...authorization, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    },
  };
}
