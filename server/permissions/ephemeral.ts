/**
 * Ephemeral ticket-assistant policies (docs/api.md §6): in memory only, per project, with a TTL.
 * Expired entries are never used (checked on read) and are swept periodically, so memory stays
 * bounded; a project that disappears for a while keeps its policies until they expire.
 */
import { compareIds } from '../../schemas/ids.js';
import type { EphemeralPolicy } from '../../schemas/index.js';
import { ephemeralGrant, type EphemeralGrant } from '../domain/decide.js';
import { normalizeIssueRef } from '../../schemas/requester.js';
import { ApiError } from '../errors.js';

/** At most this many live ephemeral policies per project. */
const MAX_EPHEMERAL_PER_PROJECT = 1000;

interface Entry extends EphemeralGrant {
  readonly requester: string;
  readonly expiresAt: number;
}

export class EphemeralPolicies {
  private readonly byProject = new Map<string, Map<string, Entry>>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => {
      this.sweep();
    }, 30_000);
    this.sweeper.unref();
  }

  /** The live grant of `requester` in `project`, if any. */
  grant(project: string, requester: string): EphemeralGrant | undefined {
    const entry = this.byProject.get(project)?.get(requester);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.byProject.get(project)?.delete(requester);
      return undefined;
    }
    return entry;
  }

  put(project: string, requester: string, tools: readonly string[], boundIssue: string | undefined, ttlSeconds: number): EphemeralPolicy {
    let entries = this.byProject.get(project);
    if (!entries) {
      entries = new Map();
      this.byProject.set(project, entries);
    }
    if (!entries.has(requester)) {
      this.sweepProject(entries);
      if (entries.size >= MAX_EPHEMERAL_PER_PROJECT) {
        throw new ApiError('limit_exceeded', `Project ${project} already has ${MAX_EPHEMERAL_PER_PROJECT} ephemeral policies.`);
      }
    }
    const entry: Entry = {
      requester,
      ...ephemeralGrant(tools, boundIssue === undefined ? null : normalizeIssueRef(boundIssue)),
      expiresAt: this.now() + ttlSeconds * 1000,
    };
    entries.set(requester, entry);
    return toWire(project, entry);
  }

  /** Removes the policy; true when there was a live one. */
  delete(project: string, requester: string): boolean {
    const live = this.grant(project, requester) !== undefined;
    this.byProject.get(project)?.delete(requester);
    return live;
  }

  list(project: string): EphemeralPolicy[] {
    const entries = this.byProject.get(project);
    if (!entries) return [];
    this.sweepProject(entries);
    return [...entries.values()].map((entry) => toWire(project, entry)).sort((a, b) => compareIds(a.requester, b.requester));
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    for (const [project, entries] of this.byProject) {
      this.sweepProject(entries);
      if (entries.size === 0) this.byProject.delete(project);
    }
  }

  private sweepProject(entries: Map<string, Entry>): void {
    const now = this.now();
    for (const [requester, entry] of entries) if (entry.expiresAt <= now) entries.delete(requester);
  }
}

function toWire(project: string, entry: Entry): EphemeralPolicy {
  return {
    project,
    requester: entry.requester,
    allowedTools: [...entry.allowlist.tools],
    boundIssue: entry.boundIssue === null ? null : `#${entry.boundIssue}`,
    expiresAt: new Date(entry.expiresAt).toISOString(),
  };
}
