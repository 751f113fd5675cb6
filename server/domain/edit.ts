/**
 * Pure edits of a policy document, and its canonical serialization: pretty-printed, tools in
 * catalog order, agents sorted by id (docs/api.md §5).
 */
import { isToolName, sortByCatalogOrder, type InvalidToolsDetails, type PolicyDocument } from '../../schemas/index.js';
import { compareIds } from '../../schemas/ids.js';

/** What is wrong with an allowlist a client sent, or null when every name is a catalog tool, once. */
export function allowlistProblems(names: readonly string[]): InvalidToolsDetails | null {
  const unknown: string[] = [];
  const duplicates: string[] = [];
  const seen = new Set<string>();
  let empty = 0;
  for (const name of names) {
    if (name.trim() === '') {
      empty++;
      continue;
    }
    if (seen.has(name)) {
      if (!duplicates.includes(name)) duplicates.push(name);
      continue;
    }
    seen.add(name);
    if (!isToolName(name)) unknown.push(name);
  }
  return unknown.length + duplicates.length + empty === 0 ? null : { unknown, duplicates, empty };
}

/** Merges the problems of several allowlists (a whole document). */
export function mergeProblems(all: readonly (InvalidToolsDetails | null)[]): InvalidToolsDetails | null {
  const found = all.filter((problem): problem is InvalidToolsDetails => problem !== null);
  if (found.length === 0) return null;
  return {
    unknown: [...new Set(found.flatMap((problem) => problem.unknown))],
    duplicates: [...new Set(found.flatMap((problem) => problem.duplicates))],
    empty: found.reduce((sum, problem) => sum + problem.empty, 0),
  };
}

const EMPTY_DOCUMENT: PolicyDocument = { version: 1 };

/** The document with the project default set to `tools`, or removed when `tools` is null. */
export function withProjectDefault(document: PolicyDocument | null, tools: readonly string[] | null): PolicyDocument {
  const { projectDefault: _previous, ...rest } = document ?? EMPTY_DOCUMENT;
  return tools === null ? rest : { ...rest, projectDefault: { allowedTools: [...tools] } };
}

/** The document with the override of `agentId` set to `tools`, or removed when `tools` is null. */
export function withAgentOverride(document: PolicyDocument | null, agentId: string, tools: readonly string[] | null): PolicyDocument {
  const base = document ?? EMPTY_DOCUMENT;
  const others = (base.agents ?? []).filter((agent) => agent.agentId !== agentId);
  const agents = tools === null ? others : [...others, { agentId, policy: { allowedTools: [...tools] } }];
  return { ...base, agents };
}

/** Canonical bytes of a document. Unknown names kept in a hand-edited file are kept, after the known ones. */
export function serializeDocument(document: PolicyDocument): string {
  const canonical: PolicyDocument = { version: 1 };
  if (document.$schema !== undefined) canonical.$schema = document.$schema;
  if (document.projectDefault) canonical.projectDefault = { allowedTools: canonicalTools(document.projectDefault.allowedTools) };
  canonical.agents = [...(document.agents ?? [])]
    .sort((a, b) => compareIds(a.agentId, b.agentId))
    .map((agent) => ({ agentId: agent.agentId, policy: { allowedTools: canonicalTools(agent.policy.allowedTools) } }));
  const ordered = { ...(canonical.$schema === undefined ? {} : { $schema: canonical.$schema }), ...canonical };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

function canonicalTools(names: readonly string[]): string[] {
  const unique = [...new Set(names)];
  const known = sortByCatalogOrder(unique.filter((name) => isToolName(name)));
  return [...known, ...unique.filter((name) => !isToolName(name))];
}
