/**
 * The real service for the approvals route tests (docs/api.md §11): `buildApp` on a fresh projects
 * root in a temp folder, optionally with a state folder, a decide token and a log capture; talked
 * to through `app.inject` or a real loopback port.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach, vi } from 'vitest';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Approval, ApprovalAnswerResponse, DecideQuery, Decision, Grant } from '../../schemas/index.js';
import { SYSTEM_CLOCK, type ServiceClock } from '../../server/approvals/clock.js';
import { buildApp } from '../../server/http/app.js';
import { makeTree, type ProjectFixture } from '../support/files.js';

export const ADMIN_TOKEN = 'approvals-admin-token-0123456789';
export const DECIDE_TOKEN = 'approvals-decide-token-9876543210';
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` } as const;
export const decider = { authorization: `Bearer ${DECIDE_TOKEN}` } as const;
export const APPROVER_TOKEN = 'approvals-approver-token-5555555555';
export const approver = { authorization: `Bearer ${APPROVER_TOKEN}` } as const;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** Raises the timeouts for a file whose tests start services on a loaded 2-core machine. */
export function setupServiceFile(): void {
  vi.setConfig({ testTimeout: 30_000, hookTimeout: 30_000 });
}

/** A fresh folder under the system temp folder (mode 0700), removed after the test. */
export async function tempDir(prefix = 'pdp-approvals-state-'): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), prefix));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

export interface ServiceOptions {
  readonly stateDir?: string;
  readonly decideToken?: string;
  readonly approverToken?: string;
  readonly approvalTtlSeconds?: number;
  /** Log lines are parsed into this array (level info and above). */
  readonly logs?: Record<string, unknown>[];
  /** An existing projects root (a restart on the same files); else one is made from the fixtures. */
  readonly root?: string;
  /** The time of approvals and grants (see {@link MovableClock}). */
  readonly clock?: ServiceClock;
}

/** The system's clocks, moved forward by hand: time passing for the service, without waiting. */
export class MovableClock implements ServiceClock {
  private ahead = 0;
  readonly monotonic = (): number => SYSTEM_CLOCK.monotonic() + this.ahead;
  readonly wall = (): number => Date.now() + this.ahead;
  advance(ms: number): void {
    this.ahead += ms;
  }
}

export interface Service {
  readonly app: FastifyInstance;
  readonly root: string;
  policyPath(project: string): string;
  /** One injected request; `headers` default to the admin token. */
  call(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<LightMyRequestResponse>;
  decide(query: DecideQuery): Promise<Decision>;
  /** The user's answer, expecting 200. */
  answer(project: string, id: string, body: { answer: string; ttlSeconds?: number }): Promise<ApprovalAnswerResponse>;
  approvals(project: string, status?: string): Promise<Approval[]>;
  grant(project: string, requester: string, tools: string[], ttlSeconds: number): Promise<Grant>;
  /** Starts listening on a loopback port; answers the base URL. */
  listen(): Promise<string>;
}

export async function startService(projects: Record<string, ProjectFixture>, options: ServiceOptions = {}): Promise<Service> {
  let root = options.root;
  if (root === undefined) {
    const tree = await makeTree(projects);
    cleanups.push(tree.remove);
    root = tree.root;
  }
  const logs = options.logs;
  const logger =
    logs === undefined
      ? false
      : pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as Record<string, unknown>) });
  const app = await buildApp({
    projectsRoot: root,
    adminToken: ADMIN_TOKEN,
    logger,
    ...(options.decideToken === undefined ? {} : { decideToken: options.decideToken }),
    ...(options.approverToken === undefined ? {} : { approverToken: options.approverToken }),
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
    ...(options.approvalTtlSeconds === undefined ? {} : { approvalTtlSeconds: options.approvalTtlSeconds }),
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  });
  cleanups.push(() => app.close());
  await app.ready();
  const call: Service['call'] = (method, url, body, headers = admin) =>
    body === undefined
      ? app.inject({ method, url, headers })
      : app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const expectOk = <T>(response: LightMyRequestResponse, what: string): T => {
    if (response.statusCode !== 200) throw new Error(`${what} answered ${response.statusCode}: ${response.body}`);
    return response.json<T>();
  };
  const at = (project: string) => `/projects/${encodeURIComponent(project)}`;
  const served = root;
  return {
    app,
    root: served,
    policyPath: (project) => path.join(served, project, '.ideai', 'mcp-tool-permissions.json'),
    call,
    decide: async (query) => expectOk<Decision>(await call('POST', '/decide', query), '/decide'),
    answer: async (project, id, body) =>
      expectOk<ApprovalAnswerResponse>(await call('POST', `${at(project)}/approvals/${encodeURIComponent(id)}`, body), 'answer'),
    approvals: async (project, status) =>
      expectOk<{ approvals: Approval[] }>(
        await call('GET', `${at(project)}/approvals${status === undefined ? '' : `?status=${status}`}`),
        'list',
      ).approvals,
    grant: async (project, requester, tools, ttlSeconds) =>
      expectOk<Grant>(await call('POST', `${at(project)}/grants`, { requester, tools, ttlSeconds }), 'grant'),
    listen: () => app.listen({ port: 0, host: '127.0.0.1' }),
  };
}

/** A policy document with a project default and overrides, each `{ allowedTools, askTools? }`. */
export function askDoc(
  projectDefault: { allowedTools: string[]; askTools?: string[] } | undefined,
  agents: Record<string, { allowedTools: string[]; askTools?: string[] }> = {},
): Record<string, unknown> {
  return {
    version: 1,
    ...(projectDefault === undefined ? {} : { projectDefault }),
    agents: Object.entries(agents).map(([agentId, policy]) => ({ agentId, policy })),
  };
}

/** The approval request a decision opened; throws when it opened none. */
export function approvalOf(decision: Decision): string {
  if (decision.reason !== 'approval_required' || decision.approval === undefined) {
    throw new Error(`expected approval_required with a request, got ${JSON.stringify(decision)}`);
  }
  return decision.approval.id;
}
