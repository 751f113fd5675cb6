/**
 * Pure edits of a policy document, and its canonical serialization: pretty-printed, tools in
 * catalog order, agents sorted by id (docs/api.md#http-api).
 */
import {
  isToolName,
  sortByCatalogOrder,
  type ConditionProblem,
  type InvalidToolsDetails,
  type PolicyConditions,
  type PolicyDocument,
  type PolicyLimits,
} from '../../schemas/index.js';
import { IDEA_CATALOG, type ProjectCatalog } from './project-catalog.js';
import { compareIds } from '../../schemas/ids.js';
import { askConflicts, type ValidPolicy } from './compile.js';
import { conditionProblem } from './conditions.js';

/** The lists of one policy (the project default or an override) as a client sends them. */
export interface ToolLists {
  readonly allowedTools: readonly string[];
  readonly askTools?: readonly string[] | undefined;
  /** Absent: a write keeps the conditions of the tools still listed (docs/api.md#conditions-on-a-tools-arguments). */
  readonly conditions?: Readonly<PolicyConditions> | undefined;
  /** Absent: a write keeps the limits of the tools still listed, as it keeps conditions (docs/api.md#usage-limits). */
  readonly limits?: Readonly<PolicyLimits> | undefined;
}

/** A policy as the document holds it. */
interface StoredPolicy {
  allowedTools: string[];
  askTools?: string[];
  conditions?: PolicyConditions;
  limits?: PolicyLimits;
}

/** What a write keeps of the policy it replaces when the client does not send it: conditions and limits. */
type KeptByTool = Pick<ToolLists, 'conditions' | 'limits'>;

/**
 * What is wrong with the conditions a client sent: a tool the same lists do not name, or a condition
 * that could never be met (docs/api.md#conditions-on-a-tools-arguments). Empty when there is nothing to refuse.
 */
export function conditionProblems(lists: ToolLists | undefined): ConditionProblem[] {
  if (lists?.conditions === undefined) return [];
  const listed = new Set([...lists.allowedTools, ...(lists.askTools ?? [])]);
  const problems: ConditionProblem[] = [];
  for (const [tool, conditions] of Object.entries(lists.conditions)) {
    if (!listed.has(tool)) {
      problems.push({ tool, message: `${tool} is in neither allowedTools nor askTools: a condition narrows a tool the policy lists` });
      continue;
    }
    for (const [argument, condition] of Object.entries(conditions)) {
      const why = conditionProblem(condition);
      if (why !== undefined) problems.push({ tool, argument, message: why });
    }
  }
  return problems;
}

/** The entries (conditions or limits) of `previous` on the tools `lists` still names. */
function keptOnListed<T>(previous: Readonly<Record<string, T>> | undefined, lists: ToolLists): Record<string, T> | undefined {
  if (previous === undefined) return undefined;
  const listed = new Set([...lists.allowedTools, ...(lists.askTools ?? [])]);
  const kept = Object.entries(previous).filter(([tool]) => listed.has(tool));
  return kept.length === 0 ? undefined : Object.fromEntries(kept);
}

/**
 * What is wrong with the lists a client sent, or null when every name is a catalog tool, once in
 * each list, and no name is both allowed and on ask (docs/api.md#http-api, docs/api.md#approvals-and-temporary-grants).
 */
export function allowlistProblems(
  names: readonly string[],
  askNames: readonly string[] = [],
  catalog: ProjectCatalog = IDEA_CATALOG,
): InvalidToolsDetails | null {
  const unknown: string[] = [];
  const duplicates: string[] = [];
  let empty = 0;
  for (const list of [names, askNames]) {
    const seen = new Set<string>();
    for (const name of list) {
      if (name.trim() === '') {
        empty++;
        continue;
      }
      if (seen.has(name)) {
        if (!duplicates.includes(name)) duplicates.push(name);
        continue;
      }
      seen.add(name);
      if (catalog.find(name) === undefined && !unknown.includes(name)) unknown.push(name);
    }
  }
  const conflicts = askConflicts(names, askNames);
  return unknown.length + duplicates.length + empty + conflicts.length === 0 ? null : { unknown, duplicates, empty, conflicts };
}

/** The problems of one policy's lists (see {@link allowlistProblems}). */
export function toolListsProblems(lists: ToolLists | undefined, catalog: ProjectCatalog = IDEA_CATALOG): InvalidToolsDetails | null {
  return lists === undefined ? null : allowlistProblems(lists.allowedTools, lists.askTools, catalog);
}

/** Merges the problems of several allowlists (a whole document). */
export function mergeProblems(all: readonly (InvalidToolsDetails | null)[]): InvalidToolsDetails | null {
  const found = all.filter((problem): problem is InvalidToolsDetails => problem !== null);
  if (found.length === 0) return null;
  return {
    unknown: [...new Set(found.flatMap((problem) => problem.unknown))],
    duplicates: [...new Set(found.flatMap((problem) => problem.duplicates))],
    empty: found.reduce((sum, problem) => sum + problem.empty, 0),
    conflicts: [...new Set(found.flatMap((problem) => problem.conflicts ?? []))],
  };
}

const EMPTY_DOCUMENT: PolicyDocument = { version: 1 };

/**
 * A policy of the document: `askTools`, `conditions` and `limits` only when they hold something, so
 * that files without them stay as they were. Without `conditions` (or `limits`) in `given`, those of
 * `previous` on the tools still listed are kept.
 */
