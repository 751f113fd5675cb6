/**
 * The command line of `idea-mcp-proxy` (docs/client.md): its options before `--`, the real
 * server's command after. The agent id may come from `IDEA_AGENT_ID` and the decide token from
 * `PDP_DECIDE_TOKEN` or a file; no token is ever read from the command line (other users of the
 * machine can read it in the process list).
 */
import { MIN_TOKEN_FILE_CHARACTERS, readTokenFileSync, TokenFileProblem } from '../../schemas/token-file.js';
import { checkOptions } from '../http/options.js';
import { SERVER_ID_REGEX } from '../../schemas/servers.js';

export interface ProxyCommand {
  pdp: string;
  socketPath: string | undefined;
  project: string;
  agent: string;
  token: string | undefined;
  filterToolsList: boolean;
  approvalWaitMs: number;
  approverToken: string | undefined;
  timeoutMs: number;
  /** `--server <id>` or `IDEA_MCP_SERVER`: the id the project's `.ideai/mcp-servers.json` declares the server under. */
  serverId: string | undefined;
  server: { command: string; args: string[] };
}

export const USAGE = `Usage: idea-mcp-proxy --project <id> [options] -- <server command> [server arguments...]

Guards any stdio MCP server with the IdeA MCP tool permission service: every tools/call is decided
by the service before the server sees it, tools/list shows only the tools the agent may call.

Options:
  --pdp <url>                  the service (default http://127.0.0.1:8787, or PDP_URL)
  --socket <path>              the service's unix socket (PDP_SOCKET of the service); preferred over TCP
  --project <id>               the project the tools act on (required)
  --agent <id>                 the agent calling the tools (default: IDEA_AGENT_ID)
  --token-file <file>          a file holding the decide token (default: PDP_DECIDE_TOKEN)
  --no-filter                  leave tools/list unfiltered (calls are still decided)
  --approval-wait-ms <ms>      how long a call that needs the user's approval waits for it (default 0)
  --approver-token-file <file> ask the user in the host (elicitation) and answer with this approver token
  --server <id>                the server's id in the project's .ideai/mcp-servers.json (default: IDEA_MCP_SERVER):
                               its tools are decided as <id>/<tool>, resources/read and prompts/get too,
                               and the tools it lists undeclared are reported for a person to declare
  --timeout-ms <ms>            deadline of one decision (default 500)
  -h, --help                   this text

stdout carries the MCP messages only; the proxy's log lines and the server's stderr go to stderr.
`;

/** A command line the proxy cannot run with: the message says what to fix. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const VALUE_OPTIONS = new Set([
  '--pdp',
  '--socket',
  '--project',
  '--agent',
  '--token-file',
  '--approval-wait-ms',
  '--approver-token-file',
  '--timeout-ms',
  '--server',
]);

/** `null` for `--help`. */
export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv): ProxyCommand | null {
  const values = new Map<string, string>();
  let filterToolsList = true;
  let index = 0;
  for (; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '--') break;
    if (arg === '-h' || arg === '--help') return null;
    if (arg === '--no-filter') {
      filterToolsList = false;
      continue;
    }
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (name === '--token' || name === '--approver-token') {
      throw new UsageError(
        `${name} is not accepted: a token on the command line is visible to every user of the machine; use ${name}-file or PDP_DECIDE_TOKEN`,
      );
    }
    if (!VALUE_OPTIONS.has(name)) throw new UsageError(`unknown option ${JSON.stringify(arg)} (the server's command goes after --)`);
    const value = inline ?? argv[(index += 1)];
    if (value === undefined || value === '') throw new UsageError(`${name} needs a value`);
    values.set(name, value);
  }
  const serverArgs = argv.slice(index + 1);
  const command = serverArgs[0];
  if (index >= argv.length || command === undefined)
    throw new UsageError('the MCP server to start is missing: add -- <server command> [arguments...]');
  const project = values.get('--project');
  if (project === undefined) throw new UsageError('--project is required');
  const agent = values.get('--agent') ?? env.IDEA_AGENT_ID ?? '';
  const tokenFile = values.get('--token-file');
  const approverFile = values.get('--approver-token-file');
  const parsed: ProxyCommand = {
    pdp: values.get('--pdp') ?? nonEmpty(env.PDP_URL) ?? 'http://127.0.0.1:8787',
    socketPath: values.get('--socket'),
    project,
    agent,
    token: tokenFile === undefined ? nonEmpty(env.PDP_DECIDE_TOKEN) : readTokenFile(tokenFile, '--token-file'),
    filterToolsList,
    approvalWaitMs: milliseconds(values.get('--approval-wait-ms'), '--approval-wait-ms', 0, MAX_APPROVAL_WAIT_MS),
    approverToken: approverFile === undefined ? undefined : readTokenFile(approverFile, '--approver-token-file'),
    timeoutMs: milliseconds(values.get('--timeout-ms'), '--timeout-ms', 500),
    serverId: serverIdOf(values.get('--server') ?? nonEmpty(env.IDEA_MCP_SERVER)),
    server: { command, args: serverArgs.slice(1) },
  };
  checkClientOptions(parsed);
  return parsed;
}

/** What the proxy's `PdpClient` would refuse (a URL that is not http(s), a token with a space) is a wrong command line too. */
function checkClientOptions(command: ProxyCommand): void {
  try {
    checkOptions({ baseUrl: command.pdp, socketPath: command.socketPath, token: command.token, timeoutMs: command.timeoutMs });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

function serverIdOf(id: string | undefined): string | undefined {
  if (id !== undefined && !SERVER_ID_REGEX.test(id)) {
    throw new UsageError(`--server ${JSON.stringify(id)}: a server id matches ^[a-z][a-z0-9-]{0,31}$ and is not "idea"`);
  }
  return id;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** The guards' own bound on `approval.waitMs`, a day: a longer wait would be refused at the first call on ask. */
const MAX_APPROVAL_WAIT_MS = 86_400_000;

function milliseconds(raw: string | undefined, name: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value))
    throw new UsageError(`${name} must be a whole number of milliseconds (got ${JSON.stringify(raw)})`);
  if (value > max) throw new UsageError(`${name} must be at most ${String(max)} ms (got ${raw})`);
  return value;
}

/**
 * A token file under the service's own rules (docs/api.md#security): not a link, a regular file of this
 * user (or root) that group and others can neither read nor write, holding 16 characters or more,
 * read from the descriptor that was checked.
 */
function readTokenFile(file: string, option: string): string {
  try {
    return readTokenFileSync(file, { setting: option, owner: "this user's", rootMayOwn: true, minCharacters: MIN_TOKEN_FILE_CHARACTERS });
  } catch (error) {
    if (error instanceof TokenFileProblem) throw new UsageError(`${option} ${file} ${error.why}: refusing to start. ${error.fix}`);
    throw error;
  }
}
