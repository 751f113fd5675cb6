/**
 * Example: an agent loop against any OpenAI-compatible endpoint, every tool call decided by the
 * policy service. The tools are the recording stubs of the MCP example.
 *
 *   IDEA_AGENT_ID=QA OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=qwen2.5 \
 *     npm run example:openai-invoker -- "Write 'hello' to the project memory"
 *
 * The loop runs as one agent: its id comes from IDEA_AGENT_ID (unset: the anonymous, read-only
 * requester). Env: OPENAI_BASE_URL (default: the OpenAI API), OPENAI_API_KEY, OPENAI_MODEL
 * (default gpt-4o-mini), PDP_SOCKET (the service's unix socket: preferred when set), PDP_URL
 * (default http://127.0.0.1:8787, used when PDP_SOCKET is unset), PDP_PROJECT (default demo),
 * PDP_DECIDE_TOKEN, PDP_APPROVAL_WAIT_MS (how long a call on ask waits for the user's answer;
 * default 0, no wait), IDEA_TOOL_LOG (file the stubs append to).
 */
import OpenAI from 'openai';
import { pino } from 'pino';
import { PdpClient } from '../../client/index.js';
import { ToolRunRecorder } from '../mcp-server/idea-tools.js';
import { runAgentLoop } from './agent-loop.js';

const logger = pino({ name: 'idea-openai-invoker-example' }, pino.destination(2));
const env = process.env;
const requester = env['IDEA_AGENT_ID'] ?? ''; // the agent this loop runs as
const prompt = process.argv.slice(2).join(' ') || 'List the agents of the project, then write a note to the project memory.';
const socketPath = env['PDP_SOCKET'] === 'off' ? undefined : env['PDP_SOCKET'] || undefined;
const pdp = new PdpClient({
  ...(socketPath === undefined ? { baseUrl: env['PDP_URL'] || 'http://127.0.0.1:8787' } : { socketPath }),
  token: env['PDP_DECIDE_TOKEN'],
});
const openai = new OpenAI({ apiKey: env['OPENAI_API_KEY'] || 'not-needed-for-local-endpoints', baseURL: env['OPENAI_BASE_URL'] || null });
const recorder = new ToolRunRecorder(env['IDEA_TOOL_LOG'] || undefined);

const project = env['PDP_PROJECT'] || 'demo';
// A wrong URL, token or project would only show as refusals: say it once, before the first turn.
const ready = await pdp.check({ project });
if (!ready.ok) logger.warn({ reason: ready.reason }, ready.message);

try {
  const result = await runAgentLoop({
    openai,
    model: env['OPENAI_MODEL'] || 'gpt-4o-mini',
    pdp,
    project,
    requester,
    prompt,
    concurrency: 4,
    approvalWaitMs: Number(env['PDP_APPROVAL_WAIT_MS'] || 0),
    invoke: (name, args) => {
      recorder.record(name, args);
      logger.info({ tool: name }, 'tool ran');
      return `${name} done`;
    },
  });
  for (const message of result.messages) {
    if (message.role === 'tool') logger.info({ toolCallId: message.tool_call_id, content: message.content }, 'tool output');
  }
  process.stdout.write(`${result.answer ?? '(no answer)'}\n`);
} finally {
  await pdp.close();
}
