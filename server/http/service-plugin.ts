/**
 * The service's HTTP side as one Fastify plugin over the built services (server/services.ts): the
 * error handler, the token checks and the HTTP metrics, the OpenAPI document and its browser
 * (`/docs`), the routes, the panel (`/ui`), and the services' start and close on the app's
 * lifecycle.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Services } from '../services.js';
import { installAuth, type AuthOptions } from './auth.js';
import { installErrorHandling } from './error-handler.js';
import { installHttpMetrics } from './http-metrics.js';
import { refusedCredentialLog } from './refused-credentials.js';
import { approvalsRoutes } from './routes/approvals.js';
import { catalogRoutes } from './routes/catalog.js';
import type { TypedApp } from './routes/common.js';
import { decisionRoutes } from './routes/decisions.js';
import { ephemeralRoutes } from './routes/ephemeral.js';
import { eventsRoute } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { permissionsRoutes } from './routes/permissions.js';
import { previewRoute } from './routes/preview.js';
import { serversRoutes } from './routes/servers.js';
import { whoamiRoute } from './routes/whoami.js';
import { uiPlugin } from './ui-plugin.js';

export interface ServicePluginOptions {
  readonly services: Services;
  readonly logger: Logger;
  /** The tokens and the loopback-only check (auth.ts); refused credentials are logged through `logger`. */
  readonly auth: Omit<AuthOptions, 'onRefused'>;
}

async function registerService(app: TypedApp, { services, logger, auth: authOptions }: ServicePluginOptions): Promise<void> {
  const { registry, metrics, permissions, events, approvals, decisions, preview, discovered } = services;
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  // Fastify's own warnings (a reply sent twice, a hook failing after the answer) go to the service's logger,
  // except on the decision routes, which keep Fastify's factory (see routes/decisions.ts).
  const fastifyChildLoggerFactory = app.childLoggerFactory;
  app.setChildLoggerFactory(() => logger);

  installErrorHandling(app, logger);
  // Before any route: the token checks and the HTTP metrics attach to every route registered after them.
  const auth = installAuth(app, { ...authOptions, onRefused: refusedCredentialLog(logger) });
  installHttpMetrics(app, metrics);

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'IdeA MCP tool permission service',
        description: 'Policy decision service for the IdeA MCP tools: decisions, catalog, per-project and per-agent permissions.',
        version: '1.0.0',
      },
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'Admin token (writes) or decide token (reads), see docs/api.md#security.',
          },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The API browser can send requests with a token typed into it: no other site may frame it (clickjacking), as /ui.
    uiHooks: {
      onRequest: (_request, reply, done) => {
        void reply.header('content-security-policy', "frame-ancestors 'none'").header('x-frame-options', 'DENY');
        done();
      },
    },
  });

  await app.register(decisionRoutes, { decisions, childLoggerFactory: fastifyChildLoggerFactory });
  await app.register(catalogRoutes, { permissions, discovered });
  await app.register(serversRoutes, { permissions, discovered });
  await app.register(permissionsRoutes, { permissions, decisions });
  await app.register(previewRoute, { preview });
  await app.register(ephemeralRoutes, { permissions });
  await app.register(approvalsRoutes, { approvals, auth });
  await app.register(whoamiRoute, { auth });
  await app.register(eventsRoute, { events, hasProject: (id) => registry.get(id) !== undefined });
  await app.register(healthRoutes, {
    isReady: () => registry.isReady,
    unlistedRoot: () => registry.unlistedRoot,
    unwatchedFolders: () => registry.unwatchedFolders(),
    projectCount: () => registry.size,
    metrics,
  });
  await app.register(uiPlugin);

  app.addHook('onReady', async () => {
    await services.start();
  });
  app.addHook('preClose', async () => {
    services.closeStreams();
  });
  app.addHook('onClose', async () => {
    await services.close();
  });
}

// Not encapsulated (what fastify-plugin does): its error handler, hooks and validator are the app's
// own, so that they cover the router's 404 and every route, as when buildApp installed them itself.
export const servicePlugin = Object.assign(registerService, { [Symbol.for('skip-override')]: true });
