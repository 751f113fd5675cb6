/**
 * What a proposed policy document would change (docs/api.md §12): the agents whose effective
 * allowlist moves, and the recent decisions of the project decided again under it. Pure apart from
 * the lookups it is given; the replay decides each distinct call twice (current policy, proposed
 * one) with the same `decide` as `/decide`, so only the document makes a difference.
 */
import { compareIds } from '../../schemas/ids.js';
import type { PreviewAgent, PreviewReplay, ReplayChange, ReplayOutcome } from '../../schemas/index.js';
import type { Allowlist, CompiledPolicy, ValidPolicy } from './compile.js';
import { decide, type ApprovalsPort, type EphemeralLookup } from './decide.js';
import { outcomeOf } from './policy-tests.js';

/** The `agentId` of the project default in a preview's `agents`. */
export const DEFAULT_AGENT = '*default';

const NOTHING: Pick<Allowlist, 'tools' | 'askTools' | 'allowed'> = { tools: [], askTools: [], allowed: new Set() };

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
    if (sameList(was.tools, will.tools) && sameList(was.askTools, will.askTools)) continue;
    changes.push({
      agentId: agentId ?? DEFAULT_AGENT,
      before: { allowedTools: [...was.tools], askTools: [...was.askTools] },
      after: { allowedTools: [...will.tools], askTools: [...will.askTools] },
      added: will.tools.filter((tool) => !was.allowed.has(tool)),
      removed: was.tools.filter((tool) => !will.allowed.has(tool)),
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
    readonly issueRef: string | undefined;
  }[];
  readonly before: CompiledPolicy;
  readonly after: CompiledPolicy;
  readonly ephemeral: EphemeralLookup;
  /** Grants as they are now, no `once` used up, no request opened (see `lookingApprovals`). */
  readonly approvals: ApprovalsPort;
}

interface Group {
  readonly change: Omit<ReplayChange, 'calls' | 'lastAt'>;
  calls: number;
  lastAt: number;
}

export function replay(input: ReplayInput): PreviewReplay {
  const { project, decisions, before, after, ephemeral, approvals } = input;
  const counts = { allowToDeny: 0, denyToAllow: 0, toAsk: 0 };
  // A few distinct calls repeat across 1,000 decisions: each is decided once per policy.
  const outcomes = new Map<string, readonly [ReplayOutcome, ReplayOutcome]>();
  const groups = new Map<string, Group>();
  for (const decision of decisions) {
    const { requester, tool, issueRef } = decision;
    const callKey = JSON.stringify([requester, tool, issueRef ?? null]);
    let pair = outcomes.get(callKey);
    if (pair === undefined) {
      const query = { project, requester, tool, ...(issueRef === undefined ? {} : { arguments: { issueRef } }) };
      pair = [outcomeOf(decide(query, before, ephemeral, approvals)), outcomeOf(decide(query, after, ephemeral, approvals))];
      outcomes.set(callKey, pair);
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
