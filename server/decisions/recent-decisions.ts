/**
 * The bounded in-memory ring of recent decisions per project (docs/api.md#http-api). Entries are kept in
 * one buffer of fixed-size records (time, sequence number, outcome codes, and indices into a small
 * per-ring table of the requester and tool names seen), not as decision objects or string
 * references: 1,000 projects × 1,000 decisions stay a few tens of megabytes, and the garbage
 * collector has nothing to trace in them; CPU per request at 1,000 projects / 1 was 0.889× with six
 * typed arrays per ring and 0.951× with one 32-byte record (bench/README.md#the-ring).
 */
import { DECISION_REASONS, POLICY_SOURCES, type DecisionReason, type PolicySource, type RecentDecision } from '../../schemas/index.js';
import { MAX_KEPT_VALUE_LENGTH, decodeDetails, encodeDetails, type CallDetails } from './call-details.js';

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
  /** The call's `arguments.issueRef` when it had one: what a replay needs to decide a ticket-scoped tool again. */
  readonly issueRef?: string | undefined;
  /** For a conditioned tool, in place of `issueRef`: the conditioned arguments' values (call-details.ts). */
  readonly details?: CallDetails | undefined;
}

/** What a replay needs of a kept decision (a preview decides it again). */
export interface ReplayableDecision {
  readonly at: number;
  readonly requester: string;
  readonly tool: string;
  readonly issueRef: string | undefined;
  /** The arguments kept of the call (`issueRef` alone for a tool no policy conditioned), and which names were kept. */
  readonly arguments: Readonly<Record<string, unknown>>;
  readonly kept: readonly string[];
}

/** A longer issueRef is kept cut: no ticket is that long, so the cut one still matches none (bounded memory and disk). */
const MAX_KEPT_ISSUE_REF = MAX_KEPT_VALUE_LENGTH;

/** The text the ISSUE field names for a decision: a plain issueRef (cut), or encoded details. */
function detailsText(decision: RecordedDecision): string | undefined {
  if (decision.details !== undefined) return encodeDetails(decision.details);
  const { issueRef } = decision;
  if (issueRef === undefined) return undefined;
  // Text starting with `{` is details: such an issueRef is kept as details too.
  return issueRef.startsWith('{')
    ? encodeDetails({ kept: ['issueRef'], values: { issueRef: issueRef.slice(0, MAX_KEPT_ISSUE_REF) } })
    : issueRef.slice(0, MAX_KEPT_ISSUE_REF);
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

  list(): readonly string[] {
    return [...this.names];
  }
}

function isLittleEndian(): boolean {
  return new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
}

/**
 * One decision is one 32-byte record in one buffer: time (f64), sequence (f64), requester and tool
 * name indices (u32 each), outcome and source codes (u8 each), the id prefix's name index (u16) and
 * the issueRef's name index + 1 (u32, 0: none); half a cache line, written at once.
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
const PREFIX = 13; // u16 index (bytes 26-27): the id prefix of the process that decided
const ISSUE = 7; // u32 index (bytes 28-31)
const U16_PER_RECORD = RECORD_BYTES / 2;

/** A ring as saved: its names and its records, oldest first, in the layout above. */
export interface RingSnapshot {
  readonly names: readonly string[];
  readonly records: Uint8Array;
}

class Ring {
  private readonly f64: Float64Array;
  private readonly u32: Uint32Array;
  private readonly u16: Uint16Array;
  private readonly u8: Uint8Array;
  private names = new NameTable();
  private next = 0;
  private size = 0;
  /** Set by every push, cleared when the ring is saved. */
  dirty = false;
  /** The index of this process's id prefix in `names`, looked up once rather than at every push. */
  private prefixIndex: number;

  constructor(
    private readonly capacity: number,
    private readonly idPrefix: string,
  ) {
    const buffer = new ArrayBuffer(capacity * RECORD_BYTES);
    this.f64 = new Float64Array(buffer);
    this.u32 = new Uint32Array(buffer);
    this.u16 = new Uint16Array(buffer);
    this.u8 = new Uint8Array(buffer);
    this.prefixIndex = this.names.indexOf(idPrefix);
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
    this.u16[slot * U16_PER_RECORD + PREFIX] = this.prefixIndex;
    const details = detailsText(decision);
    this.u32[u + ISSUE] = details === undefined ? 0 : this.names.indexOf(details) + 1;
    this.advance();
  }

