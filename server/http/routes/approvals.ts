/** Approval requests and temporary grants (docs/api.md#approvals-and-temporary-grants). */
import {
  ApprovalAnswerBodySchema,
  ApprovalAnswerResponseSchema,
  ApprovalParamsSchema,
  ApprovalSchema,
  ApprovalsQuerySchema,
  ApprovalsResponseSchema,
  ApprovalWaitQuerySchema,
  GrantCreateBodySchema,
  GrantParamsSchema,
  GrantSchema,
  GrantsResponseSchema,
  ProjectParamsSchema,
} from '../../../schemas/index.js';
import type { ApprovalsService } from '../../approvals/approvals-service.js';
import type { Auth } from '../auth.js';
import { emptyBodyIsNoBody, errors, type TypedApp } from './common.js';

interface ApprovalsRoutesOptions {
  readonly approvals: ApprovalsService;
  readonly auth: Auth;
}

export async function approvalsRoutes(app: TypedApp, options: ApprovalsRoutesOptions): Promise<void> {
  requestRoutes(app, options);
  grantRoutes(app, options.approvals);
}

/** The approval requests of a project: the list, one request (a long-poll), the answer. */
function requestRoutes(app: TypedApp, { approvals, auth }: ApprovalsRoutesOptions): void {
  app.get(
    '/projects/:project/approvals',
    {
      config: { access: 'read' },
      schema: {
        tags: ['approvals'],
        summary: 'Approval requests of a project, newest first',
        description: 'Pending requests and the most recently answered or expired ones; `status` keeps only those in that state.',
        params: ProjectParamsSchema,
        querystring: ApprovalsQuerySchema,
        response: { 200: ApprovalsResponseSchema, ...errors(400, 401, 404) },
      },
    },
    async (request) => ({ approvals: approvals.list(request.params.project, request.query.status) }),
  );

  app.get(
    '/projects/:project/approvals/:id',
    {
      config: { access: 'read' },
      schema: {
        tags: ['approvals'],
        summary: 'One approval request; with waitSeconds, a long-poll',
        description:
          'Answers at once when the request is no longer pending; else, with `waitSeconds` (at most 60), when it changes or after that long, with its state then.',
        params: ApprovalParamsSchema,
        querystring: ApprovalWaitQuerySchema,
        response: { 200: ApprovalSchema, ...errors(400, 401, 404) },
      },
    },
    async (request, reply) => {
      // A client that goes away stops the wait at once rather than holding a waiter for up to a minute.
      const gone = new AbortController();
      reply.raw.once('close', () => {
        gone.abort();
      });
      return approvals.wait(request.params.project, request.params.id, request.query.waitSeconds ?? 0, gone.signal);
    },
  );

  app.post(
    '/projects/:project/approvals/:id',
    {
      config: { access: 'approve' },
      schema: {
        tags: ['approvals'],
        summary: 'Answer an approval request (admin or approver token: an agent never approves itself)',
        description:
          '`once` allows the next matching call only; `for` creates a temporary grant of `ttlSeconds`; `always` adds the tool to the agent\'s allowedTools (creating its override from its effective policy) and takes it off askTools; `deny` refuses, and the same call answers `approval_denied` for 60 s. The approver token may answer `once`, `for` up to 28,800 s (8 h) and `deny` only (else 403 forbidden). `via: "elicitation"` says the user answered in the MCP host\'s own form; it is logged and listed with the answer, with `answeredBy`, the token that carried it. A request that is no longer pending answers 409 approval_closed.',
        params: ApprovalParamsSchema,
        body: ApprovalAnswerBodySchema,
        response: { 200: ApprovalAnswerResponseSchema, ...errors(400, 401, 403, 404, 409, 412, 413, 500) },
      },
    },
    async (request) => {
      const { answer, ttlSeconds, via } = request.body;
      // The access hook let only the admin or the approver token through.
      const by = auth.roleOf(request) === 'approver' ? 'approver' : 'admin';
      return approvals.answer(request.params.project, request.params.id, answer, ttlSeconds, { by, via });
    },
  );
}

/** The temporary grants of a project: the list, a new grant, a revocation. */
function grantRoutes(app: TypedApp, approvals: ApprovalsService): void {
  app.get(
    '/projects/:project/grants',
    {
      config: { access: 'read' },
      schema: {
        tags: ['grants'],
        summary: 'Live temporary grants of a project, newest first',
        params: ProjectParamsSchema,
        response: { 200: GrantsResponseSchema, ...errors(401, 404) },
      },
    },
    async (request) => ({ grants: approvals.listGrants(request.params.project) }),
  );

  app.post(
    '/projects/:project/grants',
    {
      config: { access: 'admin' },
      schema: {
        tags: ['grants'],
        summary: 'Let an agent call these tools for ttlSeconds',
        description: 'Agents only; the tools are distinct catalog names (else 400 invalid_tools). Survives a restart.',
        params: ProjectParamsSchema,
        body: GrantCreateBodySchema,
        response: { 200: GrantSchema, ...errors(400, 401, 404, 409, 413, 500) },
      },
    },
    async (request) => {
      const { requester, tools, ttlSeconds } = request.body;
      return approvals.createGrant(request.params.project, requester, tools, ttlSeconds);
    },
  );

  app.delete(
    '/projects/:project/grants/:id',
    {
      config: { access: 'admin' },
      onRequest: emptyBodyIsNoBody,
      schema: {
        tags: ['grants'],
        summary: 'Revoke a temporary grant: the next call is decided without it',
        description: 'Answers the revoked grant; an unknown or expired one is 404 not_found.',
        params: GrantParamsSchema,
        response: { 200: GrantSchema, ...errors(401, 404, 500) },
      },
    },
    async (request) => approvals.revokeGrant(request.params.project, request.params.id),
  );
}
