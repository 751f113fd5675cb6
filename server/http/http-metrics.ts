/**
 * The one place that counts HTTP answers (`pdp_http_requests_total`): matched routes, errors,
 * refusals and unmatched URLs alike, from one `onSend` hook (an `onResponse` hook would make
 * Fastify listen for every response's end, 165,317 against 155,042 instructions per request:
 * bench/README.md#metrics-on-the-hot-path).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter } from 'prom-client';
import type { PdpMetrics } from '../ops/metrics.js';

/** Route label of requests that matched no route (bounds the label's cardinality). */
const UNMATCHED_ROUTE = 'unmatched';

const routeLabel = (request: FastifyRequest): string => (request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE));

export function installHttpMetrics(app: FastifyInstance, metrics: PdpMetrics): void {
  // route -> method -> status -> answers since the last scrape, handed to prom-client when scraped.
  const counts = new Map<string, Map<string, Map<number, number>>>();
  new Counter({
    name: 'pdp_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [metrics.registry],
    collect() {
      for (const [route, byMethod] of counts) {
        for (const [method, byStatus] of byMethod) {
          for (const [status, count] of byStatus) this.labels(method, route, String(status)).inc(count);
        }
      }
      counts.clear();
    },
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    const route = routeLabel(request);
    let byMethod = counts.get(route);
    if (byMethod === undefined) counts.set(route, (byMethod = new Map<string, Map<number, number>>()));
    let byStatus = byMethod.get(request.method);
    if (byStatus === undefined) byMethod.set(request.method, (byStatus = new Map<number, number>()));
    byStatus.set(reply.statusCode, (byStatus.get(reply.statusCode) ?? 0) + 1);
    done(null, payload);
  });
}