  private advance(): void {
    this.next = (this.next + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
    this.dirty = true;
    // Names no entry uses any more are dropped once they outnumber the entries (amortized O(1)).
    if (this.names.size > 2 * this.capacity + 64) this.compactNames();
  }

  private compactNames(): void {
    const old = this.names;
    const names = new NameTable();
    for (let slot = 0; slot < this.size; slot++) this.renameSlot(slot, (index) => old.at(index), names);
    this.names = names;
    this.prefixIndex = names.indexOf(this.idPrefix);
  }

  /** Re-points the name indices of a slot from the names `at` gives to the table `to`. */
  private renameSlot(slot: number, at: (index: number) => string, to: NameTable): void {
    const u = slot * U32_PER_RECORD;
    const h = slot * U16_PER_RECORD;
    this.u32[u + REQUESTER] = to.indexOf(at(this.u32[u + REQUESTER] ?? 0));
    this.u32[u + TOOL] = to.indexOf(at(this.u32[u + TOOL] ?? 0));
    this.u16[h + PREFIX] = to.indexOf(at(this.u16[h + PREFIX] ?? 0));
    const issue = this.u32[u + ISSUE] ?? 0;
    if (issue !== 0) this.u32[u + ISSUE] = to.indexOf(at(issue - 1)) + 1;
  }

  /** Slots oldest first. */
  private *slots(): Generator<number> {
    for (let i = this.size; i >= 1; i--) yield (this.next - i + this.capacity) % this.capacity;
  }

  /** The decisions a replay needs, oldest first. */
  replayable(): ReplayableDecision[] {
    const out: ReplayableDecision[] = [];
    for (const slot of this.slots()) {
      const u = slot * U32_PER_RECORD;
      const issue = this.u32[u + ISSUE] ?? 0;
      const details = issue === 0 ? undefined : decodeDetails(this.names.at(issue - 1));
      const issueRef = details?.values.issueRef;
      out.push({
        at: this.f64[slot * F64_PER_RECORD + AT] ?? 0,
        requester: this.names.at(this.u32[u + REQUESTER] ?? 0),
        tool: this.names.at(this.u32[u + TOOL] ?? 0),
        issueRef: typeof issueRef === 'string' || typeof issueRef === 'number' ? String(issueRef) : undefined,
        arguments: details?.values ?? {},
        kept: details?.kept ?? ['issueRef'],
      });
    }
    return out;
  }

  snapshot(): RingSnapshot {
    // Only the names the records use are saved: names dropped lazily (up to 2 × capacity + 64 of
    // them) made a file of 1,000 conditioned calls grow from 212 KB to 372 KB after 20,000 calls.
    if (this.names.size > this.size + 64) this.compactNames();
    // Two copies (oldest slot to the end of the buffer, then its start), not one per record: a
    // full ring took 0.54 ms record by record, which 32 saves a second paid on the main thread.
    const records = new Uint8Array(this.size * RECORD_BYTES);
    const oldest = (this.next - this.size + this.capacity) % this.capacity;
    const toEnd = Math.min(this.size, this.capacity - oldest);
    records.set(this.u8.subarray(oldest * RECORD_BYTES, (oldest + toEnd) * RECORD_BYTES));
    records.set(this.u8.subarray(0, (this.size - toEnd) * RECORD_BYTES), toEnd * RECORD_BYTES);
    return { names: this.names.list(), records };
  }

  /** Appends the records of a snapshot (oldest first); false, and nothing appended, when one of them is not a record. */
  restore(snapshot: RingSnapshot): boolean {
    const { names, records } = snapshot;
    if (records.length % RECORD_BYTES !== 0 || names.some((name) => typeof name !== 'string')) return false;
    const view = new DataView(records.buffer, records.byteOffset, records.byteLength);
    const count = records.length / RECORD_BYTES;
    const little = isLittleEndian();
    for (let index = 0; index < count; index++) {
      const b = index * RECORD_BYTES;
      const outcome = view.getUint8(b + OUTCOME);
      const issue = view.getUint32(b + ISSUE * 4, little);
      const valid =
        Number.isFinite(view.getFloat64(b + AT * 8, little)) &&
        Number.isSafeInteger(view.getFloat64(b + SEQUENCE * 8, little)) &&
        view.getUint32(b + REQUESTER * 4, little) < names.length &&
        view.getUint32(b + TOOL * 4, little) < names.length &&
        view.getUint16(b + PREFIX * 2, little) < names.length &&
        issue <= names.length &&
        outcome >> 1 < DECISION_REASONS.length &&
        view.getUint8(b + SOURCE) < POLICY_SOURCES.length;
      if (!valid) return false;
    }
    // Only the last `capacity` records fit.
    for (let index = Math.max(0, count - this.capacity); index < count; index++) {
      const slot = this.next;
      this.u8.set(records.subarray(index * RECORD_BYTES, (index + 1) * RECORD_BYTES), slot * RECORD_BYTES);
      this.renameSlot(slot, (name) => names[name] ?? '', this.names);
      this.advance();
    }
    return true;
  }

  /** Newest first. */
  query(allow: boolean | undefined, limit: number): RecentDecision[] {
    const out: RecentDecision[] = [];
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const slot = (this.next - i + this.capacity) % this.capacity;
      const f = slot * F64_PER_RECORD;
      const u = slot * U32_PER_RECORD;
      const b = slot * RECORD_BYTES;
      const outcome = this.u8[b + OUTCOME] ?? 0;
      const allowed = (outcome & 1) === 1;
      if (allow !== undefined && allowed !== allow) continue;
      const reason = DECISION_REASONS[outcome >> 1] ?? 'not_in_allowlist';
      const issue = this.u32[u + ISSUE] ?? 0;
      const refused = reason === 'argument_not_allowed' && issue !== 0 ? decodeDetails(this.names.at(issue - 1))?.refused : undefined;
      out.push({
        decisionId: decisionIdOf(this.names.at(this.u16[slot * U16_PER_RECORD + PREFIX] ?? 0), this.f64[f + SEQUENCE] ?? 0),
        at: new Date(this.f64[f + AT] ?? 0).toISOString(),
        requester: this.names.at(this.u32[u + REQUESTER] ?? 0),
        tool: this.names.at(this.u32[u + TOOL] ?? 0),
        allow: allowed,
        reason,
        source: POLICY_SOURCES[this.u8[b + SOURCE] ?? 0] ?? 'none',
        ...(refused === undefined ? {} : { argument: refused }),
      });
    }
    return out;
  }
}

