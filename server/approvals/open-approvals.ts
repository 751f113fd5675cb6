/**
 * Builds the approvals of the service (docs/api.md §11): requests, `once` answers and temporary
 * grants, the last two loaded from and saved to the state file of the state folder.
 */
import { ApprovalRequests, type ApprovalChange } from './approval-requests.js';
import { SYSTEM_CLOCK, type ServiceClock } from './clock.js';
import { OnceAllowances } from './once-allowances.js';
import { ApprovalsStateFile } from './state-file.js';
import { TemporaryGrants } from './temporary-grants.js';

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
  readonly onChange?: (change: ApprovalChange) => void;
  /** Told about a failed save that no caller is waiting for, to log it. */
  readonly onPersistFailure?: (error: Error) => void;
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
  const loaded = file?.load() ?? { grants: [], onces: [] };
  const saving = {
    ...(file === undefined
      ? {}
      : {
          persist: () => {
            const now = clock.monotonic();
            file.write({ grants: grants.persisted(now), onces: onces.persisted(now) });
          },
        }),
    ...(options.onPersistFailure === undefined ? {} : { onPersistFailure: options.onPersistFailure }),
    clock,
    ...(options.folderOf === undefined ? {} : { folderOf: options.folderOf }),
  };
  const grants = new TemporaryGrants(saving);
  const onces = new OnceAllowances({ ...saving, ...(options.onceTtlSeconds === undefined ? {} : { ttlSeconds: options.onceTtlSeconds }) });
  const now = clock.monotonic();
  const warnings = [
    ...(loaded.warning === undefined ? [] : [loaded.warning]),
    ...grants.restore(loaded.grants, now),
    ...onces.restore(loaded.onces, now),
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
    },
  };
}
