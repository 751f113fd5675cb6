/**
 * The one way a test starts the real app: `buildTestApp(t, fixtures)` writes the fixtures as project
 * folders under a fresh temp folder, builds the app on them, and closes it and removes the folders
 * when `t` ends. Route tests talk to it through `app.inject`; `startTestServer` also listens on a
 * real loopback port for contract and end-to-end tests. `t` is the test's context, or a
 * {@link suiteScope} for an app shared by a whole `describe`. The service as a child process
 * (`server/main.ts`) is in service-process.ts.
 */
import diagnostics from 'node:diagnostics_channel';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll } from 'vitest';
import pino from 'pino';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ERROR_CODES, type Decision, type DecideQuery } from '../../schemas/index.js';
import { buildApp, type BuildAppOptions } from '../../server/http/app.js';
import { POLICY_FILE, makeTree, type ProjectFixture } from './files.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const DECIDE_TOKEN = 'test-decide-token-fedcba9876543210';
export const APPROVER_TOKEN = 'test-approver-token-5555555555555';

/** What cleans up after an app: a test's context `t` (vitest calls its hooks when the test ends), or a {@link suiteScope}. */
export interface TestScope {
  onTestFinished: (cleanup: () => Promise<void>) => void;
}

/** A scope whose cleanups run in `afterAll` of the enclosing `describe` (or file): call it there, not in a hook. */
export function suiteScope(): TestScope {
  const scope = closableScope();
  afterAll(() => scope.close());
  return scope;
}

/** A scope its owner ends by calling `close()` (a helper that outlives one test and has its own `close`). */
export function closableScope(): TestScope & { close: () => Promise<void> } {
  const cleanups: (() => Promise<void>)[] = [];
  return {
    onTestFinished: (cleanup) => void cleanups.push(cleanup),
    close: async () => {
      while (cleanups.length > 0) await cleanups.pop()?.();
    },
  };
}

/** Project folders by id; a string is the policy file's text, `null` an empty `.ideai/`. */
export type ProjectFixtures = Record<string, string | null | ProjectFixture>;

const DEMO_ROOT = path.resolve(import.meta.dirname, '..', '..', 'examples', 'projects');

/** The bundled demo projects (examples/projects: `demo` and `sandbox`) as fixtures, byte for byte. */
export function demoProjects(): ProjectFixtures {
  const read = (project: string, file: string) => readFileSync(path.join(DEMO_ROOT, project, '.ideai', file), 'utf8');
  return {
    demo: { policy: read('demo', POLICY_FILE), agents: read('demo', 'agents.json') },
    sandbox: { agents: read('sandbox', 'agents.json') },
  };
}

export interface TestProjects {
  /** Temp folder holding `projects/`, a sentinel file and an `etc/` decoy beside it (to detect writes outside). */
  outer: string;
  /** The projects root given to the app (`PDP_PROJECTS_ROOT`). */
  root: string;
  projectDir: (project: string) => string;
  policyPath: (project: string) => string;
}

/** Writes `<tmp>/projects/<id>/...` for every fixture (removed when `t` ends), for an app or a child process. */
export async function makeTestProjects(t: TestScope, fixtures: ProjectFixtures): Promise<TestProjects> {
  const tree = await makeTree(fixtures);
  t.onTestFinished(tree.remove);
  return {
    outer: tree.outer,
    root: tree.root,
    projectDir: (project) => path.join(tree.root, project),
    policyPath: tree.policyPath,
  };
}

export interface TestAppOptions extends Partial<Omit<BuildAppOptions, 'projectsRoot' | 'projects'>> {
  /** Called after the fixtures are written and before the app starts. */
  prepare?: (root: string) => Promise<void>;
  /** Serve these projects as they are (a restart on the same files); the fixtures are then not written. */
  projects?: TestProjects;
}

export interface TestApp extends TestProjects {
  app: FastifyInstance;
  /** Closes the app before the test ends (an outage); the scope's cleanup then does nothing more. */
  close: () => Promise<void>;
}

export interface TestServer extends TestApp {
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
}

/**
 * Builds the app (admin token {@link ADMIN_TOKEN}, silent logger unless given) on the fixtures in a
 * fresh temp folder and waits until it is ready; `t` closes it and removes the folder.
 */
export async function buildTestApp(t: TestScope, fixtures: ProjectFixtures, options: TestAppOptions = {}): Promise<TestApp> {
  const { prepare, projects: given, ...appOptions } = options;
  const projects = given ?? (await makeTestProjects(t, fixtures));
  if (prepare !== undefined) await prepare(projects.root);
  const app = await buildApp({ adminToken: ADMIN_TOKEN, logger: false, ...appOptions, projectsRoot: projects.root });
  let closed: Promise<void> | undefined;
  const close = () => (closed ??= app.close());
  t.onTestFinished(close);
  await app.ready();
  return { ...projects, app, close };
}

/** {@link buildTestApp}, listening on 127.0.0.1 (`port` 0 or absent: a free one). */
export async function startTestServer(
  t: TestScope,
  fixtures: ProjectFixtures,
  options: TestAppOptions & { port?: number } = {},
): Promise<TestServer> {
  const { port = 0, ...appOptions } = options;
  const started = await buildTestApp(t, fixtures, appOptions);
  const baseUrl = await started.app.listen({ port, host: '127.0.0.1' });
  return { ...started, baseUrl };
}

/**
 * Resolves once an app in this process has run a route handler up to its first `await` for a
 * request whose URL (path and query) matches (Fastify's `tracing:fastify.request.handler:end`
 * channel): a long-poll is then registered as waiting, an `/events` stream as open. Call it before
 * sending the request.
 */
export function handlerReached(matches: (url: string) => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const name = 'tracing:fastify.request.handler:end';
  return new Promise((resolve, reject) => {
    const listener = (message: unknown): void => {
      if (!matches((message as { request: { url: string } }).request.url)) return;
      diagnostics.unsubscribe(name, listener);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      diagnostics.unsubscribe(name, listener);
      reject(new Error(`timed out after ${timeoutMs} ms waiting for the handler of: ${what}`));
    }, timeoutMs);
    diagnostics.subscribe(name, listener);
  });
}

/** A logger for `options.logger` that parses every line it writes (level info and above) into `lines`. */
export function captureLogs(lines: Record<string, unknown>[]): pino.Logger {
  return pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) });
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
