/** The one place that counts HTTP answers: matched routes, errors, refusals and unmatched URLs alike. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PdpMetrics } from '../ops/metrics.js';

/** Route label of requests that matched no route (bounds the label's cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';

const routeLabel = (request: FastifyRequest): string => (request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE));

export function installHttpMetrics(app: FastifyInstance, metrics: PdpMetrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.recordHttpRequest(request.method, routeLabel(request), reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}
