/**
 * The policy service: decisions over the in-memory state, the permissions views, and the writes.
 * It holds no Fastify; routes call it and map its results and `AppError`s to HTTP.
 */
import { randomBytes } from 'node:crypto';
// Imported rather than read from the global object: a global `performance` is a lookup per call (callgrind: LoadGlobalIC twice a decision).
import { performance } from 'node:perf_hooks';
import fastJson from 'fast-json-stringify';
import type { Logger } from 'pino';
import {
  AGENT_ID_REGEX,
  DEFAULT_EPHEMERAL_TTL_SECONDS,
  DecisionSchema,
  TOOL_CATALOG,
  type DecideQuery,
  type Decision,
  type EffectivePolicy,
  type EphemeralPolicy,
  type PermissionsView,
  type PolicyDocument,
  type ProjectsResponse,
  type RecentDecision,
} from '../schemas/index.js';
import { decide, resolveEffective, type DecisionBody, type EphemeralLookup } from './domain/decide.js';
import { DecisionCache, UNKNOWN_PROJECT, freezeDecision, jsonPrefixOf, type CachedDecision } from './decisions/decision-cache.js';
import { allowlistProblems, mergeProblems, withAgentOverride, withProjectDefault } from './domain/edit.js';
import { buildPermissionsView, complement } from './domain/view.js';
import { documentProblem } from './domain/compile.js';
import { parseRequester } from './domain/requester.js';
import { AppError, unknownProject } from './errors.js';
import { auditRecordOf, type AuditFile } from './decisions/audit-file.js';
import type { PdpMetrics } from './ops/metrics.js';
import { EphemeralPolicies } from './permissions/ephemeral.js';
import type { Project, WriteOptions } from './projects/project.js';
import { RecentDecisions } from './decisions/recent-decisions.js';
import type { ProjectRegistry } from './projects/registry.js';

const ALL_TOOLS = TOOL_CATALOG.map((tool) => tool.name);

/** The response schema's serializer (what Fastify would run on the route's 200 answer). */
const serializeDecision: (decision: Decision) => string = fastJson(DecisionSchema);

export interface PolicyServiceOptions {
  readonly registry: ProjectRegistry;
  readonly logger: Logger;
  readonly metrics?: PdpMetrics | undefined;
  readonly audit?: AuditFile | undefined;
}

export class PolicyService {
  readonly ephemeral = new EphemeralPolicies();
  readonly recent = new RecentDecisions((sequence) => this.decisionId(sequence));
  private readonly cache = new DecisionCache();
  private readonly registry: ProjectRegistry;
  private readonly logger: Logger;
  private readonly metrics: PdpMetrics | undefined;
  private readonly audit: AuditFile | undefined;
  private readonly idPrefix = randomBytes(6).toString('hex');
  private sequence = 0;
  private readonly lookupEphemeral: EphemeralLookup = (project, requester) => this.ephemeral.grant(project, requester);

  constructor(options: PolicyServiceOptions) {
    this.registry = options.registry;
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.audit = options.audit;
  }

  /** Decides one call. Synchronous, never throws, never waits for a write or a reload. */
  decide(query: DecideQuery): Decision {
    const started = this.metrics ? performance.now() : 0;
    const { body } = this.resolve(query);
    const decision: Decision = { ...body, decisionId: this.record(query, body) };
    this.metrics?.recordDecision(decision.allow, decision.reason, (performance.now() - started) / 1000);
    return decision;
  }

  /**
   * {@link decide}, answered as the JSON text of the decision (what `POST /decide` sends): a repeated
   * question of an agent or anonymous requester reuses the serialization of its first answer under
   * the same policy and only stamps a new decision id.
   */
  decideJson(query: DecideQuery): string {
    const started = this.metrics ? performance.now() : 0;
    const resolved = this.resolve(query);
    const { body } = resolved;
    const decisionId = this.record(query, body);
    let prefix = resolved.jsonPrefix;
    if (prefix === undefined) {
      // First answer of a cached decision through /decide: serialize it once for every later call.
      prefix = resolved.jsonPrefix = jsonPrefixOf(body, serializeDecision) ?? null;
      if (prefix !== null) this.cache.charge(2 * prefix.length);
    }
    const json = prefix === null ? serializeDecision({ ...body, decisionId }) : `${prefix}${decisionId}"}`;
    this.metrics?.recordDecision(body.allow, body.reason, (performance.now() - started) / 1000);
    return json;
  }

