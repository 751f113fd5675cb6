/**
 * Decision bodies kept per compiled policy, for the calls whose answer depends on nothing else (the
 * decision says so itself: `Verdict.reusable`, set by the rule that decided):
 * a decision allocates a dozen objects and strings, and a memoized one none; without the memo the
 * service / bare throughput ratio fell from 0.954× to 0.840× (bench/README.md#decision-memo). A
 * reload compiles a new policy object, so its bodies are never reused.
 */
import type { CompiledPolicy } from '../domain/compile.js';
import type { DecisionBody, Verdict } from '../domain/decide.js';

/** Bodies kept per compiled policy: a few agents × the catalog, with room for more. */
const MAX_BODIES_PER_POLICY = 4096;

interface PolicyBodies {
  size: number;
  readonly byRequester: Map<string, Map<string, DecisionBody>>;
}

export class DecisionMemo {
  private readonly bodies = new WeakMap<CompiledPolicy, PolicyBodies>();

  get(policy: CompiledPolicy, project: string, requester: string, tool: string): DecisionBody | undefined {
    const body = this.bodies.get(policy)?.byRequester.get(requester)?.get(tool);
    // A body names its project: a policy object shared by two projects must not answer for the other.
    return body?.project === project ? body : undefined;
  }

  /** Keeps the body when the decision says it may be reused and the policy's share is not full. */
  offer(policy: CompiledPolicy, requester: string, tool: string, { body, reusable }: Verdict): void {
    if (!reusable) return;
    let kept = this.bodies.get(policy);
    if (kept === undefined) this.bodies.set(policy, (kept = { size: 0, byRequester: new Map<string, Map<string, DecisionBody>>() }));
    if (kept.size >= MAX_BODIES_PER_POLICY) return;
    let byTool = kept.byRequester.get(requester);
    if (byTool === undefined) kept.byRequester.set(requester, (byTool = new Map<string, DecisionBody>()));
    if (!byTool.has(tool)) kept.size++;
    byTool.set(tool, body);
  }
}
