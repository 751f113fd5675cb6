#!/usr/bin/env node
/**
 * `idea-mcp-proxy`: a stdio MCP server that starts the real one and guards it (docs/client.md).
 * It needs no MCP SDK: it reads and writes JSON-RPC lines itself, whichever SDK the server was built with.
 */
import { parseCommand, USAGE, UsageError, type ProxyCommand } from './options.js';
import { stderrLogger } from './stderr-logger.js';

const logger = stderrLogger();
let command: ProxyCommand | null;
try {
  command = parseCommand(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`idea-mcp-proxy: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (command === null) {
  // Help goes to stdout: it is asked for from a shell, not by an MCP host.
  process.stdout.write(USAGE);
  process.exit(0);
}
const { runProxy } = await import('./run.js');
// The host may still hold our stdin open: the server is gone, so the proxy goes too.
process.exit(await runProxy(command, logger));
