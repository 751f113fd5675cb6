/**
 * Decides tool calls over the projects' in-memory policies (docs/api.md#resolving-a-decision) and keeps what every
 * decision leaves behind: its id, the recent-decisions ring, the denial log line, the audit line
 * and the metrics. Synchronous: a decision never waits for a write, a reload or the disk.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { DecideQuery, Decision, RecentDecision } from '../../schemas/index.js';
import type { CompiledPolicy } from '../domain/compile.js';
import { decide, issueRefOf, type ApprovalsPort, type EphemeralLookup } from '../domain/decide.js';
import type { LimitsPort } from '../domain/limits.js';
import { unknownProject } from '../errors.js';
import type { PdpMetrics } from '../ops/metrics.js';
import { applyEffects } from './apply-effects.js';
import { auditRecordOf, type AuditFile } from './audit-file.js';
import { DecisionMemo } from './decision-memo.js';
import { callDetailsOf } from './call-details.js';
import { RecentDecisions, decisionIdOf, type RecordedDecision, type ReplayableDecision } from './recent-decisions.js';

export interface DecisionServiceOptions {
  /** The compiled policy of a project, or undefined when the service does not serve it. */
  readonly policyOf: (project: string) => CompiledPolicy | undefined;
  /** The live ephemeral grant of a ticket assistant, if any. */
  readonly ephemeral: EphemeralLookup;
  /** Temporary grants and approval requests (docs/api.md#approvals-and-temporary-grants); without them a tool on ask is denied. */
  readonly approvals?: ApprovalsPort | undefined;
  /** The counts of usage limits (docs/api.md#usage-limits); without them limits are not enforced (tests of other parts). */
  readonly limits?: LimitsPort | undefined;
  readonly logger: Logger;
  readonly metrics?: PdpMetrics | undefined;
  readonly audit?: AuditFile | undefined;
}

/** The fields of the log line of an allowed decision (built only when that line is logged). */
function allowedLine(decision: Decision): Record<string, string> {
  return {
    decisionId: decision.decisionId,
    project: decision.project,
    requester: decision.requester.id,
    tool: decision.tool.name,
    source: decision.source,
    revision: decision.revision,
  };
}

/**
 * What the ring keeps of a call's arguments: for a tool a policy of the project conditions, the
 * values of the conditioned arguments (call-details.ts); else its issueRef, as before conditions.
 */
function keptOfCall(
  query: DecideQuery,
  decision: Decision,
  policy: CompiledPolicy | undefined,
): Pick<RecordedDecision, 'issueRef' | 'details'> {
  const names = policy?.status === 'ok' ? policy.keptArguments.get(query.tool) : undefined;
  if (names !== undefined) return { details: callDetailsOf(query.arguments, names, decision.argument) };
  return { issueRef: query.arguments === undefined ? undefined : issueRefOf(query) };
}

export class DecisionService {
  private readonly idPrefix = randomBytes(6).toString('hex');
  private sequence = 0;
  /** The recent-decisions rings (recent-decisions-file.ts keeps them across restarts). */
  readonly recent = new RecentDecisions(this.idPrefix);
  private readonly memo = new DecisionMemo();

  constructor(private readonly options: DecisionServiceOptions) {}

  /** Decides one call; never throws. */
  decide(query: DecideQuery): Decision {
    const started = performance.now();
    const policy = this.options.policyOf(query.project);
    // Memoized when nothing but the policy decides it (decision-memo.ts); else decided, and its effects applied.
    let body = policy === undefined ? undefined : this.memo.get(policy, query.project, query.requester, query.tool);
    if (body === undefined) {
      const { ephemeral, approvals, limits } = this.options;
      const verdict = applyEffects(decide(query, policy, ephemeral, approvals, limits), approvals, limits);
      if (policy !== undefined) this.memo.offer(policy, query.requester, query.tool, verdict);
      body = verdict.body;
    }
    const sequence = ++this.sequence;
    // Field by field, not `{ ...body, decisionId }`: about 9 µs a call on Node 20 against 0.26 µs
    // (bench/README.md#logger-on-the-hot-path).
    const decision: Decision = {
      allow: body.allow,
      reason: body.reason,
      message: body.message,
      source: body.source,
      requester: body.requester,
      tool: body.tool,
      project: body.project,
      revision: body.revision,
      decisionId: decisionIdOf(this.idPrefix, sequence),
    };
    if (body.approval !== undefined) decision.approval = body.approval;
    if (body.argument !== undefined) decision.argument = body.argument;
    if (body.retryAfterSeconds !== undefined) decision.retryAfterSeconds = body.retryAfterSeconds;
    this.recordDecision(query, decision, sequence, policy);
    this.options.metrics?.recordDecision(decision.allow, decision.reason, (performance.now() - started) / 1000);
    if (decision.reason === 'rate_limited') this.options.metrics?.recordRateLimited(decision.tool.name);
    return decision;
  }

  /** The recent decisions of a project, newest first. */
  recentDecisions(project: string, allow: boolean | undefined, limit: number): RecentDecision[] {
    if (this.options.policyOf(project) === undefined) throw unknownProject(project);
    return this.recent.query(project, allow, limit);
  }

  /** The recent decisions of a project, oldest first, as a preview replays them. */
  replayable(project: string): ReplayableDecision[] {
    if (this.options.policyOf(project) === undefined) throw unknownProject(project);
    return this.recent.replayable(project);
  }

  /** Forgets the recent decisions of a project that disappeared. */
  forgetProject(project: string): void {
    this.recent.dropProject(project);
  }

  /** Told of every project change (server/projects/project-changes.ts): a removed project's recent decisions go. */
  projectChanged(project: string, change: string): void {
    if (change === 'removed') this.forgetProject(project);
  }

  /** Keeps the decision in its project's recent ring, logs a denial and writes the audit line. */
  private recordDecision(query: DecideQuery, decision: Decision, sequence: number, policy: CompiledPolicy | undefined): void {
    const at = Date.now();
    const { logger, audit } = this.options;
    // Anyone may name any project: an unknown one's decisions are logged, never kept nor audited.
    const known = decision.reason !== 'unknown_project';
    if (known) {
      this.recent.record(
        query.project,
        {
          sequence,
          requester: decision.requester.id,
          tool: decision.tool.name,
          allow: decision.allow,
          reason: decision.reason,
          source: decision.source,
          ...keptOfCall(query, decision, policy),
        },
        at,
      );
    }
    if (!decision.allow && logger.isLevelEnabled('info')) {
      // The fields of a recent-decisions entry (docs/api.md#http-api), plus the project and the revision.
      logger.info(
        {
          decisionId: decision.decisionId,
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
    } else if (decision.source === 'approval' && logger.isLevelEnabled('info')) {
      // The one call a user's `once` answer let through.
      logger.info(allowedLine(decision), 'decision allowed by approval');
    } else if (decision.allow && logger.isLevelEnabled('debug')) {
      logger.debug(allowedLine(decision), 'decision allowed');
    }
    if (known) audit?.write(auditRecordOf(decision, query.requester, new Date(at)));
  }
}
