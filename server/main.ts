/**
 * Entry point: reads the environment, builds the app, listens, and shuts down gracefully on
 * SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the watcher, exit 0).
 */
import { buildApp } from './app.js';
import { ConfigError, isLoopback, loadConfig } from './config.js';
import { createLogger } from './logger.js';

const logger = createLogger();

async function main(): Promise<void> {
  const config = await loadConfig();
  const app = await buildApp({
    projectsRoot: config.projectsRoot,
    projects: config.projects,
    adminToken: config.adminToken,
    decideToken: config.decideToken,
    auditFile: config.auditFile,
    loopbackHostsOnly: isLoopback(config.host),
    logger,
  });
  if (config.generatedTokenFile) logger.info({ file: config.generatedTokenFile }, 'admin token generated (PDP_ADMIN_TOKEN unset)');
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
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'error while closing');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  const address = await app.listen({ host: config.host, port: config.port });
  logger.info(
    { address, projectsRoot: config.projectsRoot, projects: Object.keys(config.projects), decideTokenRequired: config.decideToken !== undefined },
    `policy decision service listening at ${address}`,
  );
}

main().catch((error: unknown) => {
  logger.fatal({ err: error }, error instanceof ConfigError ? error.message : 'failed to start');
  process.exit(1);
});
