/**
 * Starts `idea-mcp-proxy` once its command line is read: the client of the service, the real
 * server as a child process, and the relay between the two; resolves with the code to exit with.
 */
import { spawn } from 'node:child_process';
import { errorText } from '../causes.js';
import { PdpClient } from '../http/pdp-client.js';
import type { ProxyCommand } from './options.js';
import { McpRelay } from './relay.js';
import { ServerScope } from './server-scope.js';
import type { ProxyLogger } from './stderr-logger.js';

/** Credentials of the service the real server has no use for, and the files that hold them: it never sees them. */
const WITHHELD_FROM_SERVER = ['PDP_DECIDE_TOKEN', 'PDP_APPROVER_TOKEN', 'PDP_ADMIN_TOKEN'].flatMap((name) => [name, `${name}_FILE`]);

export async function runProxy(command: ProxyCommand, logger: ProxyLogger): Promise<number> {
  const client = new PdpClient({
    baseUrl: command.pdp,
    token: command.token,
    timeoutMs: command.timeoutMs,
    logger,
    ...(command.socketPath === undefined ? {} : { socketPath: command.socketPath }),
  });
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !WITHHELD_FROM_SERVER.includes(name)));
  // Its own process group (the proxy signals the group, launcher and server together); Windows has none.
  const child = spawn(command.server.command, command.server.args, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env,
    detached: process.platform !== 'win32',
  });
  const started = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => {
      resolve(undefined);
    });
    child.once('error', resolve);
  });
  if (started !== undefined) {
    logger.error({ command: command.server.command, cause: errorText(started) }, 'could not start the MCP server');
    await client.close();
    return 127;
  }
  const relay = new McpRelay(
    {
      client,
      project: command.project,
      requester: command.agent,
      filterToolsList: command.filterToolsList,
      approval: {
        waitMs: command.approvalWaitMs,
        ...(command.approverToken === undefined ? {} : { elicit: { approverToken: command.approverToken } }),
      },
      logger,
      server:
        command.serverId === undefined
          ? undefined
          : new ServerScope(command.serverId, command.project, logger, (project, server, body) =>
              client.reportDiscovered(project, server, body),
            ),
    },
    { input: process.stdin, output: process.stdout },
    child,
  );
  // Out of the terminal's process group, the server no longer gets a Ctrl-C or a hang-up itself: the proxy passes them on.
  const stopOn = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
  const stop = (signal: NodeJS.Signals) => {
    relay.stop(signal);
  };
  for (const signal of stopOn) process.on(signal, stop);
  void client.check({ project: command.project }).then((checked) => {
    if (!checked.ok)
      logger.warn(
        { reason: checked.reason, cause: checked.message },
        'the policy service is not usable yet: tool calls are refused until it is',
      );
  });
  const code = await relay.done;
  for (const signal of stopOn) process.off(signal, stop);
  await client.close();
  return code;
}
