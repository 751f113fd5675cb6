/**
 * Entry point: reads the environment, builds the app, listens, and shuts down gracefully on
 * SIGTERM/SIGINT (stop accepting, finish in-flight requests, close the watcher, exit 0).
 */
import { ConfigError, isLoopback, loadConfig } from './config.js';
import { createLogger } from './ops/logger.js';
import { watchScopeOf, watchesNothing } from './projects/watcher/watch-scope.js';
import { WatcherThread } from './projects/watcher/watcher-thread.js';

const logger = createLogger();

async function main(): Promise<void> {
  const config = await loadConfig();
  // The watcher thread's first walk of the folders (~1 s at 1,000 projects) runs while the main
  // thread loads the app's modules (~0.6 s): only light modules are imported above this line.
  const scope = watchScopeOf(config.projectsRoot, config.projects);
  const watcher = watchesNothing(scope) ? undefined : new WatcherThread(scope, logger);
  // A failure is reported where the app awaits the same promise (before it says it is ready).
  watcher?.start().catch(() => undefined);
  const { buildApp } = await import('./http/app.js');
  const app = await buildApp({
    projectsRoot: config.projectsRoot,
    projects: config.projects,
    adminToken: config.adminToken,
    decideToken: config.decideToken,
    auditFile: config.auditFile,
    loopbackHostsOnly: isLoopback(config.host),
    logger,
    watcher,
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
    {
      address,
      projectsRoot: config.projectsRoot,
      projects: Object.keys(config.projects),
      decideTokenRequired: config.decideToken !== undefined,
    },
    `policy decision service listening at ${address}`,
  );
}

main().catch((error: unknown) => {
  logger.fatal({ err: error }, error instanceof ConfigError ? error.message : 'failed to start');
  process.exit(1);
});
