/**
 * Helpers of the acceptance suite written from SPEC.md §3–§7. Every test builds its own projects
 * root in a fresh temp folder, starts the real app on it (`buildApp`) and talks to it through
 * `app.inject` (route tests) or a real socket (`listen` + fetch, hot-reload tests).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, vi } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { buildApp, type BuildAppOptions } from '../../server/http/app.js';
import type { Decision, DecideQuery } from '../../schemas/index.js';

export const ADMIN_TOKEN = 'spec-admin-token-0123456789abcdef';
export const DECIDE_TOKEN = 'spec-decide-token-fedcba9876543210';
export const POLICY_FILE = 'mcp-tool-permissions.json';

/** What to put in one project folder. A string is written verbatim; anything else as JSON. */
export interface ProjectFixture {
  /** `.ideai/mcp-tool-permissions.json`; absent = no file. */
  policy?: unknown;
  /** `.ideai/agents.json`; absent = no file. */
  agents?: unknown;
  /** Create `.ideai/` even without any file in it. */
  ideai?: boolean;
}

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

function serialize(content: unknown): string {
  return typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`;
}

/** Writes one project folder (creating it) under `root`. */
export async function writeProject(root: string, id: string, fixture: ProjectFixture = {}): Promise<string> {
  const dir = path.join(root, id);
  await mkdir(dir, { recursive: true });
  if (fixture.policy !== undefined || fixture.agents !== undefined || fixture.ideai === true) {
    await mkdir(path.join(dir, '.ideai'), { recursive: true });
  }
  if (fixture.policy !== undefined) await writeFile(path.join(dir, '.ideai', POLICY_FILE), serialize(fixture.policy));
  if (fixture.agents !== undefined) await writeFile(path.join(dir, '.ideai', 'agents.json'), serialize(fixture.agents));
  return dir;
}

/** Makes `<tmp>/projects/<id>/...` for every fixture and a sentinel file in `<tmp>`. */
export async function makeProjectsRoot(
  projects: Record<string, ProjectFixture>,
  track: (cleanup: () => Promise<void>) => void = (cleanup) => cleanups.push(cleanup),
): Promise<{ outer: string; root: string }> {
  const outer = await mkdtemp(path.join(os.tmpdir(), 'pdp-spec-'));
  track(() => rm(outer, { recursive: true, force: true }));
  const root = path.join(outer, 'projects');
  await mkdir(root);
  await writeFile(path.join(outer, 'sentinel.txt'), 'do not touch\n');
  for (const [id, fixture] of Object.entries(projects)) await writeProject(root, id, fixture);
  return { outer, root };
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

// ------------------------------------------------------------------ files and time

/** A policy document in the file format of SPEC §3. */
export function policyDoc(
  projectDefault: readonly string[] | undefined,
  agents: Record<string, readonly string[]> = {},
): Record<string, unknown> {
  return {
    version: 1,
    ...(projectDefault === undefined ? {} : { projectDefault: { allowedTools: [...projectDefault] } }),
    agents: Object.entries(agents).map(([agentId, allowedTools]) => ({ agentId, policy: { allowedTools: [...allowedTools] } })),
  };
}

export async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** Every file under `dir` (recursive) with its size and mtime: to prove nothing else was touched. */
export async function snapshotTree(dir: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  async function walk(current: string): Promise<void> {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      const info = await stat(full);
      result[path.relative(dir, full)] = entry.isDirectory() ? 'dir' : `${info.size}:${info.mtimeMs}`;
      if (entry.isDirectory()) await walk(full);
    }
  }
  await walk(dir);
  return result;
}

/** Polls `probe` every `intervalMs` until it returns true or `timeoutMs` passes (then throws). */
export async function waitFor(probe: () => Promise<boolean>, what: string, timeoutMs = 5_000, intervalMs = 10): Promise<number> {
  const started = Date.now();
  for (;;) {
    if (await probe()) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

// ------------------------------------------------------------------ the catalog, copied from SPEC §2

/** The 9 read tools of SPEC §2 (the canonical read-only set), in catalog order. */
export const READ_TOOLS = [
  'idea_list_agents',
  'idea_context_read',
  'idea_memory_read',
  'idea_skill_read',
  'idea_workstate_read',
  'idea_ticket_read',
  'idea_ticket_list',
  'idea_ticket_read_carnet',
  'idea_sprint_list',
] as const;

/** The 16 write/action tools of SPEC §2, in catalog order. */
export const WRITE_TOOLS = [
  'idea_ask_agent',
  'idea_launch_agent',
  'idea_stop_agent',
  'idea_update_context',
  'idea_context_propose',
  'idea_memory_write',
  'idea_ticket_create',
  'idea_ticket_update',
  'idea_ticket_update_status',
  'idea_ticket_update_priority',
  'idea_ticket_update_carnet',
  'idea_ticket_link',
  'idea_ticket_unlink',
  'idea_run_in_background',
  'idea_workstate_set',
  'idea_create_skill',
] as const;

/** All 25 tools in catalog order. */
export const ALL_TOOLS: readonly string[] = [...READ_TOOLS, ...WRITE_TOOLS];

/** Sorts names in catalog order (the order every list of the API uses). */
export function inCatalogOrder(names: Iterable<string>): string[] {
  return [...new Set(names)].filter((name) => ALL_TOOLS.includes(name)).sort((a, b) => ALL_TOOLS.indexOf(a) - ALL_TOOLS.indexOf(b));
}
