/**
 * The approvals route tests' view of the real service (docs/api.md#approvals-and-temporary-grants): a test app
 * (test/support/app.ts) with the decide and approver tokens, and the approval calls the tests make
 * through `app.inject`.
 */
import type { LightMyRequestResponse } from 'fastify';
import type { Approval, ApprovalAnswerResponse, DecideQuery, Decision, Grant } from '../../schemas/index.js';
import { SYSTEM_CLOCK, type ServiceClock } from '../../server/clock.js';
import {
  ADMIN_TOKEN,
  APPROVER_TOKEN,
  DECIDE_TOKEN,
  buildTestApp,
  type ProjectFixtures,
  type TestApp,
  type TestAppOptions,
  type TestScope,
} from './app.js';

export { ADMIN_TOKEN, APPROVER_TOKEN, DECIDE_TOKEN };
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` } as const;
export const decider = { authorization: `Bearer ${DECIDE_TOKEN}` } as const;
export const approver = { authorization: `Bearer ${APPROVER_TOKEN}` } as const;

/** The system's clocks, moved forward by hand: time passing for the service, without waiting. */
export class MovableClock implements ServiceClock {
  private ahead = 0;
  readonly monotonic = (): number => SYSTEM_CLOCK.monotonic() + this.ahead;
  readonly wall = (): number => Date.now() + this.ahead;
  advance(ms: number): void {
    this.ahead += ms;
  }
}

export interface Service extends TestApp {
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

/** {@link buildTestApp} with the approval calls. */
export async function buildApprovalsApp(t: TestScope, projects: ProjectFixtures, options: TestAppOptions = {}): Promise<Service> {
  const started = await buildTestApp(t, projects, options);
  const { app } = started;
  const call: Service['call'] = (method, url, body, headers = admin) =>
    body === undefined
      ? app.inject({ method, url, headers })
      : app.inject({ method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  const ok = (response: LightMyRequestResponse, what: string): LightMyRequestResponse => {
    if (response.statusCode !== 200) throw new Error(`${what} answered ${response.statusCode}: ${response.body}`);
    return response;
  };
  const at = (project: string) => `/projects/${encodeURIComponent(project)}`;
  return {
    ...started,
    call,
    decide: async (query) => ok(await call('POST', '/decide', query), '/decide').json<Decision>(),
    answer: async (project, id, body) =>
      ok(await call('POST', `${at(project)}/approvals/${encodeURIComponent(id)}`, body), 'answer').json<ApprovalAnswerResponse>(),
    approvals: async (project, status) =>
      ok(await call('GET', `${at(project)}/approvals${status === undefined ? '' : `?status=${status}`}`), 'list').json<{
        approvals: Approval[];
      }>().approvals,
    grant: async (project, requester, tools, ttlSeconds) =>
      ok(await call('POST', `${at(project)}/grants`, { requester, tools, ttlSeconds }), 'grant').json<Grant>(),
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
