/**
 * Example: the IdeA MCP tools over stdio, every call decided by the policy service.
 *
 *   IDEA_AGENT_ID=QA PDP_URL=http://127.0.0.1:8787 PDP_PROJECT=demo npm run example:mcp-server
 *
 * One server process per agent session: whoever launches it for an agent passes that agent's id in
 * IDEA_AGENT_ID. Stdio launchers may not pass their own environment on (the MCP Inspector's does
 * not): set the variable in the launcher's server entry (its `env` block). Unset, the requester is
 * anonymous (read-only tools only) and the guard logs a warning once.
 *
 * Env: IDEA_AGENT_ID (the agent id of this session), PDP_SOCKET (the service's unix socket, e.g.
 * /home/me/.local/state/idea-pdp/pdp.sock: preferred when set, since no other process can take its place),
 * PDP_URL (default http://127.0.0.1:8787, used when PDP_SOCKET is unset),
 * PDP_PROJECT (default demo), PDP_DECIDE_TOKEN, PDP_TIMEOUT_MS (default 500),
 * PDP_FILTER_TOOLS_LIST=1 to list only the tools the agent may call (and follow changes live),
 * PDP_APPROVAL_WAIT_MS (how long a call on ask waits for the user's answer; default 0, no wait),
 * PDP_APPROVER_TOKEN (the service's approver token: a host that supports MCP elicitation then asks
 * the user itself, Autoriser une fois / Autoriser pendant 1 h / Refuser, before the panel),
 * IDEA_TOOL_LOG (a file the stubs append their runs to, one JSON line each).
 * stdout carries the MCP protocol only: logs go to stderr.
 */
import { pino } from 'pino';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { PdpClient } from '../../client/index.js';
import { guardMcpServer } from '../../client/mcp.js';
import { createIdeaToolsServer, ToolRunRecorder } from './idea-tools.js';

const logger = pino({ name: 'idea-mcp-server-example' }, pino.destination(2));
const env = process.env;
const requester = env['IDEA_AGENT_ID'] ?? '';
const project = env['PDP_PROJECT'] || 'demo';
const socketPath = env['PDP_SOCKET'] === 'off' ? undefined : env['PDP_SOCKET'] || undefined;
const client = new PdpClient({
  ...(socketPath === undefined ? { baseUrl: env['PDP_URL'] || 'http://127.0.0.1:8787' } : { socketPath }),
  token: env['PDP_DECIDE_TOKEN'],
  timeoutMs: env['PDP_TIMEOUT_MS'] === undefined ? undefined : Number(env['PDP_TIMEOUT_MS']),
});

const server = createIdeaToolsServer(new ToolRunRecorder(env['IDEA_TOOL_LOG'] || undefined));
// The approver token answers approval requests only (never the admin token here): with it, the
// guard asks the user in the MCP host when the host declared the elicitation capability.
const approverToken = env['PDP_APPROVER_TOKEN'] || undefined;
guardMcpServer(server, {
  client,
  project,
  requester,
  filterToolsList: env['PDP_FILTER_TOOLS_LIST'] === '1',
  approval: {
    waitMs: Number(env['PDP_APPROVAL_WAIT_MS'] || 0),
    elicit: approverToken === undefined ? undefined : { approverToken },
  },
  logger,
  onDecision: (decision) => {
    if (!decision.allow) logger.info({ tool: decision.tool.name, reason: decision.reason }, 'tool call denied');
  },
});

// A wrong URL, token or project would only show as denials: say it once, at start.
const ready = await client.check({ project });
if (ready.ok) logger.info({ project, revision: ready.revision, status: ready.status }, 'policy service ready');
else logger.warn({ reason: ready.reason }, ready.message);

const transport = new StdioServerTransport();
// The host closes stdin to end the session: close the sockets too, so the process exits.
process.stdin.once('end', () => {
  void server.close().finally(() => client.close());
});
await server.connect(transport);
logger.info({ project, requester }, 'IdeA MCP tools example ready on stdio');
