/** Liveness and readiness (SPEC §5). */
import { HealthSchema, ReadySchema } from '../../../schemas/index.js';
import type { TypedApp } from './common.js';

export async function healthRoutes(
  app: TypedApp,
  { isReady, projectCount }: { isReady: () => boolean; projectCount: () => number },
): Promise<void> {
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
}
