/**
 * What a proposed policy document would change (docs/api.md#policy-as-code-idea-pdp-and-previews): the agents whose effective
 * allowlist moves, and the recent decisions of the project decided again under it. Pure apart from
 * the lookups it is given; the replay decides each distinct call twice (current policy, proposed
 * one) with the same `decide` as `/decide`, so only the document makes a difference.
 */
import { compareIds } from '../../schemas/ids.js';
import { sortByCatalogOrder, type PreviewAgent, type PreviewReplay, type ReplayChange, type ReplayOutcome } from '../../schemas/index.js';
import type { Allowlist, CompiledPolicy, ValidPolicy } from './compile.js';
import { decide, lookingVerdict, resolveEffective, type ApprovalsPort, type DecisionInput, type EphemeralLookup } from './decide.js';
import { WindowCounts } from './call-times.js';
import { outcomeOf } from './policy-tests.js';

/** The `agentId` of the project default in a preview's `agents`. */
export const DEFAULT_AGENT = '*default';

const NOTHING: Pick<Allowlist, 'tools' | 'askTools' | 'allowed' | 'writtenConditions'> = {
  tools: [],
  askTools: [],
  allowed: new Set(),
  writtenConditions: {},
};

/** The tools whose conditions differ between two policies, in catalog order then by name. */
function conditionsChanged(was: Allowlist['writtenConditions'], will: Allowlist['writtenConditions']): string[] {
  const tools = new Set([...Object.keys(was), ...Object.keys(will)]);
  const changed = [...tools].filter((tool) => JSON.stringify(was[tool]) !== JSON.stringify(will[tool]));
  return sortByCatalogOrder(changed);
}

const sameList = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((item, index) => item === b[index]);

/** The agents (and `*default`) whose effective allowlist or tools on ask differ; an invalid current policy allows nothing. */
export function agentChanges(before: CompiledPolicy, after: ValidPolicy): PreviewAgent[] {
  const lists = (policy: CompiledPolicy, agentId: string | null) =>
    policy.status === 'invalid' ? NOTHING : ((agentId === null ? undefined : policy.overrides.get(agentId)) ?? policy.projectDefault);
  const ids = new Set<string>(after.overrides.keys());
  if (before.status === 'ok') for (const id of before.overrides.keys()) ids.add(id);
  const changes: PreviewAgent[] = [];
  for (const agentId of [null, ...[...ids].sort(compareIds)]) {
    const was = lists(before, agentId);
    const will = lists(after, agentId);
    const changedConditions = conditionsChanged(was.writtenConditions, will.writtenConditions);
    if (sameList(was.tools, will.tools) && sameList(was.askTools, will.askTools) && changedConditions.length === 0) continue;
    changes.push({
      agentId: agentId ?? DEFAULT_AGENT,
      before: { allowedTools: [...was.tools], askTools: [...was.askTools] },
      after: { allowedTools: [...will.tools], askTools: [...will.askTools] },
      added: will.tools.filter((tool) => !was.allowed.has(tool)),
      removed: was.tools.filter((tool) => !will.allowed.has(tool)),
      conditionsChanged: changedConditions,
      askAdded: will.askTools.filter((tool) => !was.askTools.includes(tool)),
      askRemoved: was.askTools.filter((tool) => !will.askTools.includes(tool)),
      conditions: changedConditions.map((tool) => ({
        tool,
        before: was.writtenConditions[tool] ?? null,
        after: will.writtenConditions[tool] ?? null,
      })),
    });
  }
  return changes;
}

export interface ReplayInput {
  readonly project: string;
  /** Oldest first, as the ring keeps them. */
  readonly decisions: readonly {
    readonly at: number;
    readonly requester: string;
    readonly tool: string;
    /** What the ring kept of the call's arguments, and the names it kept (present or not). */
    readonly arguments: Readonly<Record<string, unknown>>;
    readonly kept: readonly string[];
  }[];
  readonly before: CompiledPolicy;
  readonly after: CompiledPolicy;
  readonly ephemeral: EphemeralLookup;
  /** Grants as they are now; no `once` is used up and no request opened (see `lookingVerdict`). */
  readonly grants: Pick<ApprovalsPort, 'granted'>;
}

interface Group {
  readonly change: Omit<ReplayChange, 'calls' | 'lastAt'>;
  calls: number;
  lastAt: number;
}

