/**
 * Every route of the service the client sends requests to, in one table: its method, its path with
 * `:params` as docs/api.md writes it, the check of a successful answer's body (compiled once per
 * process, well under a microsecond an answer), the schema of its request body, and what its admin
 * method answers. The admin methods of `PdpClient` take their types from this table:
 * `(...params, body?, options?)`, the route's params in order, then the body when it has one.
 */
import { DiscoveredAcceptedSchema, DiscoveredBodySchema, ServersResponseSchema } from '../../schemas/servers.js';
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import {
  AllowlistBodySchema,
  CatalogResponseSchema,
  DecideBatchBodySchema,
  DecideBatchResponseSchema,
  DecideQuerySchema,
  DecisionSchema,
  EffectivePolicySchema,
  EphemeralDeletedSchema,
  EphemeralPoliciesResponseSchema,
  EphemeralPolicyBodySchema,
  EphemeralPolicySchema,
  PermissionsViewSchema,
  ProjectsResponseSchema,
  RecentDecisionsResponseSchema,
  type PermissionsView,
} from '../../schemas/api.js';
import { PolicyDocumentSchema } from '../../schemas/policy.js';
import { PreviewBodySchema, PreviewResponseSchema } from '../../schemas/policy-as-code.js';
import {
  ApprovalAnswerBodySchema,
  ApprovalAnswerResponseSchema,
  ApprovalSchema,
  ApprovalsResponseSchema,
  GrantCreateBodySchema,
  GrantSchema,
  GrantsResponseSchema,
} from '../../schemas/approvals.js';

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** What a route's admin method sends and answers besides the answer's body itself. */
interface Shape {
  /** The request body's schema: the method's argument after the params. */
  readonly body?: TSchema;
  /** The method answers this list of the body (`{ projects: [...] }` gives the projects). */
  readonly list?: string;
  /** The method answers a {@link PermissionsResult}: the view with its `ETag`; a write takes `ifMatch`. */
  readonly etag?: true;
}

export interface Endpoint<
  M extends Method = Method,
  Route extends string = string,
  Answer extends TSchema = TSchema,
  S extends Shape = Shape,
> {
  readonly method: M;
  readonly route: Route;
  /** The names of the route's `:params`, in order. */
  readonly params: readonly string[];
  readonly answer: TypeCheck<Answer>;
  readonly shape: S;
  /**
   * Safe to send twice (a read, a decision query): retried once when a kept-alive socket turns out
   * closed. A write never is (a replayed write could answer 412).
   */
  readonly retryable: boolean;
}

function endpoint<const M extends Method, const Route extends string, Answer extends TSchema, const S extends Shape = Shape>(
  method: M,
  route: Route,
  answer: Answer,
  shape?: S,
  retryable: boolean = method === 'GET',
): Endpoint<M, Route, Answer, S> {
  const params = [...route.matchAll(/:(\w+)/g)].map((match) => match[1] ?? '');
  return { method, route, params, answer: TypeCompiler.Compile(answer), shape: shape ?? ({} as S), retryable };
}

const permissions = '/projects/:project/mcp-tool-permissions';
const views = { etag: true } as const;

export const ENDPOINTS = {
  // A decision answer is read by answers.ts: one about another call is denied, never trusted.
  decide: endpoint('POST', '/decide', DecisionSchema, { body: DecideQuerySchema }, true),
  decideBatch: endpoint('POST', '/decide/batch', DecideBatchResponseSchema, { body: DecideBatchBodySchema }, true),
  catalog: endpoint('GET', '/catalog', CatalogResponseSchema),
  listProjects: endpoint('GET', '/projects', ProjectsResponseSchema, { list: 'projects' }),
  getPermissions: endpoint('GET', permissions, PermissionsViewSchema, views),
  putDocument: endpoint('PUT', permissions, PermissionsViewSchema, { ...views, body: PolicyDocumentSchema }),
  putDefault: endpoint('PUT', `${permissions}/default`, PermissionsViewSchema, { ...views, body: AllowlistBodySchema }),
  deleteDefault: endpoint('DELETE', `${permissions}/default`, PermissionsViewSchema, views),
  putAgent: endpoint('PUT', `${permissions}/agents/:agent`, PermissionsViewSchema, { ...views, body: AllowlistBodySchema }),
  deleteAgent: endpoint('DELETE', `${permissions}/agents/:agent`, PermissionsViewSchema, views),
  preview: endpoint('POST', `${permissions}/preview`, PreviewResponseSchema, { body: PreviewBodySchema }),
  effective: endpoint('GET', '/projects/:project/requesters/:requester/effective', EffectivePolicySchema),
  recentDecisions: endpoint('GET', '/projects/:project/decisions', RecentDecisionsResponseSchema, { list: 'decisions' }),
  listEphemeral: endpoint('GET', '/projects/:project/ephemeral-policies', EphemeralPoliciesResponseSchema, { list: 'policies' }),
  putEphemeral: endpoint('PUT', '/projects/:project/ephemeral-policies/:requester', EphemeralPolicySchema, {
    body: EphemeralPolicyBodySchema,
  }),
  deleteEphemeral: endpoint('DELETE', '/projects/:project/ephemeral-policies/:requester', EphemeralDeletedSchema),
  listApprovals: endpoint('GET', '/projects/:project/approvals', ApprovalsResponseSchema, { list: 'approvals' }),
  getApproval: endpoint('GET', '/projects/:project/approvals/:id', ApprovalSchema),
  answerApproval: endpoint('POST', '/projects/:project/approvals/:id', ApprovalAnswerResponseSchema, { body: ApprovalAnswerBodySchema }),
  listGrants: endpoint('GET', '/projects/:project/grants', GrantsResponseSchema, { list: 'grants' }),
  createGrant: endpoint('POST', '/projects/:project/grants', GrantSchema, { body: GrantCreateBodySchema }),
  revokeGrant: endpoint('DELETE', '/projects/:project/grants/:id', GrantSchema),
  projectCatalog: endpoint('GET', '/projects/:project/catalog', CatalogResponseSchema),
  listServers: endpoint('GET', '/projects/:project/servers', ServersResponseSchema, { list: 'servers' }),
  reportDiscovered: endpoint('POST', '/projects/:project/servers/:server/discovered', DiscoveredAcceptedSchema, {
    body: DiscoveredBodySchema,
  }),
} as const;

