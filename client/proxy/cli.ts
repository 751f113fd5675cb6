#!/usr/bin/env node
/**
 * `idea-mcp-proxy`: a stdio MCP server that starts the real one and guards it (docs/client.md).
 * `--help` and a wrong command line need nothing but Node; the relay needs the MCP SDK.
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
let run: typeof import('./run.js');
try {
  run = await import('./run.js');
} catch (error) {
  logger.error(
    { cause: error instanceof Error ? error.message : String(error) },
    'idea-mcp-proxy needs @modelcontextprotocol/sdk next to idea-mcp-permissions-client: npm install @modelcontextprotocol/sdk',
  );
  process.exit(1);
}
// The host may still hold our stdin open: the server is gone, so the proxy goes too.
process.exit(await run.runProxy(command, logger));
