/**
 * What every decision leaves behind, one sink each: the project's recent-decisions ring, the log
 * line, the audit line and the metrics. The decision service tells each sink of every decision,
 * synchronously, in the order {@link decisionSinks} lists them, before the answer leaves.
 */
import type { Logger } from 'pino';
import type { DecideQuery, Decision } from '../../schemas/index.js';
import type { CompiledPolicy } from '../domain/compile.js';
import { issueRefOf } from '../domain/decide.js';
import type { PdpMetrics } from '../ops/metrics.js';
import { auditRecordOf, type AuditFile } from './audit-file.js';
import { callDetailsOf } from './call-details.js';
import type { RecentDecisions, RecordedDecision } from './recent-decisions.js';

/** What the service knows of a decision besides the call and the answer. */
export interface DecisionContext {
  /** Its number in the service's sequence (its id ends with it). */
  readonly sequence: number;
  /** The project's policy it was decided under; undefined for an unknown project. */
  readonly policy: CompiledPolicy | undefined;
  /** `Date.now()` once it was decided: the ring, the log line and the audit line share it. */
  readonly at: number;
  /** `performance.now()` when the call came in. */
  readonly started: number;
}

export interface DecisionSink {
  record(query: DecideQuery, decision: Decision, context: DecisionContext): void;
}

/** Anyone may name any project: an unknown one's decisions are logged, never kept nor audited. */
const isKept = (decision: Decision): boolean => decision.reason !== 'unknown_project';

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

/** The project's recent-decisions ring (docs/api.md#http-api). */
export class RingSink implements DecisionSink {
  constructor(private readonly recent: RecentDecisions) {}

  record(query: DecideQuery, decision: Decision, { sequence, policy, at }: DecisionContext): void {
    if (!isKept(decision)) return;
    const { requester, tool, allow, reason, source } = decision;
    const kept = keptOfCall(query, decision, policy);
    this.recent.record(
      query.project,
      { sequence, requester: requester.id, tool: tool.name, allow, reason, source, issueRef: kept.issueRef, details: kept.details },
      at,
    );
  }
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

/** A denial at info, the one call a `once` answer let through at info, any other allowance at debug. */
export class LogSink implements DecisionSink {
  constructor(private readonly logger: Logger) {}

  record(_query: DecideQuery, decision: Decision, { at }: DecisionContext): void {
    const { logger } = this;
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
      logger.info(allowedLine(decision), 'decision allowed by approval');
    } else if (decision.allow && logger.isLevelEnabled('debug')) {
      logger.debug(allowedLine(decision), 'decision allowed');
    }
  }
}

/** One NDJSON line per decision about a known project (PDP_AUDIT_FILE). */
export class AuditSink implements DecisionSink {
  constructor(private readonly audit: AuditFile) {}

  record(query: DecideQuery, decision: Decision, { at }: DecisionContext): void {
    if (isKept(decision)) this.audit.write(auditRecordOf(decision, query.requester, new Date(at)));
  }
}

/** The decision counter and its duration, which includes the sinks before this one. */
export class MetricsSink implements DecisionSink {
  constructor(private readonly metrics: PdpMetrics) {}

  record(_query: DecideQuery, decision: Decision, { started }: DecisionContext): void {
    this.metrics.recordDecision(decision.allow, decision.reason, (performance.now() - started) / 1000);
    if (decision.reason === 'rate_limited') this.metrics.recordRateLimited(decision.tool.name);
  }
}

/** The sinks of a decision service, in the order they are told: the metrics last, timing the rest. */
export function decisionSinks(parts: {
  readonly recent: RecentDecisions;
  readonly logger: Logger;
  readonly audit?: AuditFile | undefined;
  readonly metrics?: PdpMetrics | undefined;
}): readonly DecisionSink[] {
  const sinks: DecisionSink[] = [new RingSink(parts.recent), new LogSink(parts.logger)];
  if (parts.audit !== undefined) sinks.push(new AuditSink(parts.audit));
  if (parts.metrics !== undefined) sinks.push(new MetricsSink(parts.metrics));
  return sinks;
}