  /**
   * The decision body for a query, from the cache when the same question was asked of the same
   * policy: no allocation on that path.
   */
  private resolve(query: DecideQuery): CachedDecision {
    const policy = this.registry.get(query.project)?.state.policy;
    // An unknown project's answers are cached too (under a key no policy can equal): answering one
    // from scratch serializes it with the schema's serializer, which a rare path leaves unoptimized
    // (~60k instructions a call, callgrind).
    const key = policy ?? UNKNOWN_PROJECT;
    const hit = this.cache.get(query.project, key, query.requester, query.tool);
    if (hit) return hit;
    const body = decide(query, policy, this.lookupEphemeral);
    // Ticket assistants depend on ephemeral grants (and on arguments): decided every time.
    if (body.requester.kind === 'ticket-assistant') return { body, jsonPrefix: null };
    const cached: CachedDecision = { body: freezeDecision(body), jsonPrefix: undefined };
    this.cache.set(query.project, key, query.requester, query.tool, cached);
    return cached;
  }

  /** Numbers, records, logs and audits one decision; returns its id. */
  private record(query: DecideQuery, decision: DecisionBody): string {
    const sequence = ++this.sequence;
    const decisionId = this.decisionId(sequence);
    const at = Date.now();
    if (decision.reason !== 'unknown_project') {
      this.recent.record(
        query.project,
        {
          sequence,
          requester: decision.requester.id,
          tool: decision.tool.name,
          allow: decision.allow,
          reason: decision.reason,
          source: decision.source,
        },
        at,
      );
    }
    if (!decision.allow && this.logger.isLevelEnabled('info')) {
      // The fields of a recent-decisions entry (SPEC §5), plus the project and the policy revision.
      this.logger.info(
        {
          decisionId,
          at: new Date(at).toISOString(),
          project: decision.project,
          requester: decision.requester.id,
          tool: decision.tool.name,
          allow: false,
          reason: decision.reason,
          source: decision.source,
          revision: decision.revision,
        },
        'decision denied',
      );
    } else if (this.logger.isLevelEnabled('debug')) {
      this.logger.debug(
        {
          decisionId,
          project: decision.project,
          requester: decision.requester.id,
          tool: decision.tool.name,
          source: decision.source,
          revision: decision.revision,
        },
        'decision allowed',
      );
    }
    if (this.audit) this.audit.write(auditRecordOf({ ...decision, decisionId }, query.requester));
    return decisionId;
  }

  effective(projectId: string, requester: string): EffectivePolicy {
    const project = this.project(projectId);
    const resolution = resolveEffective(projectId, requester, project.state.policy, this.lookupEphemeral);
    const allowed = resolution.allowlist?.tools ?? [];
    return {
      project: projectId,
      requester: { id: resolution.requester.id, kind: resolution.requester.kind },
      source: resolution.allowlist?.source ?? 'none',
      allowedTools: [...allowed],
      deniedTools: complement(new Set(allowed), ALL_TOOLS),
      revision: project.state.policy.revision,
      boundIssue: resolution.boundIssue === null ? null : `#${resolution.boundIssue}`,
    };
  }

  listProjects(): ProjectsResponse {
    return {
      projects: this.registry.list().map((project) => {
        const { policy } = project.state;
        const view = buildPermissionsView(project.id, policy, project.state.agents);
        return {
          id: project.id,
          status: policy.status,
          revision: policy.revision,
          agents: view.agents.length,
          overrides: policy.status === 'ok' ? policy.overrides.size : 0,
        };
      }),
    };
  }

  view(projectId: string): PermissionsView {
    const project = this.project(projectId);
    return buildPermissionsView(project.id, project.state.policy, project.state.agents);
  }

  async putDefault(projectId: string, tools: readonly string[], options: WriteOptions): Promise<PermissionsView> {
    this.checkTools(tools);
    return this.write(projectId, (policy) => withProjectDefault(policy.document, tools), options);
  }

  async deleteDefault(projectId: string, options: WriteOptions): Promise<PermissionsView> {
    return this.write(projectId, (policy) => withProjectDefault(policy.document, null), options);
  }

  async putAgent(projectId: string, agentId: string, tools: readonly string[], options: WriteOptions): Promise<PermissionsView> {
    checkAgentId(agentId);
    this.checkTools(tools);
    return this.write(projectId, (policy) => withAgentOverride(policy.document, agentId, tools), options);
  }