/** The routes with an admin method: all but the decisions, which never throw. */
export type AdminName = Exclude<keyof typeof ENDPOINTS, 'decide' | 'decideBatch'>;

/** The permissions view of a project with its `ETag` (the revision, for `If-Match`). */
export interface PermissionsResult {
  permissions: PermissionsView;
  /** The revision from the `ETag` header, unquoted (falls back to the body's `revision`). */
  etag: string;
  revision: string;
}

/** Per-call options of `decide`, `decideBatch` and the admin methods. */
export interface CallOptions {
  /** The caller gave up (an MCP request cancelled, a turn abandoned): the call is denied at once and frees its place. */
  signal?: AbortSignal | undefined;
}

/** Conditional-write option of the permission writes: the `ETag` (revision) last read. */
export interface WriteOptions {
  ifMatch?: string | undefined;
}

/** The options of an admin method: a deadline of its own (default: the client's `adminTimeoutMs`), and `ifMatch` for a write. */
export type AdminOptions<Name extends AdminName = AdminName> = CallOptions & { timeoutMs?: number | undefined } & (Row<Name> extends {
    method: 'PUT' | 'DELETE';
    shape: { etag: true };
  }
    ? WriteOptions
    : unknown);

type Row<Name extends AdminName> = (typeof ENDPOINTS)[Name];

/** One string per `:param` of a route: `'/projects/:project/grants/:id'` gives `[project: string, id: string]`. */
type RouteArgs<Route extends string> = Route extends `${string}:${infer Name}/${infer Rest}`
  ? [...Named<Name>, ...RouteArgs<`/${Rest}`>]
  : Route extends `${string}:${infer Name}`
    ? Named<Name>
    : [];

/** The label an editor shows for a param (a tuple label cannot be computed from the route). */
type Named<Name extends string> = Name extends 'project'
  ? [project: string]
  : Name extends 'requester'
    ? [requester: string]
    : Name extends 'agent'
      ? [agentId: string]
      : Name extends 'id'
        ? [id: string]
        : [param: string];

/** The arguments of an admin method: the route's params in order, the body when the route takes one, then its options. */
export type AdminArgs<Name extends AdminName> = [
  ...RouteArgs<Row<Name>['route']>,
  ...(Row<Name>['shape'] extends { body: infer Body extends TSchema } ? [body: Static<Body>] : []),
  options?: AdminOptions<Name>,
];

type AnswerOf<Name extends AdminName> = Row<Name>['answer'] extends TypeCheck<infer Answer> ? Static<Answer> : never;

/** What an admin method answers: the answer's body, its one list, or the permissions view with its `ETag`. */
export type AdminResult<Name extends AdminName> = Row<Name>['shape'] extends { etag: true }
  ? PermissionsResult
  : Row<Name>['shape'] extends { list: infer List extends keyof AnswerOf<Name> }
    ? AnswerOf<Name>[List]
    : AnswerOf<Name>;

/** An admin method, as `PdpClient` builds it from its row. */
export type AdminMethod<Name extends AdminName> = (...args: AdminArgs<Name>) => Promise<AdminResult<Name>>;

/** The path of `endpoint` with its params filled in, each encoded (ids may hold `#`, spaces, `%` or `..`). */
export function pathOf(endpoint: Endpoint, params: readonly unknown[], query?: URLSearchParams): string {
  let index = 0;
  const path = endpoint.route.replace(/:\w+/g, () => encodeURIComponent((params[index++] ?? '') as string));
  return query === undefined || query.size === 0 ? path : `${path}?${query.toString()}`;
}
