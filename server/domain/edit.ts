/**
 * Pure edits of a policy document, and its canonical serialization: pretty-printed, tools in
 * catalog order, agents sorted by id (docs/api.md §5).
 */
import { isToolName, sortByCatalogOrder, type InvalidToolsDetails, type PolicyDocument } from '../../schemas/index.js';
import { compareIds } from '../../schemas/ids.js';
import { askConflicts, type ValidPolicy } from './compile.js';

/** The lists of one policy (the project default or an override) as a client sends them. */
export interface ToolLists {
  readonly allowedTools: readonly string[];
  readonly askTools?: readonly string[] | undefined;
}

/**
 * What is wrong with the lists a client sent, or null when every name is a catalog tool, once in
 * each list, and no name is both allowed and on ask (docs/api.md §5, §11).
 */
export function allowlistProblems(names: readonly string[], askNames: readonly string[] = []): InvalidToolsDetails | null {
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
      if (!isToolName(name) && !unknown.includes(name)) unknown.push(name);
    }
  }
  const conflicts = askConflicts(names, askNames);
  return unknown.length + duplicates.length + empty + conflicts.length === 0 ? null : { unknown, duplicates, empty, conflicts };
}

/** The problems of one policy's lists (see {@link allowlistProblems}). */
export function toolListsProblems(lists: ToolLists | undefined): InvalidToolsDetails | null {
  return lists === undefined ? null : allowlistProblems(lists.allowedTools, lists.askTools);
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

/** A policy of the document: `askTools` only when it lists something, so that files without it stay as they were. */
function policyOf(given: ToolLists | readonly string[]): { allowedTools: string[]; askTools?: string[] } {
  const lists = toolLists(given);
  const askTools = lists.askTools ?? [];
  return askTools.length === 0
    ? { allowedTools: [...lists.allowedTools] }
    : { allowedTools: [...lists.allowedTools], askTools: [...askTools] };
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
  const { projectDefault: _previous, ...rest } = document ?? EMPTY_DOCUMENT;
  return lists === null ? rest : { ...rest, projectDefault: policyOf(lists) };
}

/** The document with the override of `agentId` set to `lists` (a bare array: allowed tools only), or removed when `lists` is null. */
export function withAgentOverride(
  document: PolicyDocument | null,
  agentId: string,
  lists: ToolLists | readonly string[] | null,
): PolicyDocument {
  const base = document ?? EMPTY_DOCUMENT;
  const others = (base.agents ?? []).filter((agent) => agent.agentId !== agentId);
  const agents = lists === null ? others : [...others, { agentId, policy: policyOf(lists) }];
  return { ...base, agents };
}

/**
 * The document in which `agentId` may always call `tool` (the answer `always`, docs/api.md §11): the
 * tool joins its override's `allowedTools` and leaves its `askTools`; without an override, one is
 * created from its current effective policy (the project default's tools, or the built-in read set).
 */
export function withToolAlwaysAllowed(policy: ValidPolicy, agentId: string, tool: string): PolicyDocument {
  const own = policy.document?.agents?.find((agent) => agent.agentId === agentId)?.policy;
  const effective = policy.overrides.get(agentId) ?? policy.projectDefault;
  const allowedTools = own === undefined ? [...effective.tools] : [...own.allowedTools];
  const askTools = own === undefined ? [...effective.askTools] : [...(own.askTools ?? [])];
  if (!allowedTools.includes(tool)) allowedTools.push(tool);
  return withAgentOverride(policy.document, agentId, { allowedTools, askTools: askTools.filter((name) => name !== tool) });
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

function canonicalPolicy(lists: ToolLists): { allowedTools: string[]; askTools?: string[] } {
  return policyOf({ allowedTools: canonicalTools(lists.allowedTools), askTools: canonicalTools(lists.askTools ?? []) });
}

function canonicalTools(names: readonly string[]): string[] {
  const unique = [...new Set(names)];
  const known = sortByCatalogOrder(unique.filter((name) => isToolName(name)));
  return [...known, ...unique.filter((name) => !isToolName(name))];
}
