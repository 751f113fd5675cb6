/**
 * Builds the permissions view of a project (the UI's `get_mcp_tool_permissions`, docs/api.md#http-api). Pure.
 */
import type { AgentPermissions, LastValid, PermissionsView } from '../../schemas/index.js';
import { compareIds } from '../../schemas/ids.js';
import type { PolicyLimits } from '../../schemas/limits.js';
import type { Allowlist, CompiledPolicy } from './compile.js';
import type { AgentsFileState } from './agents-file.js';

/**
 * `lastValid` is shown with an invalid policy only: the last valid document the service saw, for
 * display and repair (docs/api.md#http-api), never for decisions.
 */
export function buildPermissionsView(
  project: string,
  policy: CompiledPolicy,
  agentsFile: AgentsFileState,
  lastValid: LastValid | null = null,
): PermissionsView {
  const agentsFileInfo = { exists: agentsFile.exists, error: agentsFile.error };
  if (policy.status === 'invalid') {
    return {
      project,
      revision: policy.revision,
      status: 'invalid',
      error: policy.error,
      fileExists: true,
      projectDefault: { mode: 'builtin', allowedTools: [], unknownTools: [], conditions: {} },
      agents: agentsFile.agents
        .map((agent) => ({
          agentId: agent.id,
          name: agent.name,
          declared: true,
          mode: 'inherit' as const,
          allowedTools: [],
          added: [],
          removed: [],
          redundant: false,
          unknownTools: [],
          conditions: {},
        }))
        .sort(byAgentId),
      agentsFile: agentsFileInfo,
      lastValid,
    };
  }
  const defaults = policy.projectDefault;
  const names = new Map(agentsFile.agents.map((agent) => [agent.id, agent.name]));
  const ids = new Set<string>([...names.keys(), ...policy.overrides.keys()]);
  const agents: AgentPermissions[] = [];
  for (const agentId of ids) {
    const override = policy.overrides.get(agentId);
    const effective = override ?? defaults;
    const added = override ? effective.tools.filter((tool) => !defaults.allowed.has(tool)) : [];
    const removed = override ? defaults.tools.filter((tool) => !effective.allowed.has(tool)) : [];
    const sameAsk = effective.askTools.length === defaults.askTools.length && effective.askTools.every((tool) => defaults.ask.has(tool));
    const sameConditions = JSON.stringify(effective.writtenConditions) === JSON.stringify(defaults.writtenConditions);
    const sameLimits = JSON.stringify(effective.writtenLimits) === JSON.stringify(defaults.writtenLimits);
    agents.push({
      agentId,
      name: names.get(agentId) ?? agentId,
      declared: names.has(agentId),
      mode: override ? 'override' : 'inherit',
      allowedTools: [...effective.tools],
      ...askToolsOf(effective),
      added,
      removed,
      // An override that only changes which tools are on ask, or a condition, still changes something.
      redundant: override !== undefined && added.length === 0 && removed.length === 0 && sameAsk && sameConditions && sameLimits,
      unknownTools: override ? [...override.unknownTools] : [],
      conditions: { ...effective.writtenConditions },
      ...limitsOf(effective),
    });
  }
  agents.sort(byAgentId);
  return {
    project,
    revision: policy.revision,
    status: 'ok',
    error: null,
    fileExists: policy.fileExists,
    projectDefault: {
      mode: policy.document?.projectDefault ? 'custom' : 'builtin',
      allowedTools: [...defaults.tools],
      ...askToolsOf(defaults),
      unknownTools: [...defaults.unknownTools],
      conditions: { ...defaults.writtenConditions },
      ...limitsOf(defaults),
    },
    agents,
    agentsFile: agentsFileInfo,
  };
}

/** `{ askTools }` when the allowlist puts tools on ask, else nothing: views of files without `askTools` stay as they were. */
function askToolsOf(allowlist: Allowlist): { askTools?: string[] } {
  return allowlist.askTools.length === 0 ? {} : { askTools: [...allowlist.askTools] };
}

/** `{ limits }` when the allowlist limits a tool, else nothing: views of files without `limits` stay as they were. */
function limitsOf(allowlist: Allowlist): { limits?: PolicyLimits } {
  return allowlist.limits.size === 0 ? {} : { limits: { ...allowlist.writtenLimits } };
}

/** Tools of the catalog that are not in `allowed`, in catalog order. */
export function complement(allowed: ReadonlySet<string>, all: readonly string[]): string[] {
  // `all` is in catalog order already.
  return all.filter((tool) => !allowed.has(tool));
}

function byAgentId(a: { agentId: string }, b: { agentId: string }): number {
  return compareIds(a.agentId, b.agentId);
}
