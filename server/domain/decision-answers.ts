/**
 * The answers of a decision (docs/api.md#resolving-a-decision): every body decide.ts gives, with
 * its reason, source and message. A denial's message starts with "Tool X is denied for Y in project
 * Z" and says why and what to do; an allowance names the rule that allowed it.
 */
import {
  MAX_OPEN_APPROVALS_PER_REQUESTER,
  type Decision,
  type DecisionApproval,
  type DecisionReason,
  type PolicySource,
} from '../../schemas/index.js';
import { describeRequester, type ParsedRequester } from '../../schemas/requester.js';
import type { CompiledPolicy } from './compile.js';
import type { ArgumentCheck } from './conditions.js';
import { rateLimitedMessage, type ToolLimit } from './limits.js';
import type { KnownTool } from './project-catalog.js';

export interface DecisionInput {
  readonly project: string;
  readonly requester: string;
  readonly tool: string;
  readonly arguments?: Readonly<Record<string, unknown>> | undefined;
}

/** A decision without its id (the caller stamps it). */
export type DecisionBody = Omit<Decision, 'decisionId'>;

/** What asking the user for a call gave (docs/api.md#approvals-and-temporary-grants); `preview`: nobody was asked (a test, a replay). */
export type AskOutcome =
  | { readonly kind: 'pending'; readonly approval: DecisionApproval }
  | { readonly kind: 'denied' }
  | { readonly kind: 'queue_full'; readonly limit: 'project' | 'requester' }
  | { readonly kind: 'preview' };

/** Why a requester cannot act in a project at all. */
export type Denial = 'unknown_project' | 'invalid_requester' | 'policy_invalid' | 'requester_project_mismatch';

/** The parts of a decision shared by every outcome of one call. */
export interface Subject {
  readonly input: DecisionInput;
  readonly requester: ParsedRequester;
  readonly tool: KnownTool | undefined;
  readonly revision: string;
}

function answer(subject: Subject, allow: boolean, reason: DecisionReason, source: PolicySource, message: string): DecisionBody {
  const { input, requester, tool } = subject;
  return {
    allow,
    reason,
    message,
    source,
    requester: { id: requester.id, kind: requester.kind },
    // Known tools answer with the catalog's own name string, shared by every decision that keeps it.
    tool: tool ? { name: tool.name, access: tool.access } : { name: input.tool, access: 'unknown' },
    project: input.project,
    revision: subject.revision,
  };
}

/** "Tool X is denied for agent Y in project Z": the start of every denial message (built only on denial). */
function deniedFor({ input, requester }: Subject): string {
  return `Tool ${input.tool} is denied for ${describeRequester(requester)} in project ${input.project}`;
}

/** The denials that depend on the requester string and the policy's state alone. */
export function deniedOutright(subject: Subject, denial: Denial, policy: CompiledPolicy | undefined): DecisionBody {
  switch (denial) {
    case 'unknown_project':
      return answer(subject, false, 'unknown_project', 'none', `${deniedFor(subject)}: unknown project.`);
    case 'invalid_requester':
      return answer(
        subject,
        false,
        'invalid_requester',
        'none',
        `${deniedFor(subject)}: a requester is "" or "mcp", ticket-assistant:<project>:<issue> or an agent id (no ':', '/', '\\', control character or leading space).`,
      );
    case 'policy_invalid': {
      const detail = policy?.status === 'invalid' ? ` (${policy.error.message})` : '';
      return answer(
        subject,
        false,
        'policy_invalid',
        'none',
        `${deniedFor(subject)}: the ${policy?.status === 'invalid' && policy.error.file.endsWith('mcp-servers.json') ? 'servers file' : 'policy file'} ${policy?.status === 'invalid' ? policy.error.file : '.ideai/mcp-tool-permissions.json'} is invalid${detail}; every call is denied until it is fixed.`,
      );
    }
    case 'requester_project_mismatch':
      return answer(
        subject,
        false,
        'requester_project_mismatch',
        'none',
        `${deniedFor(subject)}: this ticket assistant belongs to project ${subject.requester.project ?? ''}.`,
      );
  }
}

/** A tool in neither the IdeA catalog nor the project's servers file. */
export function unknownTool(subject: Subject): DecisionBody {
  const { tool } = subject.input;
  return answer(
    subject,
    false,
    'unknown_tool',
    'none',
    `${deniedFor(subject)}: unknown tool (${tool.includes('/') ? "not declared in the project's .ideai/mcp-servers.json" : 'not in the IdeA MCP tool catalog'}).`,
  );
}

