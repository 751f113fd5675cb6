/**
 * The standalone file's stand-in for serve-command.ts (scripts/build-standalone.mjs swaps it in): the
 * service needs Fastify, its plugins and the panel, which the one-file command leaves out.
 */
import type { Output } from './commands.js';
import { UsageError } from './usage.js';

export function serveCommand(_output: Output): Promise<void> {
  return Promise.reject(
    new UsageError('serve is not in the standalone file (check, test, decide, preview, fmt): run the service from the package'),
  );
}
