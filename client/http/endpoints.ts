/**
 * Every route of the service the client sends requests to, in one table: its method, its path with
 * `:params` as docs/api.md writes it, and the check of a successful answer's body, compiled once per
 * process (well under a microsecond an answer). `PdpClient` sends them all through one path.
 */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import {
  CatalogResponseSchema,
  DecideBatchResponseSchema,
  DecisionSchema,
  EffectivePolicySchema,
  EphemeralDeletedSchema,
  EphemeralPoliciesResponseSchema,
  EphemeralPolicySchema,
  PermissionsViewSchema,
  ProjectsResponseSchema,
  RecentDecisionsResponseSchema,
} from '../../schemas/api.js';
import { PreviewResponseSchema } from '../../schemas/policy-as-code.js';
import {
  ApprovalAnswerResponseSchema,
  ApprovalSchema,
  ApprovalsResponseSchema,
  GrantSchema,
  GrantsResponseSchema,
} from '../../schemas/approvals.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface Endpoint<Route extends string = string, Answer extends TSchema = TSchema> {
  readonly method: Method;
  readonly route: Route;
  readonly answer: TypeCheck<Answer>;
  /**
   * Safe to send twice (a read, a decision query): retried once when a kept-alive socket turns out
   * closed. A write never is (a replayed write could answer 412).
   */
  readonly retryable: boolean;
}

function endpoint<const Route extends string, Answer extends TSchema>(
  method: Method,
  route: Route,
  answer: Answer,
  retryable = method === 'GET',
): Endpoint<Route, Answer> {
  return { method, route, answer: TypeCompiler.Compile(answer), retryable };
}

const permissions = '/projects/:project/mcp-tool-permissions';

export const ENDPOINTS = {
  // A decision answer is read by answers.ts: one about another call is denied, never trusted.
  decide: endpoint('POST', '/decide', DecisionSchema, true),
  decideBatch: endpoint('POST', '/decide/batch', DecideBatchResponseSchema, true),
  catalog: endpoint('GET', '/catalog', CatalogResponseSchema),
  listProjects: endpoint('GET', '/projects', ProjectsResponseSchema),
  getPermissions: endpoint('GET', permissions, PermissionsViewSchema),
  putDocument: endpoint('PUT', permissions, PermissionsViewSchema),
  putDefault: endpoint('PUT', `${permissions}/default`, PermissionsViewSchema),
  deleteDefault: endpoint('DELETE', `${permissions}/default`, PermissionsViewSchema),
  putAgent: endpoint('PUT', `${permissions}/agents/:agent`, PermissionsViewSchema),
  deleteAgent: endpoint('DELETE', `${permissions}/agents/:agent`, PermissionsViewSchema),
  preview: endpoint('POST', `${permissions}/preview`, PreviewResponseSchema),
  effective: endpoint('GET', '/projects/:project/requesters/:requester/effective', EffectivePolicySchema),
  recentDecisions: endpoint('GET', '/projects/:project/decisions', RecentDecisionsResponseSchema),
  listEphemeral: endpoint('GET', '/projects/:project/ephemeral-policies', EphemeralPoliciesResponseSchema),
  putEphemeral: endpoint('PUT', '/projects/:project/ephemeral-policies/:requester', EphemeralPolicySchema),
  deleteEphemeral: endpoint('DELETE', '/projects/:project/ephemeral-policies/:requester', EphemeralDeletedSchema),
  listApprovals: endpoint('GET', '/projects/:project/approvals', ApprovalsResponseSchema),
  getApproval: endpoint('GET', '/projects/:project/approvals/:id', ApprovalSchema),
  answerApproval: endpoint('POST', '/projects/:project/approvals/:id', ApprovalAnswerResponseSchema),
  listGrants: endpoint('GET', '/projects/:project/grants', GrantsResponseSchema),
  createGrant: endpoint('POST', '/projects/:project/grants', GrantSchema),
  revokeGrant: endpoint('DELETE', '/projects/:project/grants/:id', GrantSchema),
} as const;

/** The `:names` of a route: `'/projects/:project/grants/:id'` gives `'project' | 'id'`. */
export type ParamsOf<Route extends string> = Route extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamsOf<`/${Rest}`>
  : Route extends `${string}:${infer Name}`
    ? Name
    : never;

/** The path of `route` with its params filled in, each encoded (ids may hold `#`, spaces, `%` or `..`). */
export function pathOf<Route extends string>(route: Route, params: Record<ParamsOf<Route>, string>, query?: URLSearchParams): string {
  const values: Record<string, string> = params;
  const path = route.replace(/:(\w+)/g, (_match, name: string) => encodeURIComponent(values[name] ?? ''));
  return query === undefined || query.size === 0 ? path : `${path}?${query.toString()}`;
}
