/**
 * Translates a project's policy document into an equivalent Cedar policy set, for the Cedar
 * baseline. Semantics mirror docs/api.md#resolving-a-decision for agent requesters:
 *  - one `permit` per agent override, on exactly its allowlisted actions;
 *  - one `permit` for the project default (or the canonical read-only set) that applies to every
 *    principal NOT in the project's `Overridden` group, because an override replaces the default.
 * Agents with an override are made members of `Overridden::"<project>"` through the entity store
 * sent with each request. Unknown tools match no `action in [...]`, so Cedar denies them too.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { READ_ONLY_DEFAULT, isToolName, type PolicyDocument } from '../../schemas/index.js';
import type { EntityJson } from '@cedar-policy/cedar-wasm/nodejs';

export interface CedarProject {
  /** Policy set in Cedar syntax. */
  readonly text: string;
  /** Entity store: the agents with an override and their `Overridden` parent. */
  readonly entities: EntityJson[];
  /** Policy id of each override, to report `source` like the service does. */
  readonly overridePolicyIds: ReadonlySet<string>;
}

/** Cedar string literals use the same escapes as JSON for the characters our ids can hold. */
const lit = (value: string): string => JSON.stringify(value);

function actionList(tools: readonly string[]): string {
  // Names outside the catalog never grant anything (docs/api.md#resolving-a-decision), so they are left out.
  return tools
    .filter(isToolName)
    .map((tool) => `Action::${lit(tool)}`)
    .join(', ');
}

/** Compiles one project's document (null = no file: canonical read-only for everyone). */
export function toCedar(project: string, document: PolicyDocument | null): CedarProject {
  const defaultTools = document?.projectDefault?.allowedTools ?? READ_ONLY_DEFAULT;
  const overrides = document?.agents ?? [];
  const lines = [
    `@id("default")`,
    `permit (principal, action in [${actionList(defaultTools)}], resource == Project::${lit(project)})`,
    `unless { principal in Overridden::${lit(project)} };`,
  ];
  const overridePolicyIds = new Set<string>();
  for (const [index, override] of overrides.entries()) {
    const id = `override-${index}`;
    overridePolicyIds.add(id);
    lines.push(
      `@id(${lit(id)})`,
      `permit (principal == Agent::${lit(override.agentId)}, action in [${actionList(override.policy.allowedTools)}], resource == Project::${lit(project)});`,
    );
  }
  const entities: EntityJson[] = overrides.map((override) => ({
    uid: { type: 'Agent', id: override.agentId },
    attrs: {},
    parents: [{ type: 'Overridden', id: project }],
  }));
  return { text: lines.join('\n'), entities, overridePolicyIds };
}

/** Reads a project's policy file the way the service does for this benchmark's well-formed fixtures. */
export async function loadCedarProject(projectRoot: string, project: string): Promise<CedarProject> {
  let document: PolicyDocument | null = null;
  try {
    document = JSON.parse(await readFile(path.join(projectRoot, '.ideai', 'mcp-tool-permissions.json'), 'utf8')) as PolicyDocument;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return toCedar(project, document);
}
