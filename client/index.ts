/**
 * Fail-closed enforcement clients of the IdeA MCP tool permission service (SPEC §8): the HTTP
 * client, the MCP server guard and the OpenAI tool-call guard.
 */
export { PdpClient, type PdpClientOptions, type PermissionsResult, type WriteOptions } from './pdp-client.js';
export { PdpError, type TransportErrorCode } from './errors.js';
export {
  CLIENT_DENIAL_REASONS,
  decideQueryFor,
  describeRequester,
  refusalText,
  type ClientDecision,
  type ClientDenialReason,
} from './decision.js';
export type { GuardClient, GuardLogger } from './guard-common.js';
export { guardMcpServer, mcpRefusal, type McpGuard, type McpGuardOptions, type McpRefusal, type McpRequestExtra } from './mcp-guard.js';
export {
  guardOpenAiToolCalls,
  type ChatCompletionCustomToolCall,
  type ChatCompletionToolCall,
  type ChatCompletionToolMessage,
  type OpenAiGuardOptions,
  type OpenAiToolCall,
  type OpenAiToolOutput,
  type ResponsesFunctionCall,
  type ResponsesFunctionCallOutput,
} from './openai-guard.js';
export type { DecideQuery, Decision } from '../schemas/api.js';
