/** Liveness, readiness and metrics (docs/api.md §5). */
import { Type } from '@sinclair/typebox';
import { HealthSchema, ReadySchema } from '../../../schemas/index.js';
import type { PdpMetrics } from '../../ops/metrics.js';
import { errors, type TypedApp } from './common.js';

export interface HealthDeps {
  readonly isReady: () => boolean;
  readonly projectCount: () => number;
  readonly metrics: PdpMetrics;
}

export async function healthRoutes(app: TypedApp, { isReady, projectCount, metrics }: HealthDeps): Promise<void> {
  app.get(
    '/healthz',
    { config: { access: 'public' }, schema: { tags: ['health'], summary: 'Alive', response: { 200: HealthSchema } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      config: { access: 'public' },
      schema: {
        tags: ['health'],
        summary: 'Ready once every project is loaded and watched',
        response: { 200: ReadySchema, 503: ReadySchema },
      },
    },
    async (_request, reply) => {
      const ready = isReady();
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'loading', projects: projectCount() });
    },
  );
  app.get(
    '/metrics',
    {
      schema: {
        tags: ['health'],
        summary: 'Prometheus metrics',
        description: 'Decisions by outcome and reason, decision latency, reloads, invalid projects, policy writes, HTTP requests.',
        response: { 200: { description: 'Prometheus text format.', content: { 'text/plain': { schema: Type.String() } } }, ...errors(401) },
      },
    },
    async (_request, reply) => reply.header('content-type', metrics.registry.contentType).send(await metrics.render()),
  );
}
