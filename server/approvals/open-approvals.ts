/**
 * Builds the approvals of the service (docs/api.md#approvals-and-temporary-grants): requests, `once` answers and temporary
 * grants, the last two loaded from and saved to the state file of the state folder.
 */
import { ApprovalRequests, type ApprovalChange } from './approval-requests.js';
import { SYSTEM_CLOCK, bootDeadline, bootTimeOf, type RestartBounds, type ServiceClock } from './clock.js';
import { OnceAllowances } from './once-allowances.js';
import { ApprovalsStateFile, type ApprovalsState } from './state-file.js';
import { TemporaryGrants, type TemporaryGrantsOptions } from './temporary-grants.js';

export interface OpenApprovalsOptions {
  /** The state folder (`PDP_STATE_DIR`); without one nothing survives a restart. */
  readonly stateDirectory?: string | undefined;
  /** Lifetime of a pending request (`PDP_APPROVAL_TTL_SECONDS`). */
  readonly approvalTtlSeconds?: number | undefined;
  /** Lifetime of an unused `once` answer. */
  readonly onceTtlSeconds?: number | undefined;
  /** Makes an answer `always` durable (see {@link ApprovalRequests}). */
  readonly makeAlways: (project: string, requester: string, tool: string) => Promise<void>;
  /** Whether `tool` is still on ask for `requester` (see {@link ApprovalRequests}). */
  readonly isOnAsk?: (project: string, requester: string, tool: string) => boolean;
  /** Whether the project declares `requester` (see {@link ApprovalRequests}). */
  readonly isDeclared?: (project: string, requester: string) => boolean;
  /** Runs a task on the project's policy as read from disk now (see {@link ApprovalRequests}). */
  readonly withFreshPolicy?: <T>(project: string, task: () => T) => Promise<T>;
  /** The identity of a project's folder now, stamped on grants and `once` answers (folder-identity.ts). */
  readonly folderOf?: (project: string) => string | undefined;
  /** The conditions a new grant keeps (see {@link TemporaryGrants}). */
  readonly conditionsOf?: TemporaryGrantsOptions['conditionsOf'];
  /** The tools a project knows (see {@link TemporaryGrants}). */
  readonly catalogOf?: TemporaryGrantsOptions['catalogOf'];
  readonly onChange?: (change: ApprovalChange) => void;
  /** Told about a failed save that no caller is waiting for, to log it. */
  readonly onPersistFailure?: (error: Error) => void;
  /** The one clock: monotonic and wall times, and the boot reading across restarts (clock.ts). */
  readonly clock?: ServiceClock | undefined;
}

export interface Approvals {
  readonly requests: ApprovalRequests;
  readonly grants: TemporaryGrants;
  readonly onces: OnceAllowances;
  /** What could not be loaded from the state file, for the caller to log at start. */
  readonly warnings: readonly string[];
  close(): void;
}

export function openApprovals(options: OpenApprovalsOptions): Approvals {
  const clock = options.clock ?? SYSTEM_CLOCK;
  const file = options.stateDirectory === undefined ? undefined : new ApprovalsStateFile(options.stateDirectory);
  const loaded: ApprovalsState & { warning?: string } = file?.load() ?? { grants: [], onces: [] };
  // The latest wall time seen, kept in the file: after a reboot nothing is judged earlier than it.
  let seenWallMs = Math.max(Date.parse(loaded.seenAt ?? '') || 0, clock.wall());
  const persist = (target: ApprovalsStateFile): void => {
    const now = clock.monotonic();
    const boot = bootTimeOf(clock);
    seenWallMs = Math.max(seenWallMs, clock.wall());
    // Each end also on the boot clock, which a wall clock set back while the service is stopped does not move.
    const bootExpiry = boot === undefined ? undefined : (expiresAt: number) => bootDeadline(boot, now, expiresAt);
    target.write({
      bootId: boot?.id,
      seenAt: new Date(seenWallMs).toISOString(),
      grants: grants.persisted(now, bootExpiry),
      onces: onces.persisted(now, bootExpiry),
    });
  };
  const saving = {
    ...(file === undefined
      ? {}
      : {
          persist: () => {
            persist(file);
          },
        }),
    ...(options.onPersistFailure === undefined ? {} : { onPersistFailure: options.onPersistFailure }),
    clock,
    ...(options.folderOf === undefined ? {} : { folderOf: options.folderOf }),
  };
  const grants = new TemporaryGrants({
    ...saving,
    ...(options.conditionsOf === undefined ? {} : { conditionsOf: options.conditionsOf }),
    ...(options.catalogOf === undefined ? {} : { catalogOf: options.catalogOf }),
  });
  const onces = new OnceAllowances({ ...saving, ...(options.onceTtlSeconds === undefined ? {} : { ttlSeconds: options.onceTtlSeconds }) });
  const now = clock.monotonic();
  const bounds: RestartBounds = {
    boot: bootTimeOf(clock),
    savedBootId: loaded.bootId,
    seenWallMs: loaded.seenAt === undefined ? undefined : Date.parse(loaded.seenAt) || undefined,
  };
  const warnings = [
    ...(loaded.warning === undefined ? [] : [loaded.warning]),
    ...grants.restore(loaded.grants, now, bounds),
    ...onces.restore(loaded.onces, now, bounds),
  ];
  const requests = new ApprovalRequests({
    onces,
    grants,
    makeAlways: options.makeAlways,
    ...(options.isOnAsk === undefined ? {} : { isOnAsk: options.isOnAsk }),
    ...(options.isDeclared === undefined ? {} : { isDeclared: options.isDeclared }),
    ...(options.withFreshPolicy === undefined ? {} : { withFreshPolicy: options.withFreshPolicy }),
    clock,
    ...(options.approvalTtlSeconds === undefined ? {} : { ttlSeconds: options.approvalTtlSeconds }),
    ...(options.onChange === undefined ? {} : { onChange: options.onChange }),
  });
  return {
    requests,
    grants,
    onces,
    warnings,
    close: () => {
      requests.close();
      // The wall time of the stop is the latest one seen: what is still live is saved with it.
      const at = clock.monotonic();
      if (file === undefined || (grants.persisted(at).length === 0 && onces.persisted(at).length === 0)) return;
      try {
        persist(file);
      } catch (error) {
        options.onPersistFailure?.(error as Error);
      }
    },
  };
}