function policyOf(given: ToolLists | readonly string[], previous?: KeptByTool): StoredPolicy {
  const lists = toolLists(given);
  const askTools = lists.askTools ?? [];
  const policy: StoredPolicy = { allowedTools: [...lists.allowedTools] };
  if (askTools.length > 0) policy.askTools = [...askTools];
  const conditions = lists.conditions ?? keptOnListed(previous?.conditions, lists);
  if (conditions !== undefined && Object.keys(conditions).length > 0) policy.conditions = { ...conditions };
  const limits = lists.limits ?? keptOnListed(previous?.limits, lists);
  if (limits !== undefined && Object.keys(limits).length > 0) policy.limits = { ...limits };
  return policy;
}

/** A bare array is an allowlist with nothing on ask. */
function toolLists(given: ToolLists | readonly string[]): ToolLists {
  return isStringArray(given) ? { allowedTools: given } : given;
}

function isStringArray(given: ToolLists | readonly string[]): given is readonly string[] {
  return Array.isArray(given);
}

/** The document with the project default set to `lists` (a bare array: allowed tools only), or removed when `lists` is null. */
export function withProjectDefault(document: PolicyDocument | null, lists: ToolLists | readonly string[] | null): PolicyDocument {
  const { projectDefault: previous, ...rest } = document ?? EMPTY_DOCUMENT;
  return lists === null ? rest : { ...rest, projectDefault: policyOf(lists, previous) };
}

/**
 * The document with the override of `agentId` set to `lists` (a bare array: allowed tools only), or
 * removed when `lists` is null. Without `conditions` (or `limits`) in `lists`, those that applied to
 * the agent (its override's, else the project default's) are kept on the tools still listed: creating
 * an override never widens what a condition narrowed nor lifts a limit.
 */
export function withAgentOverride(
  document: PolicyDocument | null,
  agentId: string,
  lists: ToolLists | readonly string[] | null,
): PolicyDocument {
  const base = document ?? EMPTY_DOCUMENT;
  const own = base.agents?.find((agent) => agent.agentId === agentId);
  const others = (base.agents ?? []).filter((agent) => agent.agentId !== agentId);
  const previous = own === undefined ? base.projectDefault : own.policy;
  const agents = lists === null ? others : [...others, { agentId, policy: policyOf(lists, previous) }];
  return { ...base, agents };
}

/**
 * The document in which `agentId` may always call `tool` (the answer `always`, docs/api.md#approvals-and-temporary-grants): the
 * tool joins its override's `allowedTools` and leaves its `askTools`; without an override, one is
 * created from its current effective policy (the project default's tools, or the built-in read set).
 */
export function withToolAlwaysAllowed(policy: ValidPolicy, agentId: string, tool: string): PolicyDocument {
  const own = policy.document?.agents?.find((agent) => agent.agentId === agentId)?.policy;
  const effective = policy.overrides.get(agentId) ?? policy.projectDefault;
  const allowedTools = own === undefined ? [...effective.tools] : [...own.allowedTools];
  const askTools = own === undefined ? [...effective.askTools] : [...(own.askTools ?? [])];
  if (!allowedTools.includes(tool)) allowedTools.push(tool);
  // The conditions that applied stay: `always` lifts the ask, never a condition (docs/api.md#conditions-on-a-tools-arguments).
  const conditions = own === undefined ? effective.writtenConditions : own.conditions;
  // Nor a limit (docs/api.md#usage-limits).
  const limits = own === undefined ? effective.writtenLimits : own.limits;
  return withAgentOverride(policy.document, agentId, {
    allowedTools,
    askTools: askTools.filter((name) => name !== tool),
    ...(conditions === undefined ? {} : { conditions }),
    ...(limits === undefined ? {} : { limits }),
  });
}

/** Canonical bytes of a document. Unknown names kept in a hand-edited file are kept, after the known ones. */
export function serializeDocument(document: PolicyDocument): string {
  const canonical: PolicyDocument = { version: 1 };
  if (document.$schema !== undefined) canonical.$schema = document.$schema;
  if (document.projectDefault) canonical.projectDefault = canonicalPolicy(document.projectDefault);
  canonical.agents = [...(document.agents ?? [])]
    .sort((a, b) => compareIds(a.agentId, b.agentId))
    .map((agent) => ({ agentId: agent.agentId, policy: canonicalPolicy(agent.policy) }));
  const ordered = { ...(canonical.$schema === undefined ? {} : { $schema: canonical.$schema }), ...canonical };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

function canonicalPolicy(lists: ToolLists): StoredPolicy {
  const conditions = lists.conditions === undefined ? undefined : canonicalByTool(lists.conditions);
  const limits = lists.limits === undefined ? undefined : canonicalByTool(lists.limits);
  return policyOf({
    allowedTools: canonicalTools(lists.allowedTools),
    askTools: canonicalTools(lists.askTools ?? []),
    ...(conditions === undefined ? {} : { conditions }),
    ...(limits === undefined ? {} : { limits }),
  });
}

/** Conditions (or limits) by tool in catalog order (then other names as written); each tool's value as written. */
function canonicalByTool<T>(byTool: Readonly<Record<string, T>>): Record<string, T> {
  const tools = canonicalTools(Object.keys(byTool));
  return Object.fromEntries(tools.flatMap((tool) => (Object.hasOwn(byTool, tool) ? [[tool, byTool[tool] as T]] : [])));
}

function canonicalTools(names: readonly string[]): string[] {
  const unique = [...new Set(names)];
  const known = sortByCatalogOrder(unique.filter((name) => isToolName(name)));
  return [...known, ...unique.filter((name) => !isToolName(name))];
}
