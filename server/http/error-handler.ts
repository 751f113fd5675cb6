/**
 * The one error handler and not-found handler: every error leaves as
 * `{ error: { code, message, details? } }` (docs/api.md#http-api), and this file alone chooses statuses.
 */
import type { FastifyError, FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ErrorBody } from '../../schemas/index.js';
import { ApiError, type ServiceErrorCode } from '../errors.js';

/** The status of every code a service or a project can throw; `invalid_ttl` is translated by the approvals service. */
const STATUS_OF: Record<Exclude<ServiceErrorCode, 'invalid_ttl'>, number> = {
  invalid_request: 400,
  invalid_tools: 400,
  invalid_conditions: 400,
  invalid_limits: 400,
  invalid_agent_id: 400,
  invalid_requester: 400,
  unauthorized: 401,
  forbidden: 403,
  forbidden_host: 403,
  not_found: 404,
  unknown_project: 404,
  limit_exceeded: 409,
  approval_closed: 409,
  policy_invalid: 409,
  write_conflict: 409,
  revision_mismatch: 412,
  payload_too_large: 413,
  unsupported_media_type: 415,
  ui_not_built: 503,
  too_many_streams: 429,
  rate_limited: 429,
  write_failed: 500,
  internal_error: 500,
};

/** Where an agent id sits in a validated body or URL: `/agents/<n>/agentId` of a policy document, `/agentId` of a route. */
const AGENT_ID_PATH = /^\/agents\/\d+\/agentId$|^\/agentId$/;

export function errorBody(code: string, message: string, details?: Record<string, unknown>): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

export function installErrorHandling(app: FastifyInstance, logger: Logger): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      if (error.code !== 'invalid_ttl') return reply.code(STATUS_OF[error.code]).send(errorBody(error.code, error.message, error.details));
      logger.error({ err: error, reqId: request.id, method: request.method, url: request.url }, 'unexpected error');
      return reply.code(500).send(errorBody('internal_error', 'Internal error; the request was not applied.'));
    }
    if (error.validation) {
      const errors = error.validation.slice(0, 10).map((issue) => ({ path: issue.instancePath, message: issue.message ?? 'invalid' }));
      const where = error.validationContext ?? 'request';
      // A bad agent id is `invalid_agent_id` in a whole policy document as in a URL, when agent
      // ids are all that is wrong (every issue, not only the ten shown).
      const onlyAgentIds = error.validation.length > 0 && error.validation.every((issue) => AGENT_ID_PATH.test(issue.instancePath));
      return reply
        .code(400)
        .send(
          errorBody(
            onlyAgentIds ? 'invalid_agent_id' : 'invalid_request',
            `Invalid ${where}: ${errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`,
            { in: where, errors },
          ),
        );
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send(errorBody('payload_too_large', 'The request body is too large.'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(errorBody('unsupported_media_type', 'Send the body as application/json.'));
      default:
        break;
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Bad JSON, `__proto__` keys, an empty body with a JSON content type, a bad URL encoding...
      return reply.code(400).send(errorBody('invalid_request', `Invalid request: ${error.message}`));
    }
    logger.error({ err: error, reqId: request.id, method: request.method, url: request.url }, 'unexpected error');
    return reply.code(500).send(errorBody('internal_error', 'Internal error; the request was not applied.'));
  });

  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0] ?? ''}.`)),
  );
}
