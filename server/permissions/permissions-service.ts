/**
 * Reads and writes of the projects' permissions (docs/api.md#http-api) and the ephemeral
 * ticket-assistant policies (docs/api.md#ephemeral-ticket-assistant-policies). Validation errors,
 * and a write the project refuses or cannot make, are `ApiError`s; server/http/ maps their codes
 * to statuses.
 */
import type { Logger } from 'pino';
import {
  DEFAULT_EPHEMERAL_TTL_SECONDS,
  sortByCatalogOrder,
  type ConditionProblem,
  type EffectivePolicy,
  type EphemeralPolicy,
  type InvalidToolsDetails,
  type PermissionsView,
  type PolicyDocument,
  type ProjectsResponse,
} from '../../schemas/index.js';
import { agentIdProblem } from '../domain/agent-id.js';
import { documentProblem } from '../domain/compile.js';
import { isOnAsk, resolveEffective } from '../domain/decide.js';
import {
  allowlistProblems,
  conditionProblems,
  mergeProblems,
  toolListsProblems,
  withAgentOverride,
  withProjectDefault,
  withToolAlwaysAllowed,
  type ToolLists,
} from '../domain/edit.js';
import { limitWriteProblems, type LimitWriteProblem, type ToolLimit } from '../domain/limits.js';
import type { EffectiveLimit } from '../../schemas/limits.js';
import { parseRequester } from '../../schemas/requester.js';
import { buildPermissionsView, complement } from '../domain/view.js';
import { IDEA_CATALOG, type ProjectCatalog } from '../domain/project-catalog.js';
import { withDeclaredTool, type ToolDeclaration } from '../domain/servers-edit.js';
import { ApiError, unknownProject } from '../errors.js';
import type { PdpMetrics } from '../ops/metrics.js';
import type { Project, WriteOptions } from '../projects/project.js';
import type { ProjectRegistry } from '../projects/registry.js';
import type { EphemeralPolicies } from './ephemeral.js';
import type { UsageCounts } from '../limits/usage-counts.js';

/** The tools project `project` knows now: a write or a grant names them (docs/api.md#other-mcp-servers-tools). */
export function catalogOf(project: Project): ProjectCatalog {
  const { servers } = project.state;
  return servers.status === 'ok' ? servers.catalog : IDEA_CATALOG;
}

/** How a write changes a project's valid policy document. */
type Edit = Parameters<Project['write']>[0];

export interface PermissionsServiceOptions {
  readonly registry: ProjectRegistry;
  readonly ephemeral: EphemeralPolicies;
  readonly logger: Logger;
  readonly metrics?: PdpMetrics | undefined;
  /** The counts of usage limits, for the calls left in each window (docs/api.md#usage-limits). */
  readonly usage?: Pick<UsageCounts, 'remaining'> | undefined;
}

export class PermissionsService {
  constructor(private readonly options: PermissionsServiceOptions) {}

  listProjects(): ProjectsResponse {
    return {
      projects: this.options.registry.list().map((project) => {
        const { policy, agents } = project.state;
        return {
          id: project.id,
          status: policy.status,
          revision: policy.revision,
          agents: buildPermissionsView(project.id, policy, agents).agents.length,
          overrides: policy.status === 'ok' ? policy.overrides.size : 0,
        };
      }),
    };
  }

  view(projectId: string): PermissionsView {
    const project = this.project(projectId);
    return buildPermissionsView(projectId, project.state.policy, project.state.agents, project.lastValid);
  }

  /** The tools the project knows now (docs/api.md#other-mcp-servers-tools). */
  catalog(projectId: string): ProjectCatalog {
    return catalogOf(this.project(projectId));
  }

  effective(projectId: string, requester: string): EffectivePolicy {
    const { policy } = this.project(projectId).state;
    const resolution = resolveEffective(projectId, requester, policy, (project, id) => this.options.ephemeral.grant(project, id));
    const allowed = resolution.allowlist?.tools ?? [];
    // Only agents ask (docs/api.md#approvals-and-temporary-grants); for them, allowed, on ask and denied split the catalog.
    const ask = resolution.requester.kind === 'agent' ? (resolution.allowlist?.askTools ?? []) : [];
    return {
      project: projectId,
      requester: { id: resolution.requester.id, kind: resolution.requester.kind },
      source: resolution.allowlist?.source ?? 'none',
      allowedTools: [...allowed],
      ...(ask.length === 0 ? {} : { askTools: [...ask] }),
      deniedTools: complement(new Set([...allowed, ...ask]), policy.status === 'ok' ? policy.catalog.names : IDEA_CATALOG.names),
      revision: policy.revision,
      boundIssue: resolution.boundIssue === null ? null : `#${resolution.boundIssue}`,
      ...this.limitsLeft(projectId, resolution.requester.id, resolution.allowlist?.limits),
    };
  }

