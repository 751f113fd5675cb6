/** The permissions resource of a project: GET, the writes, the effective policy, recent decisions (SPEC §5). */
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
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { emptyBodyIsNoBody, errors, ifMatchOf, setEtag, type RouteDeps, type TypedApp } from './common.js';

const BASE = '/projects/:project/mcp-tool-permissions';
const WRITE_ERRORS = errors(400, 401, 404, 409, 412, 413, 500);
const ifMatchHeader = Type.Object({
  'if-match': Type.Optional(Type.String({ description: 'Expected revision, e.g. "3f2a9c1b0d4e5f60"; a stale one gets 412.' })),
});

function sendView(reply: FastifyReply, view: PermissionsView): PermissionsView {
  setEtag(reply, view.revision);
  return view;
}

export async function permissionsRoutes(app: TypedApp, { service }: RouteDeps): Promise<void> {
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
    async (request, reply) => sendView(reply, service.view(request.params.project)),
  );

  app.put(
    BASE,
    {
      config: { access: 'admin' },
      schema: {
        tags: ['permissions'],
        summary: 'Replace the whole policy document (also repairs an invalid file)',
        params: ProjectParamsSchema,
        headers: ifMatchHeader,
        body: PolicyDocumentSchema,
        response: { 200: PermissionsViewSchema, ...WRITE_ERRORS },
      },
    },
    async (request, reply) =>
      sendView(reply, await service.putDocument(request.params.project, request.body, { ifMatch: ifMatchOf(request) })),
  );

  app.put(
    `${BASE}/default`,
    {
      config: { access: 'admin' },
      schema: {
        tags: ['permissions'],
        summary: 'Set the project default allowlist (update_project_mcp_tool_permissions)',
        params: ProjectParamsSchema,
        headers: ifMatchHeader,
        body: AllowlistBodySchema,
        response: { 200: PermissionsViewSchema, ...WRITE_ERRORS },
      },
    },
    async (request, reply) =>
      sendView(reply, await service.putDefault(request.params.project, request.body.allowedTools, { ifMatch: ifMatchOf(request) })),
  );

  app.delete(
    `${BASE}/default`,
    {
      config: { access: 'admin' },
      onRequest: emptyBodyIsNoBody,
      schema: {
        tags: ['permissions'],
        summary: 'Remove the project default (back to the canonical read-only set)',
        params: ProjectParamsSchema,
        headers: ifMatchHeader,
        response: { 200: PermissionsViewSchema, ...WRITE_ERRORS },
      },
    },
    async (request, reply) => sendView(reply, await service.deleteDefault(request.params.project, { ifMatch: ifMatchOf(request) })),
  );

  app.put(
    `${BASE}/agents/:agentId`,
    {
      config: { access: 'admin' },
      schema: {
        tags: ['permissions'],
        summary: "Set an agent's override allowlist (update_agent_mcp_tool_permissions)",
        params: AgentParamsSchema,
        headers: ifMatchHeader,
        body: AllowlistBodySchema,
        response: { 200: PermissionsViewSchema, ...WRITE_ERRORS },
      },
    },
    async (request, reply) =>
      sendView(
        reply,
        await service.putAgent(request.params.project, request.params.agentId, request.body.allowedTools, { ifMatch: ifMatchOf(request) }),
      ),
  );

  app.delete(
    `${BASE}/agents/:agentId`,
    {
      config: { access: 'admin' },
      onRequest: emptyBodyIsNoBody,
      schema: {
        tags: ['permissions'],
        summary: "Remove an agent's override: it inherits the project default again (idempotent)",
        params: AgentParamsSchema,
        headers: ifMatchHeader,
        response: { 200: PermissionsViewSchema, ...WRITE_ERRORS },
      },
    },
    async (request, reply) =>
      sendView(reply, await service.deleteAgent(request.params.project, request.params.agentId, { ifMatch: ifMatchOf(request) })),
  );

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
    async (request) => service.effective(request.params.project, request.params.requester),
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
      decisions: service.recentDecisions(request.params.project, request.query.allow, request.query.limit ?? 50),
    }),
  );
}
