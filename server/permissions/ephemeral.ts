/**
 * Ephemeral ticket-assistant policies (docs/api.md#ephemeral-ticket-assistant-policies): in memory
 * only, per project, with a TTL. Expired entries are never used (checked on read) and are swept
 * periodically, so memory stays bounded. Each belongs to the project folder it was registered for
 * (docs/design.md#approvals-grants-and-time, "A grant belongs to its folder"): a project whose
 * folder disappears for a while and comes back keeps its policies, a folder deleted and made again
 * under the same id inherits none.
 */
import { compareIds } from '../../schemas/ids.js';
import type { EphemeralPolicy } from '../../schemas/index.js';
import { SYSTEM_CLOCK, type ServiceClock } from '../clock.js';
import { ephemeralGrant, type EphemeralGrant, type EphemeralLookup } from '../domain/decide.js';
import { IDEA_CATALOG, type ProjectCatalog } from '../domain/project-catalog.js';
import { normalizeIssueRef } from '../../schemas/requester.js';
import { ApiError } from '../errors.js';
import type { Projects } from '../projects/projects.js';

/** At most this many live ephemeral policies per project. */
const MAX_EPHEMERAL_PER_PROJECT = 1000;

interface Entry extends EphemeralGrant {
  readonly requester: string;
  /** Monotonic (clock.ts): a wall clock set back must not lengthen a TTL. */
  readonly expiresAt: number;
  /** Wall minus monotonic time when it was registered: its expiry is shown as it was given. */
  readonly wallOffset: number;
  /** The identity of the project folder it was registered for (undefined: there was none). */
  readonly folder: string | undefined;
}

export interface EphemeralPoliciesOptions {
  /** Times every expiry on its monotonic clock (default: the system's). */
  readonly clock?: ServiceClock | undefined;
  /** The identity of each project's folder now (server/projects/folder-identity.ts); without it, folders are not compared. */
  readonly projects?: Pick<Projects, 'folderOf'> | undefined;
}

export class EphemeralPolicies {
  private readonly byProject = new Map<string, Map<string, Entry>>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly clock: ServiceClock;

  constructor(private readonly options: EphemeralPoliciesOptions = {}) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
    this.sweeper = setInterval(() => {
      this.sweep();
    }, 30_000);
    this.sweeper.unref();
  }

  /** {@link grant} as the decisions read it, bound once rather than wrapped in a closure per call. */
  readonly lookup: EphemeralLookup = (project, requester) => this.grant(project, requester);

  /** The live grant of `requester` in `project`, if any. */
  grant(project: string, requester: string): EphemeralGrant | undefined {
    const entry = this.byProject.get(project)?.get(requester);
    if (!entry) return undefined;
    const folder = this.folderNow(project);
    if (entry.expiresAt <= this.now() || this.otherFolder(entry, folder)) {
      this.byProject.get(project)?.delete(requester);
      return undefined;
    }
    // Its folder is away for now (renamed, being checked out): unused, and kept for when it comes back.
    if (folder !== entry.folder) return undefined;
    return entry;
  }

  put(
    project: string,
    requester: string,
    tools: readonly string[],
    boundIssue: string | undefined,
    ttlSeconds: number,
    catalog: ProjectCatalog = IDEA_CATALOG,
  ): EphemeralPolicy {
    let entries = this.byProject.get(project);
    if (!entries) {
      entries = new Map();
      this.byProject.set(project, entries);
    }
    if (!entries.has(requester)) {
      this.sweepProject(entries, project);
      if (entries.size >= MAX_EPHEMERAL_PER_PROJECT) {
        throw new ApiError('limit_exceeded', `Project ${project} already has ${MAX_EPHEMERAL_PER_PROJECT} ephemeral policies.`);
      }
    }
    const entry: Entry = {
      requester,
      ...ephemeralGrant(tools, boundIssue === undefined ? null : normalizeIssueRef(boundIssue), catalog),
      expiresAt: this.now() + ttlSeconds * 1000,
      wallOffset: this.clock.wall() - this.now(),
      folder: this.folderNow(project),
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
    this.sweepProject(entries, project);
    const folder = this.folderNow(project);
    return [...entries.values()]
      .filter((entry) => entry.folder === folder)
      .map((entry) => toWire(project, entry))
      .sort((a, b) => compareIds(a.requester, b.requester));
  }

  /** Forgets the policies registered for another folder than the project's now (it was replaced). */
  folderReplaced(project: string): void {
    const entries = this.byProject.get(project);
    if (entries !== undefined) this.sweepProject(entries, project);
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private sweep(): void {
    for (const [project, entries] of this.byProject) {
      this.sweepProject(entries, project);
      if (entries.size === 0) this.byProject.delete(project);
    }
  }

  /** Drops the expired entries and those of a folder that is no longer the project's. */
  private sweepProject(entries: Map<string, Entry>, project: string): void {
    const now = this.now();
    const folder = this.folderNow(project);
    for (const [requester, entry] of entries) if (entry.expiresAt <= now || this.otherFolder(entry, folder)) entries.delete(requester);
  }

  private now(): number {
    return this.clock.monotonic();
  }

  private folderNow(project: string): string | undefined {
    return this.options.projects?.folderOf(project);
  }

  /** True when the project has a folder now and it is not the one the entry was registered for. */
  private otherFolder(entry: Entry, folder: string | undefined): boolean {
    return this.options.projects !== undefined && folder !== undefined && folder !== entry.folder;
  }
}

function toWire(project: string, entry: Entry): EphemeralPolicy {
  return {
    project,
    requester: entry.requester,
    allowedTools: [...entry.allowlist.tools],
    boundIssue: entry.boundIssue === null ? null : `#${entry.boundIssue}`,
    expiresAt: new Date(Math.round(entry.expiresAt + entry.wallOffset)).toISOString(),
  };
}
