/**
 * Runs the service from the environment: reads it, builds the app, listens, and shuts down
 * gracefully on SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the watcher, exit
 * 0). `server/main.ts` (`node dist/server/main.js`, `npm start`) and `idea-pdp serve` call it.
 */
import { ConfigError, isLoopback, loadConfig, logLevelOf, prepareStateDir } from './config.js';
import { buildApp } from './http/app.js';
import { closeSocketServer, serveAppOnSocket } from './http/unix-socket.js';
import { createLogger } from './ops/logger.js';

const logger = createLogger({ level: logLevelOf() });

/** Starts the service configured by `env`; resolves once it listens (the process then exits on SIGTERM/SIGINT). */
export async function startServer(env: NodeJS.ProcessEnv): Promise<void> {
  const config = await loadConfig(env);
  // Temporary grants and `once` approvals are kept there: the same checks as for the admin token file.
  await prepareStateDir(config.stateDir);
  const app = await buildApp({
    projectsRoot: config.projectsRoot,
    projects: config.projects,
    adminToken: config.adminToken,
    decideToken: config.decideToken,
    approverToken: config.approverToken,
    approverProjects: config.approverProjects,
    auditFile: config.auditFile,
    loopbackHostsOnly: isLoopback(config.host),
    logger,
    maxConnections: config.maxConnections,
    maxEventStreams: config.maxEventStreams,
    maxEventStreamsPerClient: config.maxEventStreamsPerClient,
    stateDir: config.stateDir,
    approvalTtlSeconds: config.approvalTtlSeconds,
  });
  if (config.generatedTokenFile) {
    const how = config.adminTokenReused ? 'reused' : 'generated';
    logger.info({ file: config.generatedTokenFile }, `admin token ${how} (PDP_ADMIN_TOKEN unset)`);
  }
  if (config.socketWarning !== undefined) logger.warn({ stateDir: config.stateDir }, config.socketWarning);
  let socketServer: Awaited<ReturnType<typeof serveAppOnSocket>> | undefined;
  let closing = false;
  const shutdown = (signal: string): void => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.error('shutdown took more than 10 s, exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    Promise.all([app.close(), socketServer === undefined ? undefined : closeSocketServer(socketServer)]).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'error while closing');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => {
    shutdown('SIGTERM');
  });
  process.on('SIGINT', () => {
    shutdown('SIGINT');
  });
  // The socket is served before the TCP port listens, once the app is ready: `/readyz` answering 200
  // then means both listen (a client's first call over a just-replaced socket was refused before).
  let address: string;
  try {
    await app.ready();
    if (config.socketPath !== undefined) socketServer = await serveAppOnSocket(app, config.socketPath);
    address = await app.listen({ host: config.host, port: config.port });
  } catch (error) {
    if (socketServer !== undefined) await closeSocketServer(socketServer);
    await app.close();
    throw error;
  }
  logger.info(
    {
      address,
      projectsRoot: config.projectsRoot,
      projects: Object.keys(config.projects),
      decideTokenRequired: config.decideToken !== undefined,
      approverToken: config.approverToken !== undefined,
      socket: config.socketPath ?? null,
    },
    `policy decision service listening at ${address}`,
  );
}

/**
 * A promise nobody awaits that rejects is logged, never silent: each such path must fail closed on
 * its own (a project's reload denies its calls), and this line shows which one was missed.
 */
function logUnhandledRejections(): void {
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason }, 'unhandled promise rejection');
  });
}

/** {@link startServer}; a service that cannot start logs why and exits 1. */
export async function runServer(env: NodeJS.ProcessEnv): Promise<void> {
  logUnhandledRejections();
  try {
    await startServer(env);
  } catch (error) {
    logger.fatal({ err: error }, error instanceof ConfigError ? error.message : 'failed to start');
    process.exit(1);
  }
}
