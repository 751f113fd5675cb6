/**
 * The decision function (docs/api.md#resolving-a-decision,
 * docs/api.md#approvals-and-temporary-grants, docs/api.md#conditions-on-a-tools-arguments):
 * synchronous, O(1) in the number of agents and tools, and pure: it reads the grants and limit
 * windows it is given and hands back, as effects, what a call needs done (spend a `once`, open a
 * request, count a limited call); the decision service applies them
 * (server/decisions/apply-effects.ts). Every path that is not an explicit grant denies.
 * Each verdict says whether it may be reused for another call with the same policy, requester and
 * tool (`Verdict.reusable`): only the rule that produced it knows whether it read the arguments, a
 * grant, an approval or an ephemeral policy.
 */
import { READ_ONLY_ALLOWLIST, makeAllowlist, type Allowlist, type CompiledPolicy } from './compile.js';
import { IDEA_CATALOG, type KnownTool, type ProjectCatalog } from './project-catalog.js';
import { ISSUE_REF, checkArguments, type ArgumentsVerdict } from './conditions.js';
import { parseRequester, type ParsedRequester } from '../../schemas/requester.js';
import type { PolicySource } from '../../schemas/index.js';
import type { LimitsPort, ToolLimit } from './limits.js';
import {
  allowedByGrant,
  allowedByPolicy,
  approvedOnce,
  deniedOutright,
  invalidArguments,
  notApproved,
  notListed,
  rateLimited,
  refusedByCondition,
  unknownTool,
  type AskOutcome,
  type DecisionBody,
  type DecisionInput,
  type Denial,
  type Subject,
} from './decision-answers.js';

export type { AskOutcome, DecisionBody, DecisionInput, Subject } from './decision-answers.js';

/** An ephemeral ticket-assistant grant, as the decision needs it. */
export interface EphemeralGrant {
  /** Its tools; with a bound ticket, each issue-scoped one has the condition `issueRef in [ticket]`. */
  readonly allowlist: Allowlist;
  /** Normalized ticket (no `#`) the issue-scoped tools are bound to, or null. */
  readonly boundIssue: string | null;
  /** The names as registered, and the catalog `allowlist` was built under (a project's catalog changes with its servers file). */
  readonly tools: readonly string[];
  readonly catalog: ProjectCatalog;
}

/**
 * The grant of an ephemeral policy: its tools and, with a bound ticket, the condition
 * `issueRef in [ticket]` on each issue-scoped one (docs/api.md#ephemeral-ticket-assistant-policies,
 * docs/api.md#conditions-on-a-tools-arguments).
 */
export function ephemeralGrant(
  tools: readonly string[],
  boundIssue: string | null,
  catalog: ProjectCatalog = IDEA_CATALOG,
): EphemeralGrant {
  if (boundIssue === null) return { allowlist: makeAllowlist('ephemeral', tools, [], undefined, catalog), boundIssue, tools, catalog };
  const scoped = tools.filter((name) => catalog.find(name)?.issueScoped === true);
  const conditions = Object.fromEntries(scoped.map((name) => [name, { [ISSUE_REF]: { in: [boundIssue] } }]));
  return { allowlist: makeAllowlist('ephemeral', tools, [], conditions, catalog), boundIssue, tools, catalog };
}

/** The ephemeral grant registered for exactly this requester in this project, if any. */
export type EphemeralLookup = (project: string, requesterId: string) => EphemeralGrant | undefined;

/** Nothing registered: every ticket assistant is read-only. */
export const NO_EPHEMERAL: EphemeralLookup = () => undefined;

/**
 * What the temporary grants say of a call: `ok` when one allows it, `none` when none covers the tool,
 * else why the conditions a grant kept refuse it (docs/api.md#conditions-on-a-tools-arguments).
 */
export type GrantVerdict = { readonly kind: 'none' } | ArgumentsVerdict;

/**
 * The temporary grants and approval requests a decision for an agent consults after its allowlist
 * (docs/api.md#approvals-and-temporary-grants). Only ever called for an agent and a catalog tool its allowlist does not allow:
 * {@link decide} reads `granted`; the decision service spends a `once` and opens a request when a decision asks it to.
 */
export interface ApprovalsPort {
  /** Whether a temporary grant lets `requester` make this call of `tool` (within the conditions it kept). */
  granted(project: string, requester: string, tool: string, args: Readonly<Record<string, unknown>> | undefined): GrantVerdict;
  /** True for exactly one call after the user answered `once` for this requester, tool and ticket. */
  consumeOnce(project: string, requester: string, tool: string, issueRef: string | undefined): boolean;
  /** Opens, or reuses, the pending request for this requester and tool. */
  request(project: string, requester: string, tool: string, issueRef: string | undefined): AskOutcome;
}

