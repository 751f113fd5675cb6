/** POST /decide and POST /decide/batch (docs/api.md#http-api). */
import {
  DECIDE_BODY_LIMIT,
  DecideBatchBodySchema,
  DecideBatchResponseSchema,
  DecideQuerySchema,
  DecisionSchema,
} from '../../../schemas/index.js';
import type { DecisionService } from '../../decisions/decision-service.js';
import { errors, type TypedApp } from './common.js';

export interface DecisionRoutesOptions {
  readonly decisions: DecisionService;
  /** Fastify's own child logger factory, as it was before the app set its own. */
  readonly childLoggerFactory: TypedApp['childLoggerFactory'];
}

export async function decisionRoutes(app: TypedApp, { decisions, childLoggerFactory }: DecisionRoutesOptions): Promise<void> {
  // Fastify skips its per-request logger work only with its own factory: 113,021 → 110,688
  // instructions per `/decide` under callgrind (bench/README.md#logger-on-the-hot-path).
  app.setChildLoggerFactory(childLoggerFactory);
  app.post(
    '/decide',
    {
      config: { access: 'read' },
      bodyLimit: DECIDE_BODY_LIMIT,
      schema: {
        tags: ['decisions'],
        summary: 'Decide one tool call',
        description:
          'Always 200 for a well-formed body; `allow` is the decision. Denials are logged and kept in the recent-decisions ring.',
        body: DecideQuerySchema,
        response: { 200: DecisionSchema, ...errors(400, 401, 403, 413, 415, 500) },
      },
    },
    (request) => decisions.decide(request.body),
  );

  app.post(
    '/decide/batch',
    {
      config: { access: 'read' },
      bodyLimit: DECIDE_BODY_LIMIT,
      schema: {
        tags: ['decisions'],
        summary: 'Decide up to 100 tool calls in one round trip',
        description: 'Answers `decisions` in the order of `queries`, each exactly what /decide would answer.',
        body: DecideBatchBodySchema,
        response: { 200: DecideBatchResponseSchema, ...errors(400, 401, 403, 413, 415, 500) },
      },
    },
    (request) => ({ decisions: request.body.queries.map((query) => decisions.decide(query)) }),
  );
}
