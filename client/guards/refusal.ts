/**
 * The words and the shape of a refused MCP `tools/call`, the same from `guardMcpServer` and from
 * `idea-mcp-proxy`: the text every guard gives (the OpenAI guard's tool message included), and the
 * decision under `_meta["io.ideai/decision"]` for a host that acts on it without reading the text.
 */
import { formatRefusalSafely, type ClientDecision, type FormatRefusal } from '../decision.js';

/** The `_meta` key of a refusal's decision. */
export const DECISION_META_KEY = 'io.ideai/decision';

/** What a refusal tells a host that reads `_meta`: why, which decision, the approval request opened for it, the argument refused. */
export interface RefusalDecisionMeta {
  reason: ClientDecision['reason'];
  decisionId: string;
  /** The approval request the call opened (reason `approval_required`): the id the panel and `/approvals` show. */
  approvalId?: string;
  /** The argument whose condition refused the call (reason `argument_not_allowed`). */
  argument?: string;
}

/** The text result of a refused `tools/call`. */
export interface McpRefusal {
  [key: string]: unknown;
  content: [{ type: 'text'; text: string }];
  isError: true;
  _meta: { [DECISION_META_KEY]: RefusalDecisionMeta };
}

/** The MCP tool result of a refused call: the same text as the OpenAI guard's tool message. */
export function mcpRefusal(decision: ClientDecision, formatRefusal?: FormatRefusal): McpRefusal {
  const meta: RefusalDecisionMeta = { reason: decision.reason, decisionId: decision.decisionId };
  if (decision.approval !== undefined) meta.approvalId = decision.approval.id;
  if (decision.argument !== undefined) meta.argument = decision.argument;
  return {
    content: [{ type: 'text', text: formatRefusalSafely(decision, formatRefusal) }],
    isError: true,
    _meta: { [DECISION_META_KEY]: meta },
  };
}
