/** The one error handler and not-found handler: every error leaves as `{ error: { code, message, details? } }`. */
import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { ErrorBody, ErrorCode } from '../../schemas/index.js';
import { AppError } from '../errors.js';

/** Where an agent id sits in a validated body or URL: `/agents/<n>/agentId` of a policy document, `/agentId` of a route. */
const AGENT_ID_PATH = /^\/agents\/\d+\/agentId$|^\/agentId$/;

function body(code: ErrorCode | string, message: string, details?: Record<string, unknown>): ErrorBody {
  return details === undefined ? { error: { code, message } } : { error: { code, message, details } };
}

export interface ErrorHandlingOptions {
  /** Where unexpected errors are logged (Fastify itself runs without a logger, see app.ts). */
  readonly logger?: Logger | undefined;
  /** Told of every unmatched request (the metrics count them). */
  readonly onNotFound?: ((request: FastifyRequest) => void) | undefined;
  /**
   * Told of every error answer of a route that counts its own requests (`config.httpMetrics:
   * 'handler'`) and of an unmatched URL (refused before the not-found handler runs, e.g. 403 Host).
   */
  readonly onHandlerCountedError?: ((request: FastifyRequest, statusCode: number) => void) | undefined;
}

export function installErrorHandling(app: FastifyInstance, options: ErrorHandlingOptions = {}): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (options.onHandlerCountedError && (request.is404 || request.routeOptions.config.httpMetrics === 'handler')) {
      // Counted once the status is known, whatever branch below answers.
      void reply.raw.once('finish', () => options.onHandlerCountedError?.(request, reply.statusCode));
    }
    if (error instanceof AppError) {
      return reply.code(error.statusCode).send(body(error.code, error.message, error.details));
    }
    if (error.validation) {
      const errors = error.validation.slice(0, 10).map((issue) => ({ path: issue.instancePath, message: issue.message ?? 'invalid' }));
      const where = error.validationContext ?? 'request';
      // SPEC §5: a bad agent id is `invalid_agent_id`, in a whole policy document as in a URL
      // (when agent ids are all that is wrong: every issue, not only the ten shown).
      const onlyAgentIds = error.validation.length > 0 && error.validation.every((issue) => AGENT_ID_PATH.test(issue.instancePath));
      const code = onlyAgentIds ? 'invalid_agent_id' : 'invalid_request';
      return reply
        .code(400)
        .send(body(code, `Invalid ${where}: ${errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`, { in: where, errors }));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send(body('payload_too_large', 'The request body is too large.'));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send(body('unsupported_media_type', 'Send the body as application/json.'));
      default:
        break;
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      // Bad JSON, `__proto__` keys, an empty body with a JSON content type, a bad URL encoding...
      return reply.code(400).send(body('invalid_request', `Invalid request: ${error.message}`));
    }
    options.logger?.error({ err: error, reqId: request.id, method: request.method, url: request.url }, 'unexpected error');
    return reply.code(500).send(body('internal_error', 'Internal error; the request was not applied.'));
  });

  app.setNotFoundHandler((request, reply) => {
    options.onNotFound?.(request);
    return reply.code(404).send(body('not_found', `No route ${request.method} ${request.url.split('?')[0] ?? ''}.`));
  });
}
