/**
 * `buildApp()` builds the PDP as a Fastify instance without listening (as in fastify/demo);
 * `server/main.ts` reads the environment and listens. `await app.ready()` resolves once every
 * project is loaded and watched; `await app.close()` stops the watcher.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { createLogger } from '../ops/logger.js';
import { installAuth } from './auth.js';
import { createAuditFile, type AuditFile } from '../decisions/audit-file.js';
import { installErrorHandling } from './error-handler.js';
import { lazySerializerFactory } from '../lazy-serializers.js';
import { UNMATCHED_ROUTE, addMetricsRoute, createMetrics, installHttpMetrics, notFoundRecorder, type PdpMetrics } from '../ops/metrics.js';
import { PolicyService } from '../policy-service.js';
import { catalogRoutes } from './routes/catalog.js';
import { decisionRoutes } from './routes/decisions.js';
import { ephemeralRoutes } from './routes/ephemeral.js';
import { healthRoutes } from './routes/health.js';
import { permissionsRoutes } from './routes/permissions.js';
import { ProjectRegistry } from '../projects/registry.js';
import type { WatcherThread } from '../projects/watcher/watcher-thread.js';
import { uiPlugin } from './ui-plugin.js';

export interface BuildAppOptions {
  /** PDP_PROJECTS_ROOT: each direct sub-folder is a project named after it. */
  projectsRoot?: string | undefined;
  /** PDP_PROJECTS: explicit project id → absolute root folder. */
  projects?: Readonly<Record<string, string>> | undefined;
  /** Required on every mutating route (`Authorization: Bearer <token>`). */
  adminToken: string;
  /** When set, `/decide` and the GET routes (but health, `/ui`, `/docs`) need it or the admin token. */
  decideToken?: string | undefined;
  /** `false` (default) for silence, `true` or pino options for JSON logs, or a pino logger. */
  logger?: boolean | LoggerOptions | Logger | undefined;
  /** Safety-net rescan period of the files in ms (default 2000, 0 disables). */
  rescanMs?: number | undefined;
  /** PDP_AUDIT_FILE: append every decision as NDJSON to this file (rotated). */
  auditFile?: string | undefined;
  /** Largest accepted request body in bytes (default 1 MiB). */
  bodyLimit?: number | undefined;
  /**
   * Answer only requests whose `Host` names the loopback interface (`main.ts` sets it when bound to
   * loopback): a web page that rebinds its DNS name to 127.0.0.1 then cannot read or decide.
   */
  loopbackHostsOnly?: boolean | undefined;
  /**
   * The watcher thread, already started by the caller for `watchScopeOf(projectsRoot, projects)`
   * (`main.ts` starts it before loading this module, so that its first walk of the folders runs
   * while the modules load). The app takes it over and closes it. Without it, `ready()` starts one.
   */
  watcher?: WatcherThread | undefined;
}

function makeLogger(option: BuildAppOptions['logger']): Logger {
  if (option === undefined || option === false) return pino({ level: 'silent' });
  if (option === true) return createLogger();
  if (typeof (option as Logger).child === 'function') return option as Logger;
  return createLogger(option as LoggerOptions);
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  try {
    return await assemble(options);
  } catch (error) {
    // No app reached the caller, so no onClose hook will stop the watcher thread it handed over.
    await options.watcher?.close();
    throw error;
  }
}

async function assemble(options: BuildAppOptions): Promise<FastifyInstance> {
  const logger = makeLogger(options.logger);
  const app = Fastify({
    // No logger for Fastify itself: with one, Fastify attaches and removes response listeners on
    // every request (measured on /decide). The service logs its own lines through `logger`
    // (decisions, writes, reloads, unexpected errors); Fastify would only add request logs, which
    // are off anyway.
    logger: false,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // Query strings like ?allow=false&limit=50; nothing else is parsed from the URL.
    routerOptions: { maxParamLength: 1024 },
    // A request (body included) must arrive within 30 s: a held-open connection cannot pin the service.
    requestTimeout: 30_000,
    // Response serializers compiled on first use, not at start (see lazy-serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory() } },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // A bad percent-encoding (`%C0%AE`) or an over-long parameter is refused by the router before
    // any hook or error handler runs: keep the one error shape of SPEC §5 there too.
    frameworkErrors: (error, _request, reply) => {
      const raw = reply as unknown as FastifyReply;
      void raw.code(error.statusCode ?? 400).send({ error: { code: 'invalid_request', message: `Invalid request: ${error.message}` } });
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  // `request.log` (Fastify's own warnings: a reply sent twice, a hook failing after the answer) is
  // the service's logger, without a pino child per request and without request logs; except on the
  // decision routes (below), which keep Fastify's default: a custom factory costs every request a
  // bindings object and a check of seven logger methods (~2% of /decide's instructions, measured
  // with callgrind), and their handlers send exactly once and log their own lines.
  const fastifyDefaultChildLogger = app.childLoggerFactory;
  app.setChildLoggerFactory(() => logger as unknown as FastifyBaseLogger);

  const metrics: PdpMetrics = createMetrics();
  const audit: AuditFile | undefined =
    options.auditFile === undefined || options.auditFile === ''
      ? undefined
      : createAuditFile(options.auditFile, { onError: (error) => logger.warn({ err: error }, 'audit file error') });
  const registry = new ProjectRegistry({
    projectsRoot: options.projectsRoot,
    projects: options.projects,
    logger,
    rescanMs: options.rescanMs,
    watcher: options.watcher,
    onReload: (project, outcome) => {
      if (outcome === 'removed') {
        service.forgetProject(project);
        metrics.forgetProject(project);
      } else if (outcome === 'ok' || outcome === 'invalid') {
        metrics.recordReload(project, outcome);
      }
    },
  });
  // onReload only fires after start(), once `service` exists.
  const service = new PolicyService({ registry, logger, metrics, audit });
  metrics.setProjectCountsProvider(() => {
    const projects = registry.list();
    return { total: projects.length, invalid: projects.filter((project) => project.state.policy.status === 'invalid').length };
  });

  installErrorHandling(app, {
    logger,
    onNotFound: notFoundRecorder(metrics),
    onHandlerCountedError: (request, statusCode) =>
      metrics.recordHttpRequest(
        request.method,
        request.is404 ? UNMATCHED_ROUTE : (request.routeOptions.url ?? UNMATCHED_ROUTE),
        statusCode,
      ),
  });
  installAuth(app, { adminToken: options.adminToken, decideToken: options.decideToken, loopbackHostsOnly: options.loopbackHostsOnly });
  // Before any route (swagger's included) so every route gets its HTTP metrics hook.
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
          bearer: { type: 'http', scheme: 'bearer', description: 'Admin token (writes) or decide token (reads), see SPEC §7.' },
        },
      },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs' });
  addMetricsRoute(app, metrics);

  const deps = { service, metrics };
  await app.register(async (decisions) => {
    decisions.setChildLoggerFactory(fastifyDefaultChildLogger);
    await decisions.register(decisionRoutes, deps);
  });
  await app.register(catalogRoutes, deps);
  await app.register(permissionsRoutes, deps);
  await app.register(ephemeralRoutes, deps);
  await app.register(healthRoutes, { isReady: () => registry.isReady, projectCount: () => registry.size });
  await app.register(uiPlugin);

  app.addHook('onReady', async () => {
    await registry.start();
  });
  app.addHook('onClose', async () => {
    await registry.close();
    service.close();
    await audit?.close();
  });
  return app;
}