  /** Each limited tool with its limit and the calls left in the window now; nothing when no tool is limited. */
  private limitsLeft(
    projectId: string,
    requester: string,
    limits: ReadonlyMap<string, ToolLimit> | undefined,
  ): { limits?: EffectiveLimit[] } {
    if (limits === undefined || limits.size === 0) return {};
    return {
      limits: sortByCatalogOrder([...limits.keys()]).flatMap((tool) => {
        const limit = limits.get(tool);
        return limit === undefined
          ? []
          : [
              {
                tool,
                max: limit.max,
                per: limit.per,
                ...(this.options.usage?.remaining(projectId, requester, tool, limit) ?? { remaining: limit.max }),
              },
            ];
      }),
    };
  }

  putDefault(projectId: string, lists: ToolLists, options: WriteOptions): Promise<PermissionsView> {
    checkLists(lists, catalogOf(this.project(projectId)));
    return this.write(projectId, (policy) => withProjectDefault(policy.document, lists), options);
  }

  deleteDefault(projectId: string, options: WriteOptions): Promise<PermissionsView> {
    return this.write(projectId, (policy) => withProjectDefault(policy.document, null), options);
  }

  putAgent(projectId: string, agentId: string, lists: ToolLists, options: WriteOptions): Promise<PermissionsView> {
    checkAgentId(agentId);
    checkLists(lists, catalogOf(this.project(projectId)));
    return this.write(projectId, (policy) => withAgentOverride(policy.document, agentId, lists), options);
  }

  /**
   * The answer `always` to an approval (docs/api.md#approvals-and-temporary-grants): `tool` joins the agent's `allowedTools`
   * through the same serialized, atomic write as every other write.
   */
  async allowAlways(projectId: string, agentId: string, tool: string): Promise<void> {
    checkAgentId(agentId);
    await this.write(
      projectId,
      (policy) => {
        // Checked on the file as this write read it: an edit that took the tool off ask meanwhile wins.
        if (!isOnAsk(policy, agentId, tool)) {
          throw new ApiError('approval_closed', `Tool ${tool} is no longer on ask for agent ${agentId}: nothing was written.`, {
            cause: 'policy_changed',
          });
        }
        return withToolAlwaysAllowed(policy, agentId, tool);
      },
      {},
    );
  }

  deleteAgent(projectId: string, agentId: string, options: WriteOptions): Promise<PermissionsView> {
    checkAgentId(agentId);
    return this.write(projectId, (policy) => withAgentOverride(policy.document, agentId, null), options);
  }

  /** Replaces the whole document: the repair path of an invalid file. */
  putDocument(projectId: string, document: PolicyDocument, options: WriteOptions): Promise<PermissionsView> {
    for (const agent of document.agents ?? []) checkAgentId(agent.agentId);
    const catalog = catalogOf(this.project(projectId));
    const tools = mergeProblems([
      toolListsProblems(document.projectDefault, catalog),
      ...(document.agents ?? []).map((agent) => toolListsProblems(agent.policy, catalog)),
    ]);
    // Before the document's own check, which refuses a tool both allowed and on ask too, but without the details.
    if (tools?.conflicts?.length) throw invalidTools(tools);
    const policies = [document.projectDefault, ...(document.agents ?? []).map((agent) => agent.policy)];
    checkConditions(policies.flatMap(conditionProblems));
    checkLimits(policies.flatMap((policy) => (policy === undefined ? [] : limitWriteProblems(policy))));
    const problem = documentProblem(document);
    if (problem) {
      const where = problem.path === undefined ? {} : { path: problem.path };
      throw new ApiError('invalid_request', `Invalid policy document: ${problem.message}.`, { message: problem.message, ...where });
    }
    if (tools) throw invalidTools(tools);
    return this.write(projectId, () => document, { ...options, allowInvalid: true });
  }

  putEphemeral(
    projectId: string,
    requester: string,
    tools: readonly string[],
    boundIssue: string | undefined,
    ttlSeconds: number | undefined,
  ): EphemeralPolicy {
    const catalog = catalogOf(this.project(projectId));
    checkEphemeralRequester(projectId, requester);
    checkTools(tools, catalog);
    return this.options.ephemeral.put(projectId, requester, tools, boundIssue, ttlSeconds ?? DEFAULT_EPHEMERAL_TTL_SECONDS, catalog);
  }

