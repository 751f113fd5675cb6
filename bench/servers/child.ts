/**
 * Entry point of a server child process (forked by the harness so that the server and the load
 * generator never share an event loop). Usage, with an IPC channel:
 *   node --import tsx bench/servers/child.ts <ours|bare|cedar|cedar-text>
 * env: BENCH_PROJECTS_ROOT (projects root), BENCH_APP_MODULE (absolute path of the service's
 * app module: dist/server/app.js or server/app.ts), BENCH_ADMIN_TOKEN, BENCH_LOGGER=1 to keep the service's logger on.
 * Sends `{ port }` to the parent once listening; exits cleanly on SIGTERM or when the parent goes
 * (a clean exit is what lets `--cpu-prof` write its profile).
 */
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import type { ServerMode } from '../lib/processes.js';
import { buildBareApp, buildCedarApp } from './baselines.js';

interface ServiceModule {
  buildApp(options: { projectsRoot?: string; adminToken: string; logger?: boolean | object }): Promise<FastifyInstance>;
}

async function build(mode: ServerMode, projectsRoot: string): Promise<FastifyInstance> {
  switch (mode) {
    case 'bare':
      return buildBareApp();
    case 'cedar':
      return buildCedarApp(projectsRoot, true);
    case 'cedar-text':
      return buildCedarApp(projectsRoot, false);
    case 'ours': {
      const modulePath = process.env['BENCH_APP_MODULE'];
      if (!modulePath) throw new Error('BENCH_APP_MODULE is required for mode "ours"');
      const service = (await import(pathToFileURL(modulePath).href)) as ServiceModule;
      // Denials are logged at info in production; BENCH_LOGGER=1 measures with that cost (to /dev/null).
      const logger = process.env['BENCH_LOGGER'] === '1' ? { level: 'info' } : false;
      return service.buildApp({ projectsRoot, adminToken: process.env['BENCH_ADMIN_TOKEN'] ?? '', logger });
    }
  }
}

async function main(): Promise<void> {
  const mode = process.argv[2] as ServerMode | undefined;
  const projectsRoot = process.env['BENCH_PROJECTS_ROOT'] ?? '';
  if (!mode || !['ours', 'bare', 'cedar', 'cedar-text'].includes(mode)) throw new Error(`unknown mode ${String(mode)}`);
  const app = await build(mode, projectsRoot);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  let closing = false;
  const stop = (): void => {
    if (closing) return;
    closing = true;
    void app.close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('disconnect', stop);
  process.send?.({ port });
}

main().catch((error: unknown) => {
  process.stderr.write(`server child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
