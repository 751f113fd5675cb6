/**
 * Example: an agent loop against any OpenAI-compatible endpoint, every tool call decided by the
 * policy service. The tools are the recording stubs of the MCP example.
 *
 *   OPENAI_BASE_URL=http://127.0.0.1:11434/v1 OPENAI_MODEL=qwen2.5 PDP_REQUESTER=QA \
 *     npm run example:openai-invoker -- "Write 'hello' to the project memory"
 *
 * Env: OPENAI_BASE_URL (default: the OpenAI API), OPENAI_API_KEY, OPENAI_MODEL (default
 * gpt-4o-mini), PDP_URL (default http://127.0.0.1:8787), PDP_PROJECT (default demo),
 * PDP_REQUESTER (default QA), PDP_DECIDE_TOKEN, IDEA_TOOL_LOG (file the stubs append to).
 */
import OpenAI from 'openai';
import { pino } from 'pino';
import { PdpClient } from '../../client/index.js';
import { ToolRunRecorder } from '../mcp-server/idea-tools.js';
import { runAgentLoop } from './agent-loop.js';

const logger = pino({ name: 'idea-openai-invoker-example' }, pino.destination(2));
const env = process.env;
const prompt = process.argv.slice(2).join(' ') || 'List the agents of the project, then write a note to the project memory.';
const pdp = new PdpClient({ baseUrl: env['PDP_URL'] || 'http://127.0.0.1:8787', token: env['PDP_DECIDE_TOKEN'] });
const openai = new OpenAI({ apiKey: env['OPENAI_API_KEY'] || 'not-needed-for-local-endpoints', baseURL: env['OPENAI_BASE_URL'] || null });
const recorder = new ToolRunRecorder(env['IDEA_TOOL_LOG'] || undefined);

try {
  const result = await runAgentLoop({
    openai,
    model: env['OPENAI_MODEL'] || 'gpt-4o-mini',
    pdp,
    project: env['PDP_PROJECT'] || 'demo',
    requester: env['PDP_REQUESTER'] || 'QA',
    prompt,
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