  async deleteAgent(projectId: string, agentId: string, options: WriteOptions): Promise<PermissionsView> {
    checkAgentId(agentId);
    return this.write(projectId, (policy) => withAgentOverride(policy.document, agentId, null), options);
  }

  async putDocument(projectId: string, document: PolicyDocument, options: WriteOptions): Promise<PermissionsView> {
    const problem = documentProblem(document);
    if (problem) throw new AppError(400, 'invalid_request', `Invalid policy document: ${problem.message}.`, { ...problem });
    const tools = mergeProblems([
      document.projectDefault ? allowlistProblems(document.projectDefault.allowedTools) : null,
      ...(document.agents ?? []).map((agent) => allowlistProblems(agent.policy.allowedTools)),
    ]);
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
    this.project(projectId);
    this.checkEphemeralRequester(projectId, requester);
    this.checkTools(tools);
    return this.ephemeral.put(projectId, requester, tools, boundIssue, ttlSeconds ?? DEFAULT_EPHEMERAL_TTL_SECONDS);
  }

  deleteEphemeral(projectId: string, requester: string): void {
    this.project(projectId);
    this.checkEphemeralRequester(projectId, requester);
    this.ephemeral.delete(projectId, requester);
  }

  listEphemeral(projectId: string): EphemeralPolicy[] {
    this.project(projectId);
    return this.ephemeral.list(projectId);
  }

  recentDecisions(projectId: string, allow: boolean | undefined, limit: number): RecentDecision[] {
    this.project(projectId);
    return this.recent.query(projectId, allow, limit);
  }

  /** Forgets the in-memory extras of a project that disappeared. */
  forgetProject(projectId: string): void {
    this.ephemeral.dropProject(projectId);
    this.recent.dropProject(projectId);
    this.cache.dropProject(projectId);
  }

  /** Decision ids: a random per-process prefix and a counter (unique, and cheap on the hot path). */
  private decisionId(sequence: number): string {
    return `${this.idPrefix}-${sequence.toString(36)}`;
  }

  close(): void {
    this.ephemeral.close();
  }

  private async write(projectId: string, edit: Parameters<Project['write']>[0], options: WriteOptions): Promise<PermissionsView> {
    const project = this.project(projectId);
    try {
      const state = await project.write(edit, options);
      this.metrics?.recordPolicyWrite('ok');
      this.logger.info({ project: projectId, revision: state.policy.revision }, 'policy written');
      return buildPermissionsView(project.id, state.policy, state.agents);
    } catch (error) {
      this.metrics?.recordPolicyWrite(error instanceof AppError ? error.code : 'internal_error');
      throw error;
    }
  }

  private project(projectId: string): Project {
    const project = this.registry.get(projectId);
    if (!project) throw unknownProject(projectId);
    return project;
  }

  private checkTools(tools: readonly string[]): void {
    const problems = allowlistProblems(tools);
    if (problems) throw invalidTools(problems);
  }

  private checkEphemeralRequester(projectId: string, requester: string): void {
    const parsed = parseRequester(requester);
    if (parsed.kind !== 'ticket-assistant' || parsed.project !== projectId || !parsed.issue) {
      throw new AppError(
        400,
        'invalid_requester',
        `Ephemeral policies are for ticket-assistant:${projectId}:<issue> requesters only, not ${JSON.stringify(requester)}.`,
      );
    }
  }
}

function checkAgentId(agentId: string): void {
  if (!AGENT_ID_REGEX.test(agentId)) {
    throw new AppError(
      400,
      'invalid_agent_id',
      `Invalid agent id ${JSON.stringify(agentId)}: 1 to 128 characters, no ':', '/', '\\' or control characters, not starting with a space.`,
    );
  }
}

function invalidTools(details: { unknown: string[]; duplicates: string[]; empty: number }): AppError {
  const parts = [
    details.unknown.length ? `unknown: ${details.unknown.join(', ')}` : '',
    details.duplicates.length ? `duplicates: ${details.duplicates.join(', ')}` : '',
    details.empty ? `${details.empty} empty name(s)` : '',
  ].filter(Boolean);
  return new AppError(400, 'invalid_tools', `Invalid allowlist (${parts.join('; ')}); nothing was written.`, { ...details });
}
