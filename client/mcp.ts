/**
 * `idea-mcp-permissions-client/mcp`: the guard of an `@modelcontextprotocol/sdk` server
 * (docs/api.md#the-client-sdk). It needs the MCP SDK, an optional peer dependency of this package.
 *
 * @example
 * ```ts
 * import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
 * import { PdpClient } from 'idea-mcp-permissions-client';
 * import { guardMcpServer } from 'idea-mcp-permissions-client/mcp';
 *
 * const server = new McpServer({ name: 'idea', version: '1.0.0' });
 * guardMcpServer(server, {
 *   client: new PdpClient({ baseUrl: 'http://127.0.0.1:8787' }),
 *   project: 'demo',
 *   requester: process.env.IDEA_AGENT_ID ?? '',
 * });
 * ```
 *
 * @packageDocumentation
 */
export {
  guardMcpServer,
  mcpRefusal,
  DECISION_META_KEY,
  type McpGuard,
  type McpGuardOptions,
  type McpRefusal,
  type McpRequestExtra,
  type RefusalDecisionMeta,
} from './mcp/guard.js';
export type { ClientDecision, FormatRefusal } from './decision.js';
export type { ApprovalWaitOptions } from './guards/approval-wait.js';
export type { GuardClient, GuardLogger, HostValue } from './guards/common.js';
export {
  ELICITATION_CHOICES,
  ELICITATION_FIELD,
  type ApprovalElicitOptions,
  type McpApprovalOptions,
} from './guards/approval-elicitation.js';
