/**
 * The `once` answers waiting for their call (docs/api.md#approvals-and-temporary-grants): one armed allowance per project,
 * requester and tool, bound to the ticket of the request, used by exactly one call. Saved through
 * `persist` so that a restart neither loses one nor lets one allow twice.
 */
import type { Logger } from 'pino';
import { MAX_GRANT_TTL_SECONDS } from '../../schemas/approvals.js';
import { isToolName } from '../../schemas/catalog.js';
import { isQualifiedToolName } from '../../schemas/servers.js';
import { PROJECT_ID_REGEX } from '../../schemas/policy.js';
import { isAgentRequester } from '../../schemas/requester.js';
import { leftByBoot, restoredExpiry, wallOffsetOf, type RestartBounds, type ServiceClock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { Projects } from '../projects/projects.js';
import { parseIssueRef } from './issue-ref.js';
import { PairMap } from './pair-map.js';
import type { PersistedOnce } from './state-file.js';

/** How long an unused `once` answer stays usable when no other lifetime is given. */
const DEFAULT_ONCE_TTL_SECONDS = 86_400;
/** Armed allowances per project; each one follows a human's answer, so this is only a bound. */
const MAX_ONCES_PER_PROJECT = 1_000;

interface ArmedOnce {
  readonly approvalId: string;
  /** The ticket key of the request, or `undefined` when its call named no ticket. */
  readonly issueKey: string | undefined;
  /** Monotonic times (clock.ts). */
  readonly armedAt: number;
  readonly expiresAt: number;
  /** The project folder it was armed for ('' when unknown: it then matches no folder). */
  readonly folder: string;
}

export interface OnceAllowancesOptions {
  readonly ttlSeconds?: number | undefined;
  /** Saves the durable state (it reads {@link OnceAllowances.persisted}); throws when it cannot. */
  readonly persist?: (() => void) | undefined;
  /** Where a failed save that no caller is waiting for is logged. */
  readonly logger?: Logger | undefined;
  /** Turns the monotonic `now` of every call into wall times for the state file; without it they are the same. */
  readonly clock?: ServiceClock;
  /** The identity of a project's folder now, stamped on every allowance armed for it. */
  readonly projects?: Pick<Projects, 'folderOf'> | undefined;
}

export class OnceAllowances {
  private readonly byProject = new Map<string, PairMap<ArmedOnce>>();
  private readonly ttlMs: number;

  constructor(private readonly options: OnceAllowancesOptions = {}) {
    this.ttlMs = (options.ttlSeconds ?? DEFAULT_ONCE_TTL_SECONDS) * 1000;
  }

  /** Arms the allowance once it is saved (replacing an unused one for the same pair); throws an {@link ApiError} otherwise. */
  arm(project: string, approvalId: string, requester: string, tool: string, issueKey: string | undefined, now: number): void {
    let armed = this.byProject.get(project);
    if (armed === undefined) {
      armed = new PairMap();
      this.byProject.set(project, armed);
    }
    this.sweepProject(armed, now);
    const previous = armed.get(requester, tool);
    if (previous === undefined && armed.size >= MAX_ONCES_PER_PROJECT) {
      throw new ApiError('limit_exceeded', `Project ${project} already has ${MAX_ONCES_PER_PROJECT} unused "once" approvals.`);
    }
    armed.set(requester, tool, {
      approvalId,
      issueKey,
      armedAt: now,
      expiresAt: now + this.ttlMs,
      folder: this.options.projects?.folderOf(project) ?? '',
    });
    try {
      this.options.persist?.();
    } catch (error) {
      if (previous === undefined) armed.delete(requester, tool);
      else armed.set(requester, tool, previous);
      throw new ApiError('write_failed', `The approval could not be saved (${(error as Error).message}); nothing was allowed.`);
    }
  }

  /**
   * True for exactly one call: the allowance is removed, and saved as removed, before this returns
   * true. When that save fails the call is refused and the allowance stays for the next one.
   */
  consume(project: string, requester: string, tool: string, issueRef: string | undefined, now: number): boolean {
    const armed = this.byProject.get(project);
    const once = armed?.get(requester, tool);
    if (armed === undefined || once === undefined || once.expiresAt <= now) return false;
    if (parseIssueRef(issueRef)?.key !== once.issueKey) return false;
    armed.delete(requester, tool);
    try {
      this.options.persist?.();
    } catch (error) {
      armed.set(requester, tool, once);
      this.failedSave(error);
      return false;
    }
    return true;
  }

  /** Drops the expired allowances (an expired one is already never used; the file forgets it at the next save). */
  sweep(now: number): void {
    for (const [project, armed] of this.byProject) {
      this.sweepProject(armed, now);
      if (armed.size === 0) this.byProject.delete(project);
    }
  }

  /** Drops the armed allowances of a project for which `keep` is false (their tool is no longer on ask), saving if any was. */
  retain(project: string, keep: (requester: string, tool: string) => boolean): void {
    const armed = this.byProject.get(project);
    if (armed === undefined) return;
    let dropped = false;
    for (const [requester, tool] of armed.entries()) {
      if (keep(requester, tool)) continue;
      armed.delete(requester, tool);
      dropped = true;
    }
    if (dropped) this.saveAfterDrop();
  }

  /** Drops the allowances for which `drop(project, folder)` is true (their folder is gone or another), saving if any were. */
  dropWhere(drop: (project: string, folder: string) => boolean): void {
    let dropped = false;
    for (const [project, armed] of this.byProject) {
      for (const [requester, tool, once] of armed.entries()) {
        if (!drop(project, once.folder)) continue;
        armed.delete(requester, tool);
        dropped = true;
      }
    }
    if (dropped) this.saveAfterDrop();
  }

  dropProject(project: string): void {
    const armed = this.byProject.get(project);
    if (armed === undefined) return;
    this.byProject.delete(project);
    if (armed.size > 0) this.saveAfterDrop();
  }

  /** Saves after allowances were dropped; a failed save is logged, never undone in memory. */
  private saveAfterDrop(): void {
    try {
      this.options.persist?.();
    } catch (error) {
      // Dropped in memory whatever the file says; a restart before the next save would arm it
      // again, which the next policy or folder check drops again.
      this.failedSave(error);
    }
  }

  private failedSave(error: unknown): void {
    this.options.logger?.error({ err: error }, 'approvals state not saved');
  }

  /** The live allowances of every project as the state file keeps them: absolute times, as the wall clock reads them now. */
  persisted(now: number, bootExpiry?: (expiresAt: number) => number): PersistedOnce[] {
    const wallOffset = wallOffsetOf(this.options.clock);
    const entries: PersistedOnce[] = [];
    for (const [project, armed] of this.byProject) {
      for (const [requester, tool, once] of armed.entries()) {
        if (once.expiresAt <= now) continue;
        const entry: PersistedOnce = {
          project,
          approvalId: once.approvalId,
          requester,
          tool,
          armedAt: new Date(Math.round(once.armedAt + wallOffset)).toISOString(),
          expiresAt: new Date(Math.round(once.expiresAt + wallOffset)).toISOString(),
          folder: once.folder,
        };
        if (once.issueKey !== undefined) entry.issueRef = once.issueKey;
        if (bootExpiry !== undefined) entry.expiresAtBootMs = bootExpiry(once.expiresAt);
        entries.push(entry);
      }
    }
    return entries;
  }

  /** Takes back the allowances of a state file that {@link arm} could have made; returns what was dropped. */
  restore(entries: readonly PersistedOnce[], now: number, bounds?: RestartBounds): string[] {
    const warnings: string[] = [];
    const wallOffset = wallOffsetOf(this.options.clock);
    const wallNow = now + wallOffset;
    let dropped = 0;
    for (const entry of entries) {
      const armedAt = Date.parse(entry.armedAt);
      const expiresAt = Date.parse(entry.expiresAt);
      const valid =
        PROJECT_ID_REGEX.test(entry.project) &&
        isAgentRequester(entry.requester) &&
        (isToolName(entry.tool) || isQualifiedToolName(entry.tool)) &&
        entry.approvalId.length <= 64 &&
        (entry.issueRef === undefined || entry.issueRef.length <= 80) &&
        Number.isFinite(armedAt) &&
        Number.isFinite(expiresAt) &&
        expiresAt - wallNow <= MAX_GRANT_TTL_SECONDS * 1000;
      if (!valid) {
        dropped += 1;
        continue;
      }
      const left = bounds === undefined ? Number.POSITIVE_INFINITY : leftByBoot(bounds, expiresAt, entry.expiresAtBootMs);
      const endsAt = restoredExpiry(expiresAt, Math.min(expiresAt - armedAt, left), now, wallNow);
      if (endsAt === undefined) continue;
      let armed = this.byProject.get(entry.project);
      if (armed === undefined) {
        armed = new PairMap();
        this.byProject.set(entry.project, armed);
      }
      armed.set(entry.requester, entry.tool, {
        approvalId: entry.approvalId,
        issueKey: entry.issueRef,
        armedAt: armedAt - wallOffset,
        expiresAt: endsAt,
        folder: entry.folder ?? '',
      });
    }
    if (dropped > 0) warnings.push(`${dropped} saved "once" approvals were dropped: invalid project, requester, tool, ticket or times.`);
    return warnings;
  }

  private sweepProject(armed: PairMap<ArmedOnce>, now: number): void {
    for (const [requester, tool, once] of armed.entries()) if (once.expiresAt <= now) armed.delete(requester, tool);
  }
}
