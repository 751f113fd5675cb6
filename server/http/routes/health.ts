/** Liveness, readiness and metrics (docs/api.md#http-api). */
import { Type } from '@sinclair/typebox';
import { HealthSchema, ReadySchema } from '../../../schemas/index.js';
import type { PdpMetrics } from '../../ops/metrics.js';
import { errors, type TypedApp } from './common.js';

export interface HealthDeps {
  readonly isReady: () => boolean;
  /** Why the projects root has never been listed since start (its projects are unknown), or undefined. */
  readonly unlistedRoot: () => string | undefined;
  /** Folders that exist but cannot be watched now, by errno code. */
  readonly unwatchedFolders: () => ReadonlyMap<string, number>;
  readonly projectCount: () => number;
  readonly metrics: PdpMetrics;
}

/** Errors that mean the kernel has no inotify watch (ENOSPC) or instance (EMFILE) left for the service. */
const EXHAUSTED = ['ENOSPC', 'EMFILE'];

export async function healthRoutes(
  app: TypedApp,
  { isReady, unlistedRoot, unwatchedFolders, projectCount, metrics }: HealthDeps,
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
        description:
          '`503 degraded` when the projects root could not be listed since start (its projects are not served), or when folders cannot be watched for lack of inotify watches (changes then wait for the rescan).',
        response: { 200: ReadySchema, 503: ReadySchema },
      },
    },
    async (_request, reply) => {
      if (!isReady()) return reply.code(503).send({ status: 'loading', projects: projectCount() });
      // Not "every project loaded": the projects the root holds are unknown, and their calls are denied as unknown.
      const unlisted = unlistedRoot();
      if (unlisted !== undefined) return reply.code(503).send({ status: 'degraded', projects: projectCount(), message: unlisted });
      const unwatched = unwatchedFolders();
      const exhausted = EXHAUSTED.reduce((sum, code) => sum + (unwatched.get(code) ?? 0), 0);
      if (exhausted === 0) return reply.code(200).send({ status: 'ready', projects: projectCount() });
      // 503: "every project loaded and watched" no longer holds, and a revocation may take a rescan period (2 s) to apply.
      return reply.code(503).send({
        status: 'degraded',
        projects: projectCount(),
        unwatchedFolders: exhausted,
        message: `${exhausted} folder(s) cannot be watched: no inotify watch left (raise fs.inotify.max_user_watches); their changes are heard by the periodic rescan only`,
      });
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
