/** The permissions resource of a project: GET, the writes, the effective policy, recent decisions (docs/api.md#http-api). */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import {
  AgentParamsSchema,
  AllowlistBodySchema,
  EffectivePolicySchema,
  PermissionsViewSchema,
  PolicyDocumentSchema,
  ProjectParamsSchema,
  RecentDecisionsQuerySchema,
  RecentDecisionsResponseSchema,
  RequesterParamsSchema,
  type PermissionsView,
} from '../../../schemas/index.js';
import type { DecisionService } from '../../decisions/decision-service.js';
import type { PermissionsService } from '../../permissions/permissions-service.js';
import type { WriteOptions } from '../../projects/project.js';
import { emptyBodyIsNoBody, errors, ifMatchOf, setEtag, type TypedApp } from './common.js';

const BASE = '/projects/:project/mcp-tool-permissions';
const ifMatchHeader = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'Expected revision, e.g. "3f2a9c1b0d4e5f60"; a stale one gets 412.' })),
});

/** One write of the permissions resource: every one answers the new view with its ETag. */
interface WriteRoute<Params extends TObject, Body extends TObject | undefined> {
  readonly method: 'PUT' | 'DELETE';
  readonly url: string;
  readonly summary: string;
  readonly params: Params;
  readonly body: Body;
  readonly write: (
    permissions: PermissionsService,
    params: Static<Params>,
    body: Body extends TObject ? Static<Body> : undefined,
    options: WriteOptions,
  ) => Promise<PermissionsView>;
}

/** Keeps each route's own types where it is written; the loop below sees them erased. */
const writeRoute = <Params extends TObject, Body extends TObject | undefined>(route: WriteRoute<Params, Body>) =>
  route as unknown as WriteRoute<TObject, TObject | undefined>;

const WRITES = [
  writeRoute({
    method: 'PUT',
    url: BASE,
    summary: 'Replace the whole policy document (also repairs an invalid file)',
    params: ProjectParamsSchema,
    body: PolicyDocumentSchema,
    write: (permissions, { project }, document, options) => permissions.putDocument(project, document, options),
  }),
  writeRoute({
    method: 'PUT',
    url: `${BASE}/default`,
    summary: 'Set the project default allowlist (update_project_mcp_tool_permissions)',
    params: ProjectParamsSchema,
    body: AllowlistBodySchema,
    write: (permissions, { project }, lists, options) => permissions.putDefault(project, lists, options),
  }),
  writeRoute({
    method: 'DELETE',
    url: `${BASE}/default`,
    summary: 'Remove the project default (back to the canonical read-only set)',
    params: ProjectParamsSchema,
    body: undefined,
    write: (permissions, { project }, _body, options) => permissions.deleteDefault(project, options),
  }),
  writeRoute({
    method: 'PUT',
    url: `${BASE}/agents/:agentId`,
    summary: "Set an agent's override allowlist (update_agent_mcp_tool_permissions)",
    params: AgentParamsSchema,
    body: AllowlistBodySchema,
    write: (permissions, { project, agentId }, lists, options) => permissions.putAgent(project, agentId, lists, options),
  }),
  writeRoute({
    method: 'DELETE',
    url: `${BASE}/agents/:agentId`,
    summary: "Remove an agent's override: it inherits the project default again (idempotent)",
    params: AgentParamsSchema,
    body: undefined,
    write: (permissions, { project, agentId }, _body, options) => permissions.deleteAgent(project, agentId, options),
  }),
];

function sendView(reply: FastifyReply, view: PermissionsView): PermissionsView {
  setEtag(reply, view.revision);
  return view;
}

export async function permissionsRoutes(
  app: TypedApp,
  { permissions, decisions }: { permissions: PermissionsService; decisions: DecisionService },
): Promise<void> {
  app.get(
    BASE,
    {
      schema: {
        tags: ['permissions'],
        summary: 'Permissions of a project (get_mcp_tool_permissions)',
        params: ProjectParamsSchema,
        response: { 200: PermissionsViewSchema, ...errors(401, 404) },
      },
    },
    async (request, reply) => sendView(reply, permissions.view(request.params.project)),
  );

  for (const route of WRITES) {
    app.route({
      method: route.method,
      url: route.url,
      config: { access: 'admin' },
      // A DELETE takes no body, but some HTTP helpers send a JSON content type with an empty one.
      ...(route.body === undefined ? { onRequest: emptyBodyIsNoBody } : {}),
      schema: {
        tags: ['permissions'],
        summary: route.summary,
        params: route.params,
        headers: ifMatchHeader,
        ...(route.body === undefined ? {} : { body: route.body }),
        response: { 200: PermissionsViewSchema, ...errors(400, 401, 404, 409, 412, 413, 500) },
      },
      handler: async (request, reply) =>
        sendView(
          reply,
          await route.write(permissions, request.params, request.body as Static<TObject>, {
            ifMatch: ifMatchOf(request),
          }),
        ),
    });
  }

  app.get(
    '/projects/:project/requesters/:requester/effective',
    {
      schema: {
        tags: ['inspection'],
        summary: 'Effective allowlist of a requester (same resolution as /decide)',
        params: RequesterParamsSchema,
        response: { 200: EffectivePolicySchema, ...errors(401, 404) },
      },
    },
    async (request) => permissions.effective(request.params.project, request.params.requester),
  );

  app.get(
    '/projects/:project/decisions',
    {
      schema: {
        tags: ['inspection'],
        summary: 'Recent decisions of a project, newest first',
        params: ProjectParamsSchema,
        querystring: RecentDecisionsQuerySchema,
        response: { 200: RecentDecisionsResponseSchema, ...errors(400, 401, 404) },
      },
    },
    async (request) => ({
      decisions: decisions.recentDecisions(request.params.project, request.query.allow, request.query.limit ?? 50),
    }),
  );
}
