/**
 * Decision bodies kept per compiled policy, for the calls whose answer depends on nothing else:
 * a decision allocates a dozen objects and strings, and a memoized one none; without the memo the
 * service / bare throughput ratio fell from 0.954× to 0.840× (bench/README.md, "Decision memo"). A reload compiles a new policy object, so its bodies are never reused.
 */
import type { CompiledPolicy } from '../domain/compile.js';
import type { DecisionBody } from '../domain/decide.js';

/** Bodies kept per compiled policy: a few agents × the catalog, with room for more. */
const MAX_BODIES_PER_POLICY = 4096;

/** Denials no grant, approval or ephemeral policy can turn into anything else. */
const FINAL_DENIALS = new Set<DecisionBody['reason']>(['unknown_tool', 'invalid_requester', 'policy_invalid']);

/**
 * True when the body is a function of the compiled policy, the requester string and the tool name
 * alone: never a ticket assistant's (ephemeral policies come and go), never a decision that a
 * temporary grant or an approval made or could change.
 */
export function dependsOnPolicyAlone(body: DecisionBody): boolean {
  if (body.requester.kind === 'ticket-assistant') return false;
  if (!body.allow) return FINAL_DENIALS.has(body.reason);
  return body.source === 'agent-override' || body.source === 'project-default' || body.source === 'builtin-read-only';
}

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

  /** Keeps `body` when it {@link dependsOnPolicyAlone} and the policy's share is not full. */
  offer(policy: CompiledPolicy, requester: string, tool: string, body: DecisionBody): void {
    if (!dependsOnPolicyAlone(body)) return;
    let kept = this.bodies.get(policy);
    if (kept === undefined) this.bodies.set(policy, (kept = { size: 0, byRequester: new Map<string, Map<string, DecisionBody>>() }));
    if (kept.size >= MAX_BODIES_PER_POLICY) return;
    let byTool = kept.byRequester.get(requester);
    if (byTool === undefined) kept.byRequester.set(requester, (byTool = new Map<string, DecisionBody>()));
    if (!byTool.has(tool)) kept.size++;
    byTool.set(tool, body);
  }
}