  deleteEphemeral(projectId: string, requester: string): void {
    this.project(projectId);
    checkEphemeralRequester(projectId, requester);
    this.options.ephemeral.delete(projectId, requester);
  }

  listEphemeral(projectId: string): EphemeralPolicy[] {
    this.project(projectId);
    return this.options.ephemeral.list(projectId);
  }

  /**
   * Declares a server's tool in `.ideai/mcp-servers.json` (docs/api.md#declaring-a-tool), through the
   * project's one write path (queue, lock, compare-and-swap, links) with the servers file's revision
   * in `If-Match`; the project's catalog after the write.
   */
  declareTool(projectId: string, declaration: ToolDeclaration, options: WriteOptions): Promise<ProjectCatalog> {
    const project = this.project(projectId);
    return this.recorded(async () => {
      const state = await project.writeServers((document) => withDeclaredTool(document, declaration), options);
      const { server, tool, access } = declaration;
      this.options.logger.info({ project: projectId, server, tool, access, revision: state.servers.revision }, 'tool declared');
      return catalogOf(project);
    });
  }

  private write(projectId: string, edit: Edit, options: WriteOptions): Promise<PermissionsView> {
    const project = this.project(projectId);
    return this.recorded(async () => {
      const state = await project.write(edit, options);
      this.options.logger.info({ project: projectId, revision: state.policy.revision }, 'policy written');
      return buildPermissionsView(project.id, state.policy, state.agents, project.lastValid);
    });
  }

  /** Counts a write's outcome in the metrics. */
  private async recorded<T>(run: () => Promise<T>): Promise<T> {
    const { metrics } = this.options;
    try {
      const result = await run();
      metrics?.recordPolicyWrite('ok');
      return result;
    } catch (error) {
      metrics?.recordPolicyWrite(error instanceof ApiError ? error.code : 'internal_error');
      throw error;
    }
  }

  private project(projectId: string): Project {
    const project = this.options.registry.get(projectId);
    if (!project) throw unknownProject(projectId);
    return project;
  }
}

function checkTools(tools: readonly string[], catalog: ProjectCatalog): void {
  const problems = allowlistProblems(tools, [], catalog);
  if (problems) throw invalidTools(problems);
}

function checkLists(lists: ToolLists, catalog: ProjectCatalog): void {
  const problems = toolListsProblems(lists, catalog);
  if (problems) throw invalidTools(problems);
  checkConditions(conditionProblems(lists));
  checkLimits(limitWriteProblems(lists));
}

/** Limits on tools the lists do not name, or out of range (docs/api.md#usage-limits): `400 invalid_limits`, nothing written. */
function checkLimits(problems: readonly LimitWriteProblem[]): void {
  if (problems.length === 0) return;
  const first = problems[0];
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  throw new ApiError('invalid_limits', `Invalid limits (${first?.tool ?? ''}: ${first?.message ?? ''}${more}); nothing was written.`, {
    problems: [...problems],
  });
}

function checkConditions(problems: readonly ConditionProblem[]): void {
  if (problems.length === 0) return;
  const first = problems[0];
  const where = first === undefined ? '' : `${first.tool}${first.argument === undefined ? '' : `.${first.argument}`}: ${first.message}`;
  const more = problems.length > 1 ? ` (and ${problems.length - 1} more)` : '';
  throw new ApiError('invalid_conditions', `Invalid conditions (${where}${more}); nothing was written.`, { problems: [...problems] });
}

function checkAgentId(agentId: string): void {
  const problem = agentIdProblem(agentId);
  if (problem !== undefined) throw new ApiError('invalid_agent_id', `Invalid agent id ${JSON.stringify(agentId)}: ${problem}.`);
}

function checkEphemeralRequester(projectId: string, requester: string): void {
  const parsed = parseRequester(requester);
  if (parsed.kind !== 'ticket-assistant' || parsed.project !== projectId || !parsed.issue) {
    throw new ApiError(
      'invalid_requester',
      `Ephemeral policies are for ticket-assistant:${projectId}:<issue> requesters only, not ${JSON.stringify(requester)}.`,
    );
  }
}

function invalidTools(details: InvalidToolsDetails): ApiError {
  const parts = [
    details.unknown.length ? `unknown: ${details.unknown.join(', ')}` : '',
    details.duplicates.length ? `duplicates: ${details.duplicates.join(', ')}` : '',
    details.empty ? `${details.empty} empty name(s)` : '',
    details.conflicts?.length ? `both allowed and on ask: ${details.conflicts.join(', ')}` : '',
  ].filter(Boolean);
  return new ApiError('invalid_tools', `Invalid allowlist (${parts.join('; ')}); nothing was written.`, { ...details });
}