/** The arguments the requester's effective policy conditions for `tool`. */
function conditionedArguments(
  project: string,
  requester: string,
  tool: string,
  policy: CompiledPolicy,
  ephemeral: EphemeralLookup,
): string[] {
  const checks = resolveEffective(project, requester, policy, ephemeral).allowlist?.conditions.get(tool) ?? [];
  return checks.map((check) => check.argument);
}

/** Whether `tool` has a usage limit for `requester` under `policy`. */
function isLimited(project: string, requester: string, tool: string, policy: CompiledPolicy, ephemeral: EphemeralLookup): boolean {
  return resolveEffective(project, requester, policy, ephemeral).allowlist?.limits.has(tool) === true;
}

/** What a call gives under `policy`, applying nothing but a count in the replay's own `counts`. */
function outcomeUnder(
  query: DecisionInput,
  policy: CompiledPolicy,
  { ephemeral, grants }: ReplayInput,
  counts: WindowCounts | undefined,
): ReplayOutcome {
  const { body, count } = lookingVerdict(decide(query, policy, ephemeral, grants, counts));
  if (count !== undefined) counts?.count(count.project, count.requester, count.tool, count.limit);
  return outcomeOf(body);
}

export function replay(input: ReplayInput): PreviewReplay {
  const { project, decisions, before, after, ephemeral } = input;
  const counts = { allowToDeny: 0, denyToAllow: 0, toAsk: 0, notReplayable: 0 };
  // A few distinct calls repeat across 1,000 decisions: each is decided once per policy.
  const outcomes = new Map<string, readonly [ReplayOutcome, ReplayOutcome] | null>();
  const groups = new Map<string, Group>();
  // Limited calls are decided one by one in time order, each policy counting its own (docs/api.md#usage-limits).
  const replayed = { at: 0 };
  const usage = [new WindowCounts(() => replayed.at), new WindowCounts(() => replayed.at)] as const;
  const limited = new Map<string, boolean>();
  for (const decision of decisions) {
    const { requester, tool, kept } = decision;
    const limitKey = JSON.stringify([requester, tool]);
    let isCounted = limited.get(limitKey);
    if (isCounted === undefined) {
      isCounted = [before, after].some((policy) => isLimited(project, requester, tool, policy, ephemeral));
      limited.set(limitKey, isCounted);
    }
    const callKey = JSON.stringify([requester, tool, decision.arguments, kept]);
    let pair = isCounted ? undefined : outcomes.get(callKey);
    if (pair === undefined) {
      const query = { project, requester, tool, arguments: decision.arguments };
      // A condition on an argument the ring did not keep for this call would be guessed: counted apart instead.
      const replayable = [before, after].every((policy) =>
        conditionedArguments(project, requester, tool, policy, ephemeral).every((name) => kept.includes(name)),
      );
      if (isCounted) replayed.at = Math.max(replayed.at, decision.at);
      const [was, will] = isCounted ? usage : [undefined, undefined];
      pair = replayable ? [outcomeUnder(query, before, input, was), outcomeUnder(query, after, input, will)] : null;
      if (!isCounted) outcomes.set(callKey, pair);
    }
    if (pair === null) {
      counts.notReplayable++;
      continue;
    }
    const [was, will] = pair;
    if (was === will) continue;
    if (was === 'allow' && will === 'deny') counts.allowToDeny++;
    else if (will === 'allow') counts.denyToAllow++;
    if (will === 'ask') counts.toAsk++;
    const groupKey = JSON.stringify([requester, tool, was, will]);
    const group = groups.get(groupKey);
    if (group === undefined) groups.set(groupKey, { change: { requester, tool, before: was, after: will }, calls: 1, lastAt: decision.at });
    else {
      group.calls++;
      group.lastAt = Math.max(group.lastAt, decision.at);
    }
  }
  const changed = [...groups.values()]
    .sort(
      (a, b) =>
        b.calls - a.calls ||
        b.lastAt - a.lastAt ||
        compareIds(a.change.requester, b.change.requester) ||
        compareIds(a.change.tool, b.change.tool),
    )
    .map((group) => ({ ...group.change, calls: group.calls, lastAt: new Date(group.lastAt).toISOString() }));
  const first = decisions[0];
  const last = decisions.at(-1);
  return {
    decisions: decisions.length,
    from: first === undefined ? null : new Date(first.at).toISOString(),
    to: last === undefined ? null : new Date(last.at).toISOString(),
    counts,
    changed,
  };
}
