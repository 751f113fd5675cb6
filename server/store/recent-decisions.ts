/**
 * The bounded in-memory ring of recent decisions per project (SPEC §5): fixed-size arrays, so
 * recording a decision allocates nothing beyond the decision it keeps.
 */
import type { Decision, RecentDecision } from '../../schemas/index.js';

export const RECENT_DECISIONS_PER_PROJECT = 1000;

class Ring {
  private readonly decisions: (Decision | undefined)[];
  private readonly times: Float64Array;
  private next = 0;
  private size = 0;

  constructor(private readonly capacity: number) {
    this.decisions = new Array<Decision | undefined>(capacity);
    this.times = new Float64Array(capacity);
  }

  push(decision: Decision, at: number): void {
    this.decisions[this.next] = decision;
    this.times[this.next] = at;
    this.next = (this.next + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
  }

  /** Newest first. */
  query(allow: boolean | undefined, limit: number): RecentDecision[] {
    const out: RecentDecision[] = [];
    for (let i = 1; i <= this.size && out.length < limit; i++) {
      const index = (this.next - i + this.capacity) % this.capacity;
      const decision = this.decisions[index];
      if (!decision || (allow !== undefined && decision.allow !== allow)) continue;
      out.push({
        decisionId: decision.decisionId,
        at: new Date(this.times[index] ?? 0).toISOString(),
        requester: decision.requester.id,
        tool: decision.tool.name,
        allow: decision.allow,
        reason: decision.reason,
        source: decision.source,
      });
    }
    return out;
  }
}

export class RecentDecisions {
  private readonly rings = new Map<string, Ring>();

  constructor(private readonly capacity = RECENT_DECISIONS_PER_PROJECT) {}

  /** Records a decision about a project the service knows (callers must not pass arbitrary ids). */
  record(project: string, decision: Decision): void {
    let ring = this.rings.get(project);
    if (!ring) {
      ring = new Ring(this.capacity);
      this.rings.set(project, ring);
    }
    ring.push(decision, Date.now());
  }

  query(project: string, allow: boolean | undefined, limit: number): RecentDecision[] {
    return this.rings.get(project)?.query(allow, limit) ?? [];
  }

  dropProject(project: string): void {
    this.rings.delete(project);
  }
}
