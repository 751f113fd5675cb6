/**
 * The counts behind usage limits (docs/api.md#usage-limits, docs/design.md#usage-limits): per
 * project folder × requester × tool, the times of the calls that were allowed, on the monotonic
 * clock of approvals and grants (server/clock.ts), so a wall clock stepped back never
 * empties a window early. A decision reads and counts synchronously: two calls never see the same
 * room in a window. Bounded: a pair keeps at most its limit's `max` calls, and the service at most
 * {@link MAX_KEPT_CALLS} calls and {@link MAX_PAIRS_PER_PROJECT} pairs per project; past that a new
 * pair is refused (fail closed), never counted for free.
 */
import { SYSTEM_CLOCK, type ServiceClock } from '../clock.js';
import type { LimitsPort, ToolLimit } from '../domain/limits.js';
import { CallTimes } from '../domain/call-times.js';
import type { Projects } from '../projects/projects.js';

/** 16 million kept calls (128 MB of times): 1,000 projects × 50 agents × 5 tools at 64 calls each. */
export const MAX_KEPT_CALLS = 16_000_000;
/** Requester × tool pairs counted in one project: 200 agents × the 25 tools × 2, far above a real team. */
export const MAX_PAIRS_PER_PROJECT = 10_000;

/** The calls of one requester, by tool. */
type ByTool = Map<string, CallTimes>;

export interface ProjectCounts {
  /** The folder the counts were made in (folder-identity.ts); '' when unknown. */
  folder: string;
  readonly byRequester: Map<string, ByTool>;
  pairs: number;
}

export interface UsageCountsOptions {
  readonly clock?: ServiceClock | undefined;
  /** The identity of each project's folder now: counts made for another folder are not inherited. */
  readonly projects?: Pick<Projects, 'folderOf'> | undefined;
}

/** Who is told that a project's counts changed (the state file, which saves them later). */
export interface UsageCountsListener {
  changed(project: string): void;
}

/** What a decision of a limited tool is told when the counts cannot take one more pair: refused, retry in a minute. */
const FULL_RETRY_SECONDS = 60;

export class UsageCounts implements LimitsPort {
  private readonly projects = new Map<string, ProjectCounts>();
  private readonly clock: ServiceClock;
  /** Calls the rings can hold, summed: what {@link MAX_KEPT_CALLS} bounds. */
  private keptCapacity = 0;
  private listener: UsageCountsListener | undefined;

  constructor(private readonly options: UsageCountsOptions = {}) {
    this.clock = options.clock ?? SYSTEM_CLOCK;
  }

  /** Tells `listener` of every change of the counts from now on (one listener: the state file). */
  listen(listener: UsageCountsListener): void {
    this.listener = listener;
  }

  /** Bytes the rings hold (8 a call they can keep). */
  get bytes(): number {
    return this.keptCapacity * 8;
  }

  retryAfter(project: string, requester: string, tool: string, limit: ToolLimit): number | undefined {
    const counts = this.projects.get(project);
    const calls = counts?.byRequester.get(requester)?.get(tool);
    if (calls === undefined) {
      // A pair not counted yet must find room for its first call.
      return counts !== undefined && counts.pairs >= MAX_PAIRS_PER_PROJECT && !this.sweep(counts)
        ? FULL_RETRY_SECONDS
        : this.keptCapacity >= MAX_KEPT_CALLS && !this.sweepAll()
          ? FULL_RETRY_SECONDS
          : undefined;
    }
    return calls.retryAfterSeconds(this.clock.monotonic(), limit);
  }

  count(project: string, requester: string, tool: string, limit: ToolLimit): void {
    const counts = this.projectCounts(project);
    let byTool = counts.byRequester.get(requester);
    if (byTool === undefined) counts.byRequester.set(requester, (byTool = new Map<string, CallTimes>()));
    let calls = byTool.get(tool);
    if (calls === undefined) {
      byTool.set(tool, (calls = new CallTimes(limit.windowMs)));
      counts.pairs++;
      this.keptCapacity += calls.bytes / 8;
    }
    const before = calls.bytes;
    calls.windowMs = limit.windowMs;
    calls.push(this.clock.monotonic(), limit.max);
    this.keptCapacity += (calls.bytes - before) / 8;
    this.listener?.changed(project);
  }

