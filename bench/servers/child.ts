/**
 * Entry point of a server child process (forked by the harness so that the server and the load
 * generator never share an event loop). Usage, with an IPC channel:
 *   node --import tsx bench/servers/child.ts <ours|bare|node-http|cedar|cedar-text>
 * env: BENCH_PROJECTS_ROOT (projects root), BENCH_APP_MODULE (absolute path of the service's
 * app module: dist/server/http/app.js or server/http/app.ts), BENCH_ADMIN_TOKEN, BENCH_LOGGER=1 to keep the service's logger on.
 * Sends `{ port }` to the parent once listening; exits cleanly on SIGTERM or when the parent goes
 * (a clean exit is what lets `--cpu-prof` write its profile). IPC `{ cmd: 'profile-start' }` and
 * `{ cmd: 'profile-stop', file }` record a CPU profile of just the time in between.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { pathToFileURL } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { SERVER_MODES, type ServerMode } from '../lib/processes.js';
import { buildBareApp, buildCedarApp, buildNodeHttpServer, type BenchServer } from './baselines.js';

interface ServiceModule {
  buildApp(options: { projectsRoot?: string; adminToken: string; logger?: boolean | object; stateDir?: string }): Promise<FastifyInstance>;
}

async function build(mode: ServerMode, projectsRoot: string): Promise<BenchServer> {
  switch (mode) {
    case 'bare':
      return buildBareApp();
    case 'node-http':
      return buildNodeHttpServer();
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
      // A state folder as in production: approvals and the recent decisions are kept on disk.
      const stateDir = mkdtempSync(path.join(os.tmpdir(), 'pdp-bench-app-state-'));
      process.once('exit', () => {
        rmSync(stateDir, { recursive: true, force: true });
      });
      return service.buildApp({ projectsRoot, adminToken: process.env['BENCH_ADMIN_TOKEN'] ?? '', logger, stateDir });
    }
  }
}

let profiler: Session | undefined;

/**
 * CPU profiling on demand (same .cpuprofile format as `node --cpu-prof`), so that the profile
 * covers the load only and not the start-up (module loading would dominate it otherwise).
 */
async function onProfileCommand(message: { cmd?: string; file?: string }): Promise<void> {
  if (message.cmd === 'profile-start') {
    profiler = new Session();
    profiler.connect();
    await profiler.post('Profiler.enable');
    await profiler.post('Profiler.setSamplingInterval', { interval: 200 });
    await profiler.post('Profiler.start');
    process.send?.({ profiling: true });
  } else if (message.cmd === 'profile-stop' && profiler && message.file) {
    const { profile } = await profiler.post('Profiler.stop');
    await writeFile(message.file, JSON.stringify(profile));
    profiler.disconnect();
    profiler = undefined;
    process.send?.({ profiled: message.file });
  }
}

async function main(): Promise<void> {
  const mode = process.argv[2] as ServerMode | undefined;
  const projectsRoot = process.env['BENCH_PROJECTS_ROOT'] ?? '';
  if (!mode || !(SERVER_MODES as readonly string[]).includes(mode)) throw new Error(`unknown mode ${String(mode)}`);
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
  process.on('message', (message: { cmd?: string; file?: string }) => void onProfileCommand(message));
  process.send?.({ port });
}

main().catch((error: unknown) => {
  process.stderr.write(`server child failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
