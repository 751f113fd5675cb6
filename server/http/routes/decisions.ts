/** POST /decide and POST /decide/batch (SPEC §5). */
import { DecideBatchBodySchema, DecideBatchResponseSchema, DecideQuerySchema, DecisionSchema } from '../../../schemas/index.js';
import { errors, sendSerializedJson, type RouteDeps, type TypedApp } from './common.js';

export async function decisionRoutes(app: TypedApp, { service, metrics }: RouteDeps): Promise<void> {
  // These routes count their own HTTP requests (no `onResponse` hook: see installHttpMetrics);
  // error answers are counted by the error handler.
  const noop = (): void => undefined;
  const countDecide = metrics?.httpRequestCounter('POST', '/decide', 200) ?? noop;
  const countBatch = metrics?.httpRequestCounter('POST', '/decide/batch', 200) ?? noop;
  app.post(
    '/decide',
    {
      config: { access: 'read', httpMetrics: 'handler' },
      schema: {
        tags: ['decisions'],
        summary: 'Decide one tool call',
        description:
          'Always 200 for a well-formed body; `allow` is the decision. Denials are logged and kept in the recent-decisions ring.',
        body: DecideQuerySchema,
        response: { 200: DecisionSchema, ...errors(400, 401, 413, 415) },
      },
    },
    // Synchronous, and the text comes ready from the service (serialized by the same DecisionSchema):
    // no promise and no per-call serialization on the hottest route.
    (request, reply) => {
      sendSerializedJson(reply, service.decideJson(request.body));
      countDecide();
    },
  );

  app.post(
    '/decide/batch',
    {
      config: { access: 'read', httpMetrics: 'handler' },
      schema: {
        tags: ['decisions'],
        summary: 'Decide up to 100 tool calls in one round trip',
        description: 'Answers `decisions` in the order of `queries`, each exactly what /decide would answer.',
        body: DecideBatchBodySchema,
        response: { 200: DecideBatchResponseSchema, ...errors(400, 401, 413, 415) },
      },
    },
    async (request) => {
      const decisions = request.body.queries.map((query) => service.decide(query));
      countBatch();
      return { decisions };
    },
  );
}