export class RecentDecisions {
  private readonly rings = new Map<string, Ring>();
  /** Where the next bounded {@link takeDirty} starts looking. */
  private dirtyCursor = 0;

  /** `idPrefix`: the prefix of the decision ids the caller makes with {@link decisionIdOf}. */
  constructor(
    private readonly idPrefix: string,
    private readonly capacity = RECENT_DECISIONS_PER_PROJECT,
  ) {}

  /** Records a decision about a project the service knows (callers must not pass arbitrary ids). */
  record(project: string, decision: RecordedDecision, at: number = Date.now()): void {
    this.ringOf(project).push(decision, at);
  }

  private ringOf(project: string): Ring {
    let ring = this.rings.get(project);
    if (!ring) {
      ring = new Ring(this.capacity, this.idPrefix);
      this.rings.set(project, ring);
    }
    return ring;
  }

  query(project: string, allow: boolean | undefined, limit: number): RecentDecision[] {
    return this.rings.get(project)?.query(allow, limit) ?? [];
  }

  /** The kept decisions of a project, oldest first, as a replay needs them. */
  replayable(project: string): ReplayableDecision[] {
    return this.rings.get(project)?.replayable() ?? [];
  }

  dropProject(project: string): void {
    this.rings.delete(project);
  }

  projects(): string[] {
    return [...this.rings.keys()];
  }

  /**
   * At most `limit` of the projects recorded since their last snapshot, each snapshot taken (and
   * the ring marked clean); each call starts after the last project taken, so none waits forever.
   */
  takeDirty(limit = Infinity): { project: string; snapshot: RingSnapshot }[] {
    const out: { project: string; snapshot: RingSnapshot }[] = [];
    const rings = [...this.rings];
    for (let step = 0; step < rings.length && out.length < limit; step++) {
      const index = (this.dirtyCursor + step) % rings.length;
      const [project, ring] = rings[index] as [string, Ring];
      if (!ring.dirty) continue;
      ring.dirty = false;
      out.push({ project, snapshot: ring.snapshot() });
      if (out.length === limit) this.dirtyCursor = index + 1;
    }
    return out;
  }

  /** Puts back what a snapshot holds, before what the project recorded since; false when it is not a valid snapshot. */
  restore(project: string, snapshot: RingSnapshot): boolean {
    const ring = new Ring(this.capacity, this.idPrefix);
    if (!ring.restore(snapshot)) return false;
    const current = this.rings.get(project);
    if (current !== undefined && !ring.restore(current.snapshot())) return false;
    ring.dirty = current !== undefined;
    this.rings.set(project, ring);
    return true;
  }
}