/** A call beyond its usage limit (docs/api.md#usage-limits): names the tool, the agent and the limit, and when to retry. */
export function rateLimited(subject: Subject, source: PolicySource, limit: ToolLimit, retryAfterSeconds: number): DecisionBody {
  const refused = answer(subject, false, 'rate_limited', source, rateLimitedMessage(deniedFor(subject), source, limit, retryAfterSeconds));
  refused.retryAfterSeconds = retryAfterSeconds;
  return refused;
}

/** An `issueRef` that is neither a string nor a number, where one is read (docs/api.md#ephemeral-ticket-assistant-policies). */
export function invalidArguments(subject: Subject, source: PolicySource): DecisionBody {
  return answer(
    subject,
    false,
    'invalid_arguments',
    source,
    `${deniedFor(subject)} (policy: ${source}): its argument issueRef must be a ticket as a string or a number (e.g. "#82" or 82).`,
  );
}

/** A call outside a condition: the message says what is allowed, never what was sent. */
export function refusedByCondition(subject: Subject, source: PolicySource, check: ArgumentCheck, boundIssue: string | null): DecisionBody {
  if (source === 'ephemeral' && boundIssue !== null) {
    // The ticket binding of docs/api.md#ephemeral-ticket-assistant-policies keeps its own reason.
    return answer(
      subject,
      false,
      'issue_out_of_bounds',
      source,
      `${deniedFor(subject)} (policy: ${source}): it is bound to ticket #${boundIssue} and the call names another ticket or none.`,
    );
  }
  const refused = answer(
    subject,
    false,
    'argument_not_allowed',
    source,
    `${deniedFor(subject)} (policy: ${source}): argument ${check.argument} ${check.allowed}.`,
  );
  refused.argument = check.argument;
  return refused;
}

/** "Tool X is allowed for agent Y in project Z": the start of an allowance by a grant or a `once` answer. */
function allowedFor({ input, requester }: Subject): string {
  return `Tool ${input.tool} is allowed for ${describeRequester(requester)} in project ${input.project}`;
}

/** A call its allowlist allows. */
export function allowedByPolicy(subject: Subject, source: PolicySource): DecisionBody {
  const { input, requester } = subject;
  return answer(
    subject,
    true,
    'allowed',
    source,
    `Tool ${input.tool} is allowed for ${describeRequester(requester)} in project ${input.project} (policy: ${source}).`,
  );
}

/** A call outside its allowlist (and no grant, `once` or approval for it). */
export function notListed(subject: Subject, source: PolicySource): DecisionBody {
  return answer(
    subject,
    false,
    'not_in_allowlist',
    source,
    `${deniedFor(subject)} (policy: ${source}). Grant it in Permissions > Tools MCP IdeA.`,
  );
}

/** A call a temporary grant allows. */
export function allowedByGrant(subject: Subject): DecisionBody {
  return answer(subject, true, 'allowed', 'grant', `${allowedFor(subject)} (temporary grant).`);
}

/** The one call a user's `once` answer lets through. */
export function approvedOnce(subject: Subject): DecisionBody {
  return answer(subject, true, 'allowed', 'approval', `${allowedFor(subject)} (approved once by the user).`);
}

/** The denial of a call on ask that no `once` answer let through, from what asking the user gave. */
export function notApproved(subject: Subject, source: PolicySource, asked: AskOutcome): DecisionBody {
  const { input, requester } = subject;
  switch (asked.kind) {
    case 'pending': {
      const required = answer(
        subject,
        false,
        'approval_required',
        source,
        `${deniedFor(subject)} until the user approves it (policy: ${source}): approval was requested in Permissions > Tools MCP IdeA (request ${asked.approval.id}, open until ${asked.approval.expiresAt}); the call may be retried once it is granted.`,
      );
      required.approval = asked.approval;
      return required;
    }
    case 'preview':
      return answer(
        subject,
        false,
        'approval_required',
        source,
        `${deniedFor(subject)} until the user approves it (policy: ${source}): the call would ask for approval in Permissions > Tools MCP IdeA (a preview: no request was opened).`,
      );
    case 'queue_full':
      return answer(
        subject,
        false,
        'approval_required',
        source,
        asked.limit === 'requester'
          ? `${deniedFor(subject)} until the user approves it (policy: ${source}), but ${describeRequester(requester)} already has ${MAX_OPEN_APPROVALS_PER_REQUESTER} open approval requests in project ${input.project}: no request was opened. Answer or let expire its pending requests in Permissions > Tools MCP IdeA, then retry.`
          : `${deniedFor(subject)} until the user approves it (policy: ${source}), but the approval queue of project ${input.project} is full: no request was opened. Answer or let expire the pending requests in Permissions > Tools MCP IdeA, then retry.`,
      );
    case 'denied':
      return answer(
        subject,
        false,
        'approval_denied',
        source,
        `${deniedFor(subject)} (policy: ${source}): the user refused to approve it in Permissions > Tools MCP IdeA; do not retry it for now.`,
      );
  }
}
