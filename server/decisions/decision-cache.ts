/**
 * Finished decisions of the hot path, kept per project for the policy they were computed from.
 *
 * For an agent or an anonymous requester, a decision is a pure function of (the project's compiled
 * policy, requester, tool): `arguments` only matter to ephemeral ticket-assistant grants, which are
 * never cached (they expire and change without the policy changing). So the answer of `/decide` can
 * be computed and serialized once, by the schema's own serializer, and only the decision id stamped
 * per call. Each project's entries are tied to the policy object they came from: a reload or a write
 * installs a new policy object, a lookup against it never sees the older entries, and the next
 * answer stored for the project replaces them all, so a cached answer can never outlive the policy
 * that produced it.
 */
import type { CompiledPolicy } from '../domain/compile.js';
import type { DecisionBody } from '../domain/decide.js';

/** A decision body shared by every call that asks the same question of the same policy. */
export interface CachedDecision {
  /** Deeply frozen: shared between calls, never to be modified. */
  readonly body: DecisionBody;
  /**
   * The serialized decision up to the value of `decisionId` (append the id and `"}`). `undefined`
   * until `/decide` first answers it (`/decide/batch` never needs it: its answers are serialized
   * together); `null` when it is not to be used (a decision that is not cached, or a serializer
   * that does not end with the id): then every answer is serialized in full.
   */
  jsonPrefix: string | null | undefined;
}

/**
 * Estimated bytes kept across all projects before every entry is dropped and the cache refills:
 * bounds the memory whatever the number of projects and the length of (attacker-chosen) requester
 * and tool names, while the questions a deployment really asks (agents × tools in use: about 1 KB
 * each, so some 4,000) stay cached.
 */
export const MAX_CACHED_BYTES = 4 * 1024 * 1024;

/** A conservative estimate of what one entry holds: objects and the message (2 bytes per character); its prefix is {@link DecisionCache.charge}d when made. */
const entryBytes = (decision: CachedDecision): number => 512 + 2 * decision.body.message.length;

/**
 * What a project's entries are tied to in place of a policy while the project is unknown: its
 * answers (`unknown_project`) depend on nothing else than the question, and the first policy the
 * project gets is another key, so they are never served once it exists.
 */
export const UNKNOWN_PROJECT: unique symbol = Symbol('unknown project');

/** The policy object the entries were computed from, or {@link UNKNOWN_PROJECT}. */
export type PolicyKey = CompiledPolicy | typeof UNKNOWN_PROJECT;

interface ProjectEntries {
  readonly policy: PolicyKey;
  /** requester → tool → decision (nested maps: no separator that a name could contain). */
  readonly byRequester: Map<string, Map<string, CachedDecision>>;
}

const DECISION_ID_TAIL = '"decisionId":""}';

/**
 * The serialized-prefix form of a decision body, or undefined when the serializer does not end
 * with the id (then the caller serializes every call in full: slower, never wrong).
 */
export function jsonPrefixOf(
  body: DecisionBody,
  serialize: (decision: DecisionBody & { decisionId: string }) => string,
): string | undefined {
  const json = serialize({ ...body, decisionId: '' });
  return json.endsWith(DECISION_ID_TAIL) ? json.slice(0, -2) : undefined;
}

export class DecisionCache {
  private readonly projects = new Map<string, ProjectEntries>();
  /** Estimated bytes over every project (an upper bound: entries of replaced policies count until the next clear). */
  private bytes = 0;

  /** The decision cached for this question under exactly this policy object, if any. */
  get(project: string, policy: PolicyKey, requester: string, tool: string): CachedDecision | undefined {
    const entries = this.projects.get(project);
    if (entries === undefined || entries.policy !== policy) return undefined;
    return entries.byRequester.get(requester)?.get(tool);
  }

  /** Keeps a decision computed from `policy`; entries of any other policy object of the project go. */
  set(project: string, policy: PolicyKey, requester: string, tool: string, decision: CachedDecision): void {
    const size = entryBytes(decision);
    this.makeRoom(size);
    let entries = this.projects.get(project);
    if (entries === undefined || entries.policy !== policy) {
      entries = { policy, byRequester: new Map() };
      this.projects.set(project, entries);
    }
    let byTool = entries.byRequester.get(requester);
    if (byTool === undefined) {
      byTool = new Map();
      entries.byRequester.set(requester, byTool);
    }
    this.bytes += size;
    byTool.set(tool, decision);
  }

  /** Counts bytes an entry gained after it was stored (its serialized prefix); over the bound, every entry goes. */
  charge(bytes: number): void {
    this.makeRoom(bytes);
    this.bytes += bytes;
  }

  /** Drops every entry when `bytes` more would go over the bound (the cache refills from the next questions). */
  private makeRoom(bytes: number): void {
    if (this.bytes + bytes > MAX_CACHED_BYTES) {
      this.projects.clear();
      this.bytes = 0;
    }
  }

  /** Forgets a project that disappeared. */
  dropProject(project: string): void {
    this.projects.delete(project);
  }

  /** Estimated bytes held over every project, as counted for the bound (for tests). */
  get estimatedBytes(): number {
    return this.bytes;
  }
}

/** Freezes a decision body and the objects it holds, so a shared body cannot be changed by a caller. */
export function freezeDecision(body: DecisionBody): DecisionBody {
  Object.freeze(body.requester);
  Object.freeze(body.tool);
  return Object.freeze(body);
}
