/**
 * `buildApp()` builds the service as a Fastify instance without listening (as in fastify/demo);
 * server/main.ts reads the environment and listens. `await app.ready()` resolves once every
 * project is loaded and watched; `await app.close()` stops the watcher.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import pino, { type Logger, type LoggerOptions } from 'pino';
import { ApprovalsService } from '../approvals/approvals-service.js';
import type { ServiceClock } from '../approvals/clock.js';
import { openApprovals } from '../approvals/open-approvals.js';
import { createAuditFile } from '../decisions/audit-file.js';
import { DecisionService } from '../decisions/decision-service.js';
import { declaresAgent } from '../domain/agents-file.js';
import { isOnAsk } from '../domain/decide.js';
import { PreviewService } from '../decisions/preview-service.js';
import { RecentDecisionsFile } from '../decisions/recent-decisions-file.js';
import { LiveEvents } from '../events/live-events.js';
import { createLogger } from '../ops/logger.js';
import { createMetrics } from '../ops/metrics.js';
import { EphemeralPolicies } from '../permissions/ephemeral.js';
import { PermissionsService } from '../permissions/permissions-service.js';
import { ProjectRegistry } from '../projects/registry.js';
import { installAuth } from './auth.js';
import { refusedCredentialLog } from './refused-credentials.js';
import { errorBody, installErrorHandling } from './error-handler.js';
import { installHttpMetrics } from './http-metrics.js';
import { approvalsRoutes } from './routes/approvals.js';
import { catalogRoutes } from './routes/catalog.js';
import { decisionRoutes } from './routes/decisions.js';
import { ephemeralRoutes } from './routes/ephemeral.js';
import { eventsRoute } from './routes/events.js';
import { healthRoutes } from './routes/health.js';
import { permissionsRoutes } from './routes/permissions.js';
import { previewRoute } from './routes/preview.js';
import { whoamiRoute } from './routes/whoami.js';
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
  /** PDP_APPROVER_TOKEN: may answer approval requests (`once`, `for` up to 8 h, `deny`) and nothing else. */
  approverToken?: string | undefined;
  /** PDP_APPROVER_PROJECTS: the only projects whose requests the approver token may answer (default: every project). */
  approverProjects?: readonly string[] | undefined;
  /** `false` (default) for silence, `true` or pino options for JSON logs, or a pino logger. */
  logger?: boolean | LoggerOptions | Logger | undefined;
  /** Safety-net rescan period of the files in ms (default 2000, 0 disables). */
  rescanMs?: number | undefined;
  /** PDP_AUDIT_FILE: append every decision about a known project as NDJSON to this file (rotated). */
  auditFile?: string | undefined;
  /** Largest accepted request body in bytes (default 1 MiB; the decision routes take 64 KiB). */
  bodyLimit?: number | undefined;
  /**
   * Answer only requests whose `Host` names the loopback interface (`main.ts` sets it when bound to
   * loopback): a web page that rebinds its DNS name to 127.0.0.1 then cannot read or decide.
   */
  loopbackHostsOnly?: boolean | undefined;
  /** PDP_MAX_CONNECTIONS: connections open at once; a new one beyond is closed at once (default 1024). */
  maxConnections?: number | undefined;
  /** PDP_MAX_EVENT_STREAMS: `/events` streams open at once (default a quarter of maxConnections); below maxConnections. */
  maxEventStreams?: number | undefined;
  /** PDP_MAX_EVENT_STREAMS_PER_CLIENT: `/events` streams open at once from one client address (default 32). */
  maxEventStreamsPerClient?: number | undefined;
  /** An idle keep-alive connection is closed after this many ms (default 10 s). */
  keepAliveTimeoutMs?: number | undefined;
  /** A connection that has not sent a request's headers within this many ms is closed (default 5 s). */
  headersTimeoutMs?: number | undefined;
  /**
   * PDP_STATE_DIR: temporary grants and `once` approvals are kept in `approvals.json` there and
   * survive a restart; without it (tests) they live in memory only.
   */
  stateDir?: string | undefined;
  /** PDP_APPROVAL_TTL_SECONDS: how long an approval request stays pending (default 300). */
  approvalTtlSeconds?: number | undefined;
  /** The time of approvals and grants (default: the system's monotonic and wall clocks); tests move it. */
  clock?: ServiceClock | undefined;
}

