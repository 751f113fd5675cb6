/**
 * The real app for a test: each test builds its own projects root in a fresh temp folder, starts
 * `buildApp` on it and talks to it through `app.inject` (route tests) or a real socket (`listen`).
 */
import path from 'node:path';
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ERROR_CODES, type Decision, type DecideQuery } from '../../schemas/index.js';
import { buildApp, type BuildAppOptions } from '../../server/http/app.js';
import { POLICY_FILE, makeTree, type ProjectFixture } from './files.js';

export const ADMIN_TOKEN = 'spec-admin-token-0123456789abcdef';
export const DECIDE_TOKEN = 'spec-decide-token-fedcba9876543210';

export interface SpecServer {
  /** Temp folder holding `projects/` and a sentinel file beside it (to detect writes outside). */
  outer: string;
  /** The projects root given to the app (`PDP_PROJECTS_ROOT`). */
  root: string;
  app: FastifyInstance;
  projectDir(project: string): string;
  policyPath(project: string): string;
}

const cleanups: Array<() => Promise<void>> = [];

/**
 * Call once per test file: registers the per-test cleanup (close apps, remove temp folders) and
 * raises the timeouts, since a test may poll for up to 5 s on a loaded 2-core machine.
 */
export function setupSpecFile(): void {
  vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });
  afterEach(async () => {
    while (cleanups.length > 0) {
      const cleanup = cleanups.pop();
      if (cleanup !== undefined) await cleanup();
    }
  });
}

/** Makes `<tmp>/projects/<id>/...` for every fixture, with a sentinel file beside the projects root. */
export async function makeProjectsRoot(
  projects: Record<string, ProjectFixture>,
  track: (cleanup: () => Promise<void>) => void = (cleanup) => cleanups.push(cleanup),
): Promise<{ outer: string; root: string }> {
  const tree = await makeTree(projects);
  track(tree.remove);
  return { outer: tree.outer, root: tree.root };
}

export interface StartOptions {
  decideToken?: string;
  /** The app's safety-net rescan period; hot-reload tests pass 0 so only the watcher can help. */
  rescanMs?: number;
  /** Called after the fixtures are written and before the app starts. */
  prepare?: (root: string) => Promise<void>;
  /** Passed to `buildApp` as `logger` (default false). */
  logger?: BuildAppOptions['logger'];
}

async function launch(
  projects: Record<string, ProjectFixture>,
  options: StartOptions,
  track: (cleanup: () => Promise<void>) => void,
): Promise<SpecServer> {
  const { outer, root } = await makeProjectsRoot(projects, track);
  if (options.prepare !== undefined) await options.prepare(root);
  const app = await buildApp({
    projectsRoot: root,
    adminToken: ADMIN_TOKEN,
    logger: options.logger ?? false,
    ...(options.decideToken === undefined ? {} : { decideToken: options.decideToken }),
    ...(options.rescanMs === undefined ? {} : { rescanMs: options.rescanMs }),
  });
  track(() => app.close());
  await app.ready();
  return {
    outer,
    root,
    app,
    projectDir: (project) => path.join(root, project),
    policyPath: (project) => path.join(root, project, '.ideai', POLICY_FILE),
  };
}

/** Builds the app on a fresh projects root for one test (closed after it) and waits until ready. */
export async function startServer(projects: Record<string, ProjectFixture>, options: StartOptions = {}): Promise<SpecServer> {
  return launch(projects, options, (cleanup) => cleanups.push(cleanup));
}

/**
 * One server for a whole `describe` block, for tests that only read fixed fixtures (starting the
 * app costs a few hundred ms). Returns a getter valid inside the tests.
 */
export function sharedServer(projects: Record<string, ProjectFixture>, options: StartOptions = {}): () => SpecServer {
  const own: Array<() => Promise<void>> = [];
  let server: SpecServer | undefined;
  beforeAll(async () => {
    server = await launch(projects, options, (cleanup) => own.push(cleanup));
  });
  afterAll(async () => {
    while (own.length > 0) await own.pop()?.();
  });
  return () => {
    if (server === undefined) throw new Error('shared server not started');
    return server;
  };
}

/** A second app on the same projects root (a restart): closed after the test. */
export async function restartOn(server: SpecServer): Promise<FastifyInstance> {
  const app = await buildApp({ projectsRoot: server.root, adminToken: ADMIN_TOKEN, logger: false });
  cleanups.push(() => app.close());
  await app.ready();
  return app;
}

/** Starts the app on a real loopback port; returns its base URL. */
export async function listenServer(server: SpecServer): Promise<string> {
  return server.app.listen({ port: 0, host: '127.0.0.1' });
}

// ------------------------------------------------------------------ HTTP helpers (inject)

export const adminHeaders = { authorization: `Bearer ${ADMIN_TOKEN}` } as const;

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** One injected request; `auth` adds the admin bearer token. */
export async function call(
  app: FastifyInstance,
  method: Method,
  url: string,
  options: { body?: unknown; auth?: boolean; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...(options.auth === true ? adminHeaders : {}), ...options.headers };
  if (options.body === undefined) return app.inject({ method, url, headers });
  return app.inject({
    method,
    url,
    headers: { 'content-type': 'application/json', ...headers },
    payload: typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
  });
}

/** POST /decide expecting 200; returns the decision. */
export async function decide(app: FastifyInstance, query: DecideQuery): Promise<Decision> {
  const response = await call(app, 'POST', '/decide', { body: query });
  if (response.statusCode !== 200) {
    throw new Error(`/decide answered ${response.statusCode}: ${response.body}`);
  }
  return response.json<Decision>();
}

/** POST /decide/batch expecting 200; returns the decisions. */
export async function decideBatch(app: FastifyInstance, queries: DecideQuery[]): Promise<Decision[]> {
  const response = await call(app, 'POST', '/decide/batch', { body: { queries } });
  if (response.statusCode !== 200) {
    throw new Error(`/decide/batch answered ${response.statusCode}: ${response.body}`);
  }
  return response.json<{ decisions: Decision[] }>().decisions;
}

export function errorCode(response: LightMyRequestResponse): unknown {
  const body = response.json<{ error?: { code?: unknown } }>();
  return body.error?.code;
}

export const permissionsUrl = (project: string): string => `/projects/${encodeURIComponent(project)}/mcp-tool-permissions`;
export const defaultUrl = (project: string): string => `${permissionsUrl(project)}/default`;
export const agentUrl = (project: string, agentId: string): string => `${permissionsUrl(project)}/agents/${encodeURIComponent(agentId)}`;
export const ephemeralUrl = (project: string, requester: string): string =>
  `/projects/${encodeURIComponent(project)}/ephemeral-policies/${encodeURIComponent(requester)}`;

/** True when `body` is `{ error: { code, message } }` with a code from the published list. */
export function isStableError(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const error = (body as { error?: unknown }).error;
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code) && typeof message === 'string';
}
