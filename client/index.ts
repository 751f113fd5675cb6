/**
 * `idea-mcp-permissions-client`: the fail-closed HTTP client of the IdeA MCP tool permission
 * service (docs/api.md#the-client-sdk). The guards have their own entry points, so a host loads only what it
 * uses: `idea-mcp-permissions-client/mcp` (needs `@modelcontextprotocol/sdk`) and
 * `idea-mcp-permissions-client/openai`.
 *
 * @example
 * ```ts
 * import { PdpClient } from 'idea-mcp-permissions-client';
 *
 * const pdp = new PdpClient({ baseUrl: 'http://127.0.0.1:8787', token: process.env.PDP_DECIDE_TOKEN });
 * const decision = await pdp.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' });
 * console.log(decision.allow, decision.message);
 * ```
 *
 * @packageDocumentation
 */
export {
  PdpClient,
  MAX_DECISION_BYTES,
  type AllowlistWriteOptions,
  type AnswerApprovalOptions,
  type CallOptions,
  type PermissionsResult,
  type WriteOptions,
} from './http/pdp-client.js';
export type { ApprovalWaitOptions } from './guards/approval-wait.js';
export type { PdpClientOptions } from './http/options.js';
export type { PdpClientLogger } from './http/socket-trust.js';
export type { CheckFailureReason, CheckOptions, CheckResult } from './http/check.js';
export type { EventHandlers, EventSubscription } from './events/event-stream.js';
export type { ApprovalEvent, PolicyEvent } from '../schemas/events.js';
export { PdpError, type TransportErrorCode } from './http/errors.js';
export {
  CLIENT_DENIAL_REASONS,
  decideQueryFor,
  describeRequester,
  refusalText,
  type ClientDecision,
  type ClientDenialReason,
  type FormatRefusal,
} from './decision.js';
export { MAX_CAUSE_LENGTH } from './causes.js';
export { GUARD_WARNING_TYPE } from './guards/common.js';
export type { GuardClient, GuardLogger, HostValue } from './guards/common.js';
export type {
  CatalogResponse,
  DecideQuery,
  Decision,
  DecisionReason,
  EffectivePolicy,
  EphemeralPolicy,
  EphemeralPolicyBody,
  PermissionsView,
  PolicySource,
  ProjectStatus,
  RecentDecision,
  Requester,
  RequesterKind,
} from '../schemas/api.js';
export type { PolicyDocument } from '../schemas/policy.js';
export type {
  PolicyProblem,
  PreviewAgent,
  PreviewReplay,
  PreviewResponse,
  ReplayChange,
  ReplayOutcome,
} from '../schemas/policy-as-code.js';
export type {
  Approval,
  ApprovalAnswer,
  ApprovalAnswerResponse,
  ApprovalAnsweredBy,
  ApprovalStatus,
  ApprovalVia,
  DecisionApproval,
  Grant,
  GrantCreateBody,
} from '../schemas/approvals.js';
