/**
 * The bounded in-memory ring of recent decisions per project (docs/api.md §5). Entries are kept in
 * one buffer of fixed-size records (time, sequence number, outcome codes, and indices into a small
 * per-ring table of the requester and tool names seen), not as decision objects or string
 * references: 1,000 projects × 1,000 decisions stay a few tens of megabytes, and the garbage
 * collector has nothing to trace in them (bench/README.md, "the ring").
 */
import { DECISION_REASONS, POLICY_SOURCES, type DecisionReason, type PolicySource, type RecentDecision } from '../../schemas/index.js';

const RECENT_DECISIONS_PER_PROJECT = 1000;

const REASON_CODE = new Map<DecisionReason, number>(DECISION_REASONS.map((reason, index) => [reason, index]));
const SOURCE_CODE = new Map<PolicySource, number>(POLICY_SOURCES.map((source, index) => [source, index]));

/** A decision id: the process's prefix and the decision's sequence number in base 36 (unique, cheap to make). */
export function decisionIdOf(prefix: string, sequence: number): string {
  return `${prefix}-${sequence.toString(36)}`;
}

/** What the ring keeps of one decision. */
export interface RecordedDecision {
  /** The number its id was made from with {@link decisionIdOf} and the ring's id prefix. */
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

/**
 * One decision is one 32-byte record in one buffer: time (f64), sequence (f64), requester and tool
 * name indices (u32 each), outcome and source codes (u8 each); half a cache line, written at once.
 */
const RECORD_BYTES = 32;
const F64_PER_RECORD = RECORD_BYTES / 8;
const U32_PER_RECORD = RECORD_BYTES / 4;
/** Byte offsets and typed-array indices of the fields inside a record. */
const AT = 0; // f64 index
const SEQUENCE = 1; // f64 index
const REQUESTER = 4; // u32 index
const TOOL = 5; // u32 index
const OUTCOME = 24; // byte: allow bit, reason index << 1
const SOURCE = 25; // byte

class Ring {
  private readonly f64: Float64Array;
  private readonly u32: Uint32Array;
  private readonly u8: Uint8Array;
  private names = new NameTable();
  private next = 0;
  private size = 0;

  constructor(private readonly capacity: number) {
    const buffer = new ArrayBuffer(capacity * RECORD_BYTES);
    this.f64 = new Float64Array(buffer);
    this.u32 = new Uint32Array(buffer);
    this.u8 = new Uint8Array(buffer);
  }

  push(decision: RecordedDecision, at: number): void {
    const slot = this.next;
    const f = slot * F64_PER_RECORD;
    const u = slot * U32_PER_RECORD;
    const b = slot * RECORD_BYTES;
    this.f64[f + AT] = at;
    this.f64[f + SEQUENCE] = decision.sequence;
    this.u32[u + REQUESTER] = this.names.indexOf(decision.requester);
    this.u32[u + TOOL] = this.names.indexOf(decision.tool);
    this.u8[b + OUTCOME] = ((REASON_CODE.get(decision.reason) ?? 0) << 1) | (decision.allow ? 1 : 0);
    this.u8[b + SOURCE] = SOURCE_CODE.get(decision.source) ?? 0;
    this.next = (slot + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
    // Names no entry uses any more are dropped once they outnumber the entries (amortized O(1)).
    if (this.names.size > 2 * this.capacity + 64) this.compactNames();
  }

  private compactNames(): void {
    const names = new NameTable();
    for (let slot = 0; slot < this.size; slot++) {
      const u = slot * U32_PER_RECORD;
      this.u32[u + REQUESTER] = names.indexOf(this.names.at(this.u32[u + REQUESTER] ?? 0));
      this.u32[u + TOOL] = names.indexOf(this.names.at(this.u32[u + TOOL] ?? 0));
    }
    this.names = names;
  }

  /** Newest first. */
  query(allow: boolean | undefined, limit: number, idPrefix: string): RecentDecision[] {
    const out: RecentDecision[] = [];
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const slot = (this.next - i + this.capacity) % this.capacity;
      const f = slot * F64_PER_RECORD;
      const u = slot * U32_PER_RECORD;
      const b = slot * RECORD_BYTES;
      const outcome = this.u8[b + OUTCOME] ?? 0;
      const allowed = (outcome & 1) === 1;
      if (allow !== undefined && allowed !== allow) continue;
      out.push({
        decisionId: decisionIdOf(idPrefix, this.f64[f + SEQUENCE] ?? 0),
        at: new Date(this.f64[f + AT] ?? 0).toISOString(),
        requester: this.names.at(this.u32[u + REQUESTER] ?? 0),
        tool: this.names.at(this.u32[u + TOOL] ?? 0),
        allow: allowed,
        reason: DECISION_REASONS[outcome >> 1] ?? 'not_in_allowlist',
        source: POLICY_SOURCES[this.u8[b + SOURCE] ?? 0] ?? 'none',
      });
    }
    return out;
  }
}

export class RecentDecisions {
  private readonly rings = new Map<string, Ring>();

  /** `idPrefix`: the prefix of the decision ids the caller makes with {@link decisionIdOf}. */
  constructor(
    private readonly idPrefix: string,
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
    return this.rings.get(project)?.query(allow, limit, this.idPrefix) ?? [];
  }

  dropProject(project: string): void {
    this.rings.delete(project);
  }
}
