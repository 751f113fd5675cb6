/**
 * The bounded in-memory ring of recent decisions per project (SPEC §5). Entries are kept in typed
 * arrays (time, sequence number, outcome codes) plus two string references (requester, tool), not
 * as decision objects: 1,000 projects × 1,000 decisions stay tens of megabytes, and the garbage
 * collector has almost nothing to trace.
 */
import { DECISION_REASONS, POLICY_SOURCES, type DecisionReason, type PolicySource, type RecentDecision } from '../../schemas/index.js';

export const RECENT_DECISIONS_PER_PROJECT = 1000;

const REASON_CODE = new Map<DecisionReason, number>(DECISION_REASONS.map((reason, index) => [reason, index]));
const SOURCE_CODE = new Map<PolicySource, number>(POLICY_SOURCES.map((source, index) => [source, index]));

/** What the ring keeps of one decision. */
export interface RecordedDecision {
  readonly sequence: number;
  readonly requester: string;
  readonly tool: string;
  readonly allow: boolean;
  readonly reason: DecisionReason;
  readonly source: PolicySource;
}

class Ring {
  private readonly at: Float64Array;
  private readonly sequence: Float64Array;
  private readonly outcome: Uint8Array; // allow bit, reason index << 1
  private readonly source: Uint8Array;
  private readonly requester: string[];
  private readonly tool: string[];
  private next = 0;
  private size = 0;

  constructor(private readonly capacity: number) {
    this.at = new Float64Array(capacity);
    this.sequence = new Float64Array(capacity);
    this.outcome = new Uint8Array(capacity);
    this.source = new Uint8Array(capacity);
    this.requester = new Array<string>(capacity).fill('');
    this.tool = new Array<string>(capacity).fill('');
  }

  push(decision: RecordedDecision, at: number): void {
    const slot = this.next;
    this.at[slot] = at;
    this.sequence[slot] = decision.sequence;
    this.outcome[slot] = ((REASON_CODE.get(decision.reason) ?? 0) << 1) | (decision.allow ? 1 : 0);
    this.source[slot] = SOURCE_CODE.get(decision.source) ?? 0;
    this.requester[slot] = decision.requester;
    this.tool[slot] = decision.tool;
    this.next = (slot + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  /** Newest first. */
  query(allow: boolean | undefined, limit: number, idOf: (sequence: number) => string): RecentDecision[] {
    const out: RecentDecision[] = [];
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const slot = (this.next - i + this.capacity) % this.capacity;
      const outcome = this.outcome[slot] ?? 0;
      const allowed = (outcome & 1) === 1;
      if (allow !== undefined && allowed !== allow) continue;
      out.push({
        decisionId: idOf(this.sequence[slot] ?? 0),
        at: new Date(this.at[slot] ?? 0).toISOString(),
        requester: this.requester[slot] ?? '',
        tool: this.tool[slot] ?? '',
        allow: allowed,
        reason: DECISION_REASONS[outcome >> 1] ?? 'not_in_allowlist',
        source: POLICY_SOURCES[this.source[slot] ?? 0] ?? 'none',
      });
    }
    return out;
  }
}

export class RecentDecisions {
  private readonly rings = new Map<string, Ring>();

  /** `idOf` turns a recorded sequence number back into the decision id the caller answered. */
  constructor(
    private readonly idOf: (sequence: number) => string,
    private readonly capacity = RECENT_DECISIONS_PER_PROJECT,
  ) {}

  /** Records a decision about a project the service knows (callers must not pass arbitrary ids). */
  record(project: string, decision: RecordedDecision): void {
    let ring = this.rings.get(project);
    if (!ring) {
      ring = new Ring(this.capacity);
      this.rings.set(project, ring);
    }
    ring.push(decision, Date.now());
  }

  query(project: string, allow: boolean | undefined, limit: number): RecentDecision[] {
    return this.rings.get(project)?.query(allow, limit, this.idOf) ?? [];
  }

  dropProject(project: string): void {
    this.rings.delete(project);
  }
}
