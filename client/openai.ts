/**
 * `idea-mcp-permissions-client/openai`: the guard of an OpenAI-compatible tool-call invoker, for
 * Chat Completions `tool_calls` and Responses API `function_call` items (docs/api.md#the-client-sdk).
 *
 * @example
 * ```ts
 * import { PdpClient } from 'idea-mcp-permissions-client';
 * import { guardOpenAiToolCalls } from 'idea-mcp-permissions-client/openai';
 *
 * const { outputs, decisions } = await guardOpenAiToolCalls(message.tool_calls ?? [], {
 *   client: new PdpClient({ baseUrl: 'http://127.0.0.1:8787' }), project: 'demo', requester: 'QA',
 *   invoke: (name, args) => tools[name](args),
 * });
 * ```
 *
 * @packageDocumentation
 */
export {
  guardOpenAiToolCalls,
  type ChatCompletionCustomToolCall,
  type ChatCompletionToolCall,
  type ChatCompletionToolMessage,
  type GuardedToolCalls,
  type OpenAiGuardOptions,
  type OpenAiToolCall,
  type OpenAiToolOutput,
  type ResponsesFunctionCall,
  type ResponsesFunctionCallOutput,
} from './openai/guard.js';
export type { ClientDecision, FormatRefusal } from './decision.js';
export type { ApprovalWaitOptions } from './guards/approval-wait.js';
export type { GuardClient, GuardLogger, HostValue } from './guards/common.js';
