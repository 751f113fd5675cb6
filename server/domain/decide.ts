/**
 * The decision function (SPEC §4): pure, synchronous, O(1) in the number of agents and tools.
 * Every path that is not an explicit grant denies.
 */
import { findTool, type Decision, type DecisionReason, type PolicySource } from '../../schemas/index.js';
import { READ_ONLY_ALLOWLIST, type Allowlist, type CompiledPolicy } from './compile.js';
import { describeRequester, normalizeIssueRef, parseRequester, type ParsedRequester } from './requester.js';

/** An ephemeral ticket-assistant grant, as the decision needs it. */
export interface EphemeralGrant {
  readonly allowlist: Allowlist;
  /** Normalized ticket (no `#`) the issue-scoped tools are bound to, or null. */
  readonly boundIssue: string | null;
}

export interface DecisionInput {
  readonly project: string;
  readonly requester: string;
  readonly tool: string;
  readonly arguments?: Readonly<Record<string, unknown>> | undefined;
}

/** The ephemeral grant registered for exactly this requester in this project, if any. */
export type EphemeralLookup = (project: string, requesterId: string) => EphemeralGrant | undefined;

/** Nothing registered: every ticket assistant is read-only. */
export const NO_EPHEMERAL: EphemeralLookup = () => undefined;

/** A decision without its id (the caller stamps it). */
export type DecisionBody = Omit<Decision, 'decisionId'>;

/** The effective allowlist of a requester, as `/decide` and the effective-policy route see it. */
export interface EffectiveResolution {
  readonly requester: ParsedRequester;
  readonly allowlist: Allowlist | null;
  readonly boundIssue: string | null;
  /** Set when the requester cannot act in this project at all. */
  readonly denial: 'unknown_project' | 'policy_invalid' | 'requester_project_mismatch' | null;
}

/** Resolves who the requester is and which allowlist applies: override > default > read-only. */
export function resolveEffective(
  project: string,
  rawRequester: string,
  policy: CompiledPolicy | undefined,
  ephemeral: EphemeralLookup,
): EffectiveResolution {
  const requester = parseRequester(rawRequester);
  if (!policy) return { requester, allowlist: null, boundIssue: null, denial: 'unknown_project' };
  if (policy.status === 'invalid') return { requester, allowlist: null, boundIssue: null, denial: 'policy_invalid' };
  switch (requester.kind) {
    case 'anonymous':
      return { requester, allowlist: READ_ONLY_ALLOWLIST, boundIssue: null, denial: null };
    case 'ticket-assistant': {
      if (requester.project !== project) {
        return { requester, allowlist: null, boundIssue: null, denial: 'requester_project_mismatch' };
      }
      const grant = ephemeral(project, requester.id);
      return grant
        ? { requester, allowlist: grant.allowlist, boundIssue: grant.boundIssue, denial: null }
        : { requester, allowlist: READ_ONLY_ALLOWLIST, boundIssue: null, denial: null };
    }
    case 'agent':
      return {
        requester,
        allowlist: policy.overrides.get(requester.id) ?? policy.projectDefault,
        boundIssue: null,
        denial: null,
      };
  }
}

/**
 * Decides one tool call against the project's compiled policy (undefined: unknown project).
 * Never throws for any input.
 */
export function decide(input: DecisionInput, policy: CompiledPolicy | undefined, ephemeral: EphemeralLookup): DecisionBody {
  const resolution = resolveEffective(input.project, input.requester, policy, ephemeral);
  const { requester } = resolution;
  const tool = findTool(input.tool);
  const revision = policy?.revision ?? 'none';
  const subject = `Tool ${input.tool} is denied for ${describeRequester(requester)} in project ${input.project}`;
  // Known tools answer with the catalog's own name string, shared by every decision that keeps it.
  const toolName = tool ? tool.name : input.tool;
  const answer = (allow: boolean, reason: DecisionReason, source: PolicySource, message: string): DecisionBody => ({
    allow,
    reason,
    message,
    source,
    requester: { id: requester.id, kind: requester.kind },
    tool: { name: toolName, access: tool ? tool.access : 'unknown' },
    project: input.project,
    revision,
  });

  switch (resolution.denial) {
    case 'unknown_project':
      return answer(false, 'unknown_project', 'none', `${subject}: unknown project.`);
    case 'policy_invalid': {
      const detail = policy?.status === 'invalid' ? ` (${policy.error.message})` : '';
      return answer(
        false,
        'policy_invalid',
        'none',
        `${subject}: the policy file .ideai/mcp-tool-permissions.json is invalid${detail}; every call is denied until it is fixed.`,
      );
    }
    case 'requester_project_mismatch':
      return answer(
        false,
        'requester_project_mismatch',
        'none',
        `${subject}: this ticket assistant belongs to project ${requester.project ?? ''}.`,
      );
    case null:
      break;
  }
  const allowlist = resolution.allowlist ?? READ_ONLY_ALLOWLIST;
  const { source } = allowlist;
  if (!tool) {
    return answer(false, 'unknown_tool', 'none', `${subject}: unknown tool (not in the IdeA MCP tool catalog).`);
  }
  if (!allowlist.allowed.has(tool.name)) {
    return answer(
      false,
      'not_in_allowlist',
      source,
      `${subject} (policy: ${source}). Grant it in Permissions > Tools MCP IdeA.`,
    );
  }
  if (resolution.boundIssue !== null && tool.issueScoped) {
    const issueRef = input.arguments?.['issueRef'];
    const asked = typeof issueRef === 'string' || typeof issueRef === 'number' ? normalizeIssueRef(String(issueRef)) : null;
    if (asked !== resolution.boundIssue) {
      const target = asked === null ? 'no issueRef' : `#${asked}`;
      return answer(
        false,
        'issue_out_of_bounds',
        source,
        `${subject} (policy: ${source}): it is bound to ticket #${resolution.boundIssue} and the call targets ${target}.`,
      );
    }
  }
  return answer(
    true,
    'allowed',
    source,
    `Tool ${input.tool} is allowed for ${describeRequester(requester)} in project ${input.project} (policy: ${source}).`,
  );
}