const DEFAULT_MAX_CONNECTIONS = 1024;

function makeLogger(option: BuildAppOptions['logger']): Logger {
  if (option === undefined || option === false) return pino({ level: 'silent' });
  if (option === true) return createLogger();
  if (typeof (option as Logger).child === 'function') return option as Logger;
  return createLogger(option as LoggerOptions);
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const logger = makeLogger(options.logger);
  // Seconds, not a minute: 1,024 sockets that never finish a request would otherwise hold every place for 20 s.
  const headersTimeout = options.headersTimeoutMs ?? 5_000;
  const app = Fastify({
    // The service logs its own lines (decisions, writes, reloads, unexpected errors) through `logger`;
    // Fastify's request logs would carry the request's headers, tokens included.
    logger: false,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    // A path parameter (an agent id or a requester) may be 1,024 characters (schemas/api.ts); the
    // router's default of 100 would refuse longer ids before validation could name the problem.
    routerOptions: { maxParamLength: 1024 },
    // A request still incomplete after 10 s is cut (a 1 MiB body takes milliseconds on loopback), so held-open connections cannot pin the sockets.
    requestTimeout: Math.max(headersTimeout, 10_000),
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 10_000,
    // Checked every second: a timeout is then at most a second late.
    http: { headersTimeout, connectionsCheckingInterval: Math.min(headersTimeout, 1_000) },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // A bad percent-encoding (`%C0%AE`) or an over-long parameter is refused by the router before
    // any hook or error handler runs: keep the one error shape there too.
    frameworkErrors: (error, _request, reply) => {
      // Typed for the routes' schemas, which this error precedes.
      const plain = reply as unknown as FastifyReply;
      void plain.code(error.statusCode ?? 400).send(errorBody('invalid_request', `Invalid request: ${error.message}`));
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;

  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  // Fastify's own warnings (a reply sent twice, a hook failing after the answer) go to the service's logger,
  // except on the decision routes, which keep Fastify's factory (see routes/decisions.ts).
  const fastifyChildLoggerFactory = app.childLoggerFactory;
  app.setChildLoggerFactory(() => logger);

  const audit =
    options.auditFile === undefined || options.auditFile === ''
      ? undefined
      : createAuditFile(options.auditFile, {
          onError: (error) => {
            logger.warn({ err: error }, 'audit file error');
          },
        });
  // Built in dependency order: each service is created after everything it calls.
  const registry = new ProjectRegistry({
    projectsRoot: options.projectsRoot,
    projects: options.projects,
    logger,
    rescanMs: options.rescanMs,
  });
  const ephemeral = new EphemeralPolicies({ folderOf: (project) => registry.folderOf(project) });
  const metrics = createMetrics({
    projectCounts: () => {
      const projects = registry.list();
      return { total: projects.length, invalid: projects.filter((project) => project.state.policy.status === 'invalid').length };
    },
    unwatchedFolders: () => registry.unwatchedFolders(),
  });
  const permissions = new PermissionsService({ registry, ephemeral, logger, metrics });
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  // A quarter of the connections at most by default: streams never starve /decide of a socket.
  const maxEventStreams = Math.min(options.maxEventStreams ?? Math.floor(maxConnections / 4), maxConnections - 1);
  const events = new LiveEvents({
    maxStreams: Math.max(0, maxEventStreams),
    maxStreamsPerClient: options.maxEventStreamsPerClient,
    projects: () =>
      registry
        .list()
        .map((project) => ({ project: project.id, revision: project.state.policy.revision, status: project.state.policy.status })),
    logger,
  });
  const approvals = new ApprovalsService({
    approvals: openApprovals({
      stateDirectory: options.stateDir,
      approvalTtlSeconds: options.approvalTtlSeconds,
      clock: options.clock,
      makeAlways: (project, requester, tool) => permissions.allowAlways(project, requester, tool),
      isOnAsk: (project, requester, tool) => isOnAsk(registry.get(project)?.state.policy, requester, tool),
      isDeclared: (project, requester) => {
        const state = registry.get(project)?.state;
        return state !== undefined && declaresAgent(state.agents, state.policy, requester);
      },
      folderOf: (project) => registry.folderOf(project),
      withFreshPolicy: (project, task) => registry.get(project)?.freshly(task) ?? Promise.resolve().then(task),
      onChange: (change) => {
        events.approvalChanged(change);
      },
      onPersistFailure: (error) => {
        logger.error({ err: error }, 'approvals state not saved');
      },
    }),
    hasProject: (project) => registry.get(project) !== undefined,
    logger,
    clock: options.clock,
    approverProjects: options.approverProjects,
  });
  const decisions = new DecisionService({
    policyOf: (project) => registry.get(project)?.state.policy,
    ephemeral: (project, requester) => ephemeral.grant(project, requester),
    approvals: approvals.port,
    logger,
    metrics,
    audit,
  });
  // Without a state folder (tests) the recent decisions live in memory only.
  const recentFile =
    options.stateDir === undefined ? undefined : new RecentDecisionsFile({ stateDir: options.stateDir, recent: decisions.recent, logger });
  const preview = new PreviewService({
    policyOf: (project) => registry.get(project)?.state.policy,
    recentOf: (project) => decisions.replayable(project),
    ephemeral: (project, requester) => ephemeral.grant(project, requester),
    granted: (project, requester, tool) => approvals.port.granted(project, requester, tool),
  });

  // Who hears a project change, in this order (the registry tells its subscribers in the order they
  // subscribed, once /decide sees the change): the counters, the recent decisions, the approvals
  // (a new policy closes the requests it now decides), and last the `policy` event, so that it
  // never announces a change before what follows from it is done.
  registry.subscribe({
    projectChanged: (project, change) => {
      if (change === 'removed') metrics.forgetProject(project);
      else if (change === 'ok' || change === 'invalid') metrics.recordReload(project, change);
    },
  });
  registry.subscribe({
    projectChanged: (project, change) => {
      if (change !== 'removed') return;
      decisions.forgetProject(project);
      void recentFile?.forget(project);
    },
  });
  registry.subscribe({
    projectChanged: (project, change) => {
      if (change === 'added') approvals.adoptFolder(project, registry.folderOf(project));
      if (change === 'removed') approvals.dropProject(project);
      else approvals.policyChanged(project);
    },
    // What was granted or armed for a folder is not inherited by the one that replaces it.
    folderReplaced: (project) => {
      approvals.dropProject(project);
      ephemeral.folderReplaced(project);
    },
  });
  registry.subscribe({
    projectChanged: (project, _change, state) => {
      events.policyChanged(project, state && { revision: state.policy.revision, status: state.policy.status });
    },
  });
  for (const warning of approvals.warnings) logger.warn({ stateDir: options.stateDir }, warning);

  installErrorHandling(app, logger);
  // Before any route: the token checks and the HTTP metrics attach to every route registered after them.
  const auth = installAuth(app, {
    adminToken: options.adminToken,
    decideToken: options.decideToken,
    approverToken: options.approverToken,
    loopbackHostsOnly: options.loopbackHostsOnly,
    onRefused: refusedCredentialLog(logger),
  });
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
          bearer: { type: 'http', scheme: 'bearer', description: 'Admin token (writes) or decide token (reads): docs/api.md#security.' },
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
  await app.register(catalogRoutes, { permissions });
  await app.register(permissionsRoutes, { permissions, decisions });
  await app.register(previewRoute, { preview });
  await app.register(ephemeralRoutes, { permissions });
  await app.register(approvalsRoutes, { approvals, auth });
  await app.register(whoamiRoute, { auth });
  await app.register(eventsRoute, { events, hasProject: (id) => registry.get(id) !== undefined });
  await app.register(healthRoutes, {
    isReady: () => registry.isReady,
    unwatchedFolders: () => registry.unwatchedFolders(),
    projectCount: () => registry.size,
    metrics,
  });
  await app.register(uiPlugin);

  app.addHook('onReady', async () => {
    await recentFile?.start();
    await registry.start();
    approvals.retainProjects((project) => registry.get(project) !== undefined);
    // A project that went away while the service was stopped leaves no history behind.
    for (const project of decisions.recent.projects()) {
      if (registry.get(project) === undefined) {
        decisions.forgetProject(project);
        await recentFile?.forget(project);
      }
    }
  });
  // Before the server stops accepting: open streams end cleanly instead of holding the close.
  app.addHook('preClose', async () => {
    events.close();
    approvals.close();
  });
  app.addHook('onClose', async () => {
    await recentFile?.close();
    registry.close();
    ephemeral.close();
    await audit?.close();
  });
  return app;
}
