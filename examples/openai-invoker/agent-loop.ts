/**
 * An agent loop on the Chat Completions API whose tool calls all go through the policy service:
 * the model proposes calls, the guard decides them in one batch, only the allowed ones run, and
 * the refusals go back to the model as tool messages so it can explain or change course.
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { guardOpenAiToolCalls, type GuardClient, type ChatCompletionToolCall } from '../../client/openai.js';
import { TOOL_CATALOG } from '../../schemas/catalog.js';

/** The 25 IdeA tools as Chat Completions function tools. */
export const IDEA_FUNCTION_TOOLS: ChatCompletionTool[] = TOOL_CATALOG.map((tool) => ({
  type: 'function',
  function: {
    name: tool.name,
    description: `${tool.label} (${tool.access})`,
    parameters: {
      type: 'object',
      properties: tool.issueScoped ? { issueRef: { type: 'string', description: 'The ticket, e.g. "#82".' } } : {},
      additionalProperties: true,
    },
  },
}));

export interface AgentLoopOptions {
  openai: OpenAI;
  model: string;
  pdp: GuardClient;
  project: string;
  /** The agent this loop runs as (its id in the policy). */
  requester: string;
  prompt: string;
  /** Runs one allowed tool call. */
  invoke: (name: string, args: Record<string, unknown>, call: ChatCompletionToolCall) => unknown;
  /** Most model turns before giving up. Default 8. */
  maxTurns?: number;
  /** How many allowed calls of one turn run at once (outputs stay in the model's order). Default 1. */
  concurrency?: number;
  /** How long a call on ask waits for the user's approval, in ms. Default 0: refused at once, to retry later. */
  approvalWaitMs?: number;
}

export interface AgentLoopResult {
  /** The model's last text answer (null when it stopped without one). */
  answer: string | null;
  messages: ChatCompletionMessageParam[];
  turns: number;
}

export async function runAgentLoop(options: AgentLoopOptions): Promise<AgentLoopResult> {
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: options.prompt }];
  const maxTurns = options.maxTurns ?? 8;
  for (let turn = 1; turn <= maxTurns; turn += 1) {
    const completion = await options.openai.chat.completions.create({
      model: options.model,
      messages,
      tools: IDEA_FUNCTION_TOOLS,
    });
    const message = completion.choices[0]?.message;
    if (message === undefined) return { answer: null, messages, turns: turn };
    messages.push(message);
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) return { answer: message.content, messages, turns: turn };
    const { outputs } = await guardOpenAiToolCalls(calls, {
      client: options.pdp,
      project: options.project,
      requester: options.requester,
      invoke: (name, args, call) => options.invoke(name, args, call as ChatCompletionToolCall),
      concurrency: options.concurrency,
      approval: { waitMs: options.approvalWaitMs ?? 0 },
    });
    messages.push(...outputs);
  }
  return { answer: null, messages, turns: maxTurns };
}