  /** The calls left in the current window and, with none, the seconds until one is. */
  remaining(project: string, requester: string, tool: string, limit: ToolLimit): { remaining: number; retryAfterSeconds?: number } {
    const calls = this.projects.get(project)?.byRequester.get(requester)?.get(tool);
    if (calls === undefined) return { remaining: limit.max };
    const now = this.clock.monotonic();
    const remaining = Math.max(0, limit.max - calls.inWindow(now, limit.windowMs));
    if (remaining > 0) return { remaining };
    return { remaining, retryAfterSeconds: Math.max(1, Math.ceil(calls.waitMs(now, limit.max, limit.windowMs) / 1000)) };
  }

  /** The counts of a project, as the state file saves them. */
  countsOf(project: string): ProjectCounts | undefined {
    return this.projects.get(project);
  }

  /** The projects that have counts. */
  projectIds(): string[] {
    return [...this.projects.keys()];
  }

  /** Takes back the counts of a project from the state file: `times` are monotonic, oldest first. */
  restore(project: string, folder: string, requester: string, tool: string, windowMs: number, times: readonly number[]): void {
    const counts = this.projectCounts(project, folder);
    let byTool = counts.byRequester.get(requester);
    if (byTool === undefined) counts.byRequester.set(requester, (byTool = new Map<string, CallTimes>()));
    if (byTool.has(tool) || counts.pairs >= MAX_PAIRS_PER_PROJECT || this.keptCapacity + times.length > MAX_KEPT_CALLS) return;
    const calls = new CallTimes(windowMs, Math.max(1, times.length));
    for (const at of times) calls.push(at, times.length);
    byTool.set(tool, calls);
    counts.pairs++;
    this.keptCapacity += calls.bytes / 8;
  }

  /** Forgets a project's counts (it went away, or its folder was replaced). */
  dropProject(project: string): void {
    const counts = this.projects.get(project);
    if (counts === undefined) return;
    for (const byTool of counts.byRequester.values()) for (const calls of byTool.values()) this.keptCapacity -= calls.bytes / 8;
    this.projects.delete(project);
    this.listener?.changed(project);
  }

  /** Once a project is loaded: counts made for another folder than the one it is now are not inherited. */
  adoptFolder(project: string, folder: string | undefined): void {
    const counts = this.projects.get(project);
    if (counts !== undefined && counts.folder !== (folder ?? '')) this.dropProject(project);
  }

  /**
   * Told of every project change (server/projects/project-changes.ts): a project loaded adopts its
   * folder, a removed one is forgotten.
   */
  projectChanged(project: string, change: string): void {
    if (change === 'added') this.adoptFolder(project, this.options.projects?.folderOf(project));
    if (change === 'removed') this.dropProject(project);
  }

  /** A folder replaced by another under the same id: the new one inherits nothing. */
  folderReplaced(project: string): void {
    this.dropProject(project);
  }

  /** Forgets the projects `keep` refuses (gone while the service was stopped). */
  retainProjects(keep: (project: string) => boolean): void {
    for (const project of this.projectIds()) if (!keep(project)) this.dropProject(project);
  }

  /** Drops the calls that left their window, and the pairs left empty; true when one pair went. */
  private sweep(counts: ProjectCounts): boolean {
    const now = this.clock.monotonic();
    const pairs = counts.pairs;
    for (const [requester, byTool] of counts.byRequester) {
      for (const [tool, calls] of byTool) {
        if (!calls.prune(now, calls.windowMs)) continue;
        byTool.delete(tool);
        counts.pairs--;
        this.keptCapacity -= calls.bytes / 8;
      }
      if (byTool.size === 0) counts.byRequester.delete(requester);
    }
    return counts.pairs < pairs;
  }

  private sweepAll(): boolean {
    let freed = false;
    for (const counts of this.projects.values()) freed = this.sweep(counts) || freed;
    return freed && this.keptCapacity < MAX_KEPT_CALLS;
  }

  private projectCounts(project: string, folder?: string): ProjectCounts {
    let counts = this.projects.get(project);
    if (counts === undefined) {
      counts = { folder: folder ?? this.options.projects?.folderOf(project) ?? '', byRequester: new Map(), pairs: 0 };
      this.projects.set(project, counts);
    }
    return counts;
  }
}
