/** Ephemeral ticket-assistant policies (docs/api.md#ephemeral-ticket-assistant-policies). */
import {
  EphemeralDeletedSchema,
  EphemeralPoliciesResponseSchema,
  EphemeralPolicyBodySchema,
  EphemeralPolicySchema,
  ProjectParamsSchema,
  RequesterParamsSchema,
} from '../../../schemas/index.js';
import type { PermissionsService } from '../../permissions/permissions-service.js';
import { emptyBodyIsNoBody, errors, type TypedApp } from './common.js';

export async function ephemeralRoutes(app: TypedApp, { permissions }: { permissions: PermissionsService }): Promise<void> {
  app.get(
    '/projects/:project/ephemeral-policies',
    {
      schema: {
        tags: ['ephemeral'],
        summary: 'Live ephemeral ticket-assistant policies of a project',
        params: ProjectParamsSchema,
        response: { 200: EphemeralPoliciesResponseSchema, ...errors(401, 404) },
      },
    },
    async (request) => ({ policies: permissions.listEphemeral(request.params.project) }),
  );

  app.put(
    '/projects/:project/ephemeral-policies/:requester',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['ephemeral'],
        summary: 'Register the short-lived allowlist of a ticket-assistant:<project>:<issue> requester',
        params: RequesterParamsSchema,
        body: EphemeralPolicyBodySchema,
        response: { 200: EphemeralPolicySchema, ...errors(400, 401, 404, 409, 413) },
      },
    },
    async (request) => {
      const { allowedTools, boundIssue, ttlSeconds } = request.body;
      return permissions.putEphemeral(request.params.project, request.params.requester, allowedTools, boundIssue, ttlSeconds);
    },
  );

  app.delete(
    '/projects/:project/ephemeral-policies/:requester',
    {
      config: { access: 'admin' },
      onRequest: emptyBodyIsNoBody,
      schema: {
        tags: ['ephemeral'],
        summary: 'Remove an ephemeral policy (idempotent): the requester is back to read-only',
        params: RequesterParamsSchema,
        response: { 200: EphemeralDeletedSchema, ...errors(400, 401, 404) },
      },
    },
    async (request) => {
      permissions.deleteEphemeral(request.params.project, request.params.requester);
      return { deleted: true } as const;
    },
  );
}