/** The effective allowlist of a requester, as `/decide` and the effective-policy route see it. */
export interface EffectiveResolution {
  readonly requester: ParsedRequester;
  readonly allowlist: Allowlist | null;
  readonly boundIssue: string | null;
  /** Set when the requester cannot act in this project at all. */
  readonly denial: Denial | null;
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
  // Before the policy's state: a malformed requester is the caller's mistake, whatever the file says.
  if (requester.kind === 'invalid') return { requester, allowlist: null, boundIssue: null, denial: 'invalid_requester' };
  if (policy.status === 'invalid') return { requester, allowlist: null, boundIssue: null, denial: 'policy_invalid' };
  switch (requester.kind) {
    case 'anonymous':
      return { requester, allowlist: policy.readOnly, boundIssue: null, denial: null };
    case 'ticket-assistant': {
      if (requester.project !== project) {
        return { requester, allowlist: null, boundIssue: null, denial: 'requester_project_mismatch' };
      }
      const registered = ephemeral(project, requester.id);
      // Built again under the project's catalog now: a tool declared (or undeclared) since counts as it is now.
      const grant =
        registered === undefined || registered.catalog === policy.catalog
          ? registered
          : ephemeralGrant(registered.tools, registered.boundIssue, policy.catalog);
      return grant
        ? { requester, allowlist: grant.allowlist, boundIssue: grant.boundIssue, denial: null }
        : { requester, allowlist: policy.readOnly, boundIssue: null, denial: null };
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
 * Whether `tool` is on ask for the agent `agentId` in this policy: what keeps an approval request
 * answerable (docs/api.md#approvals-and-temporary-grants). An invalid policy asks for nothing (it denies everything).
 */
export function isOnAsk(policy: CompiledPolicy | undefined, agentId: string, tool: string): boolean {
  if (policy?.status !== 'ok') return false;
  return (policy.overrides.get(agentId) ?? policy.projectDefault).ask.has(tool);
}

/** One requester's calls of one tool in a project: what a `once` answer, a request and a limit's count are kept under. */
export interface CallKey {
  readonly project: string;
  readonly requester: string;
  readonly tool: string;
}

/** An effect: count one allowed call of a limited tool (docs/api.md#usage-limits). */
export interface CountCall extends CallKey {
  readonly limit: ToolLimit;
}

/** An effect: spend the user's `once` answer for this call if there is one, else open (or reuse) its approval request. */
export interface AskUser extends CallKey {
  /** The ticket the call names: a request and a `once` answer are bound to it (docs/api.md#ephemeral-ticket-assistant-policies). */
  readonly issueRef: string | undefined;
}

/** A call's answer, whether the same policy, requester and tool always give it, and the effect it asks for. */
export interface Verdict {
  readonly kind: 'verdict';
  readonly body: DecisionBody;
  /** True when nothing but the policy, the requester and the tool decided it (decision-memo.ts keeps only those). */
  readonly reusable: boolean;
  /** Set on an allowed call of a limited tool: the caller counts it. */
  readonly count: CountCall | undefined;
}

/**
 * A call only the user can decide (an agent's tool on ask, no grant): the caller applies `ask`, then
 * {@link answerAsk} builds the verdict from what it gave.
 */
export interface NeedsApproval {
  readonly kind: 'ask';
  readonly ask: AskUser;
  readonly subject: Subject;
  readonly source: PolicySource;
  /** Counted when the user's `once` answer lets the call through. */
  readonly limited: CountCall | undefined;
}

/** What {@link decide} gives: the verdict, or the approvals step it needs first. */
export type Decided = Verdict | NeedsApproval;

/** What the approvals step gave: the user's `once` answer spent on this call, or what asking gave. */
export type AskAnswer = { readonly kind: 'once' } | AskOutcome;

/** A verdict; a limited call is never reusable (the next may find the window full) and is counted only when allowed. */
function verdict(body: DecisionBody, reusable: boolean, limited?: CountCall): Verdict {
  return { kind: 'verdict', body, reusable: reusable && limited === undefined, count: body.allow ? limited : undefined };
}

/**
 * Decides one tool call against the project's compiled policy (undefined: unknown project), and
 * changes nothing: `grants` and `limits` are only read, and what a call needs done (spend a `once`,
 * open a request, count a limited call) comes back as effects for the caller to apply. Without
 * `grants`, a tool on ask is denied like any tool outside the allowlist; without `limits`, limits are
 * not enforced (docs/api.md#usage-limits). Never throws for any input.
 */
export function decide(
  input: DecisionInput,
  policy: CompiledPolicy | undefined,
  ephemeral: EphemeralLookup,
  grants?: Pick<ApprovalsPort, 'granted'>,
  limits?: Pick<LimitsPort, 'retryAfter'>,
): Decided {
  const resolution = resolveEffective(input.project, input.requester, policy, ephemeral);
  const tool = (policy?.status === 'ok' ? policy.catalog : IDEA_CATALOG).find(input.tool);
  const subject: Subject = { input, requester: resolution.requester, tool, revision: policy?.revision ?? 'none' };
  // These depend on the requester string and the policy's state alone.
  if (resolution.denial !== null) {
    return verdict(deniedOutright(subject, resolution.denial, policy), resolution.denial !== 'unknown_project');
  }
  const allowlist = resolution.allowlist ?? READ_ONLY_ALLOWLIST;
  const { source } = allowlist;
  if (!tool) return verdict(unknownTool(subject), true);
  // A ticket assistant's allowlist is its ephemeral policy (or its absence), which comes and goes.
  const viaEphemeral = resolution.requester.kind === 'ticket-assistant';
  const listed = allowlist.allowed.has(tool.name);
  // Conditions narrow what the policy allows or asks for; nothing after them (grant, once, approval) lifts them.
  const checks = listed || allowlist.ask.has(tool.name) ? allowlist.conditions.get(tool.name) : undefined;
  if (checks !== undefined) {
    const argumentsVerdict = checkArguments(checks, input.arguments);
    if (argumentsVerdict.kind === 'invalid_arguments') return verdict(invalidArguments(subject, source), false);
    if (argumentsVerdict.kind === 'refused') {
      return verdict(refusedByCondition(subject, source, argumentsVerdict.check, resolution.boundIssue), false);
    }
  }
  // A limit counts what the rest allows (allowlist, grant, once, approval), and none of them lifts it.
  const limit = limits === undefined ? undefined : allowlist.limits.get(tool.name);
  let limited: CountCall | undefined;
  if (limit !== undefined && limits !== undefined) {
    const requester = resolution.requester.id;
    const retryAfterSeconds = limits.retryAfter(input.project, requester, tool.name, limit);
    if (retryAfterSeconds !== undefined) return verdict(rateLimited(subject, source, limit, retryAfterSeconds), false);
    limited = { project: input.project, requester, tool: tool.name, limit };
  }
  const readsCall = checks !== undefined || viaEphemeral;
  if (!listed) {
    const asksApprovals = grants !== undefined && resolution.requester.kind === 'agent';
    if (asksApprovals) {
      const approved = decideByApproval(subject, tool, allowlist, grants, limited);
      if (approved !== undefined) return approved;
    }
    // With approvals, a temporary grant was looked for: one may appear for the next call.
    return verdict(notListed(subject, source), !readsCall && !asksApprovals, limited);
  }
  return verdict(allowedByPolicy(subject, source), !readsCall, limited);
}

/**
 * The steps of docs/api.md#approvals-and-temporary-grants after the allowlist, for an agent: a temporary grant, else for a tool
 * on ask the approvals step; undefined when neither applies (denied as before).
 */
function decideByApproval(
  subject: Subject,
  tool: KnownTool,
  allowlist: Allowlist,
  grants: Pick<ApprovalsPort, 'granted'>,
  limited: CountCall | undefined,
): Decided | undefined {
  const { input, requester } = subject;
  const grant = grants.granted(input.project, requester.id, tool.name, input.arguments);
  if (grant.kind === 'ok') return verdict(allowedByGrant(subject), false, limited);
  // Outside what a grant kept: a tool still on ask is asked for (the policy may allow more now), any other is refused for it.
  if (!allowlist.ask.has(tool.name)) {
    if (grant.kind === 'refused') return verdict(refusedByCondition(subject, 'grant', grant.check, null), false);
    if (grant.kind === 'invalid_arguments') return verdict(invalidArguments(subject, 'grant'), false);
    return undefined;
  }
  // The request and a `once` answer are bound to the ticket the call names (docs/api.md#ephemeral-ticket-assistant-policies).
  const args = input.arguments;
  if (args !== undefined && Object.hasOwn(args, ISSUE_REF) && issueRefOf(input) === undefined) {
    return verdict(invalidArguments(subject, allowlist.source), false);
  }
  const ask: AskUser = { project: input.project, requester: requester.id, tool: tool.name, issueRef: issueRefOf(input) };
  return { kind: 'ask', ask, subject, source: allowlist.source, limited };
}

/** The verdict of a call the approvals step decided, from what applying {@link NeedsApproval.ask} gave. */
export function answerAsk(needs: NeedsApproval, asked: AskAnswer): Verdict {
  if (asked.kind === 'once') return verdict(approvedOnce(needs.subject), false, needs.limited);
  return verdict(notApproved(needs.subject, needs.source, asked), false);
}

/** No temporary grant: what a decision that only looks sees when it is given none. */
export const NO_GRANTS: Pick<ApprovalsPort, 'granted'> = { granted: () => ({ kind: 'none' }) };

/**
 * The verdict of a decision that only looks (`idea-pdp test`, `decide`, a preview's replay): it
 * applies nothing, so no `once` answer is spent and no request opened (the approvals step answers
 * as a preview); its `count` is the caller's to keep or ignore.
 */
export function lookingVerdict(decided: Decided): Verdict {
  return decided.kind === 'ask' ? answerAsk(decided, { kind: 'preview' }) : decided;
}

/** The ticket a call names in `arguments.issueRef`, as written. */
export function issueRefOf(input: DecisionInput): string | undefined {
  const args = input.arguments;
  const issueRef = args !== undefined && Object.hasOwn(args, ISSUE_REF) ? args[ISSUE_REF] : undefined;
  return typeof issueRef === 'string' || typeof issueRef === 'number' ? String(issueRef) : undefined;
}
