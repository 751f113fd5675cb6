/**
 * The bounded in-memory ring of recent decisions per project (SPEC §5). Entries are kept in typed
 * arrays only (time, sequence number, outcome codes, and indices into a small per-ring table of the
 * requester and tool names seen), not as decision objects or string references: 1,000 projects ×
 * 1,000 decisions stay a few tens of megabytes, and the garbage collector has nothing to trace in
 * them (no old-to-young pointer is written per decision).
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

/** Interned names: each distinct string is kept once and referred to by its index. */
class NameTable {
  private readonly index = new Map<string, number>();
  private readonly names: string[] = [];

  get size(): number {
    return this.names.length;
  }

  indexOf(name: string): number {
    let index = this.index.get(name);
    if (index === undefined) {
      index = this.names.length;
      this.names.push(name);
      this.index.set(name, index);
    }
    return index;
  }

  at(index: number): string {
    return this.names[index] ?? '';
  }
}

class Ring {
  private readonly at: Float64Array;
  private readonly sequence: Float64Array;
  private readonly outcome: Uint8Array; // allow bit, reason index << 1
  private readonly source: Uint8Array;
  private readonly requester: Uint32Array;
  private readonly tool: Uint32Array;
  private names = new NameTable();
  private next = 0;
  private size = 0;

  constructor(private readonly capacity: number) {
    this.at = new Float64Array(capacity);
    this.sequence = new Float64Array(capacity);
    this.outcome = new Uint8Array(capacity);
    this.source = new Uint8Array(capacity);
    this.requester = new Uint32Array(capacity);
    this.tool = new Uint32Array(capacity);
  }

  push(decision: RecordedDecision, at: number): void {
    const slot = this.next;
    this.at[slot] = at;
    this.sequence[slot] = decision.sequence;
    this.outcome[slot] = ((REASON_CODE.get(decision.reason) ?? 0) << 1) | (decision.allow ? 1 : 0);
    this.source[slot] = SOURCE_CODE.get(decision.source) ?? 0;
    this.requester[slot] = this.names.indexOf(decision.requester);
    this.tool[slot] = this.names.indexOf(decision.tool);
    this.next = (slot + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
    // Names no entry uses any more are dropped once they outnumber the entries (amortized O(1)).
    if (this.names.size > 2 * this.capacity + 64) this.compactNames();
  }

  private compactNames(): void {
    const names = new NameTable();
    for (let slot = 0; slot < this.size; slot++) {
      this.requester[slot] = names.indexOf(this.names.at(this.requester[slot] ?? 0));
      this.tool[slot] = names.indexOf(this.names.at(this.tool[slot] ?? 0));
    }
    this.names = names;
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
        requester: this.names.at(this.requester[slot] ?? 0),
        tool: this.names.at(this.tool[slot] ?? 0),
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
  record(project: string, decision: RecordedDecision, at: number = Date.now()): void {
    let ring = this.rings.get(project);
    if (!ring) {
      ring = new Ring(this.capacity);
      this.rings.set(project, ring);
    }
    ring.push(decision, at);
  }

  query(project: string, allow: boolean | undefined, limit: number): RecentDecision[] {
    return this.rings.get(project)?.query(allow, limit, this.idOf) ?? [];
  }

  dropProject(project: string): void {
    this.rings.delete(project);
  }
}
