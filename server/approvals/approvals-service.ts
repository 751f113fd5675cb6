/**
 * Approvals and temporary grants as the HTTP routes and the decisions use them
 * (docs/api.md#approvals-and-temporary-grants): it builds the requests, the `once` answers and the
 * grants (the last two loaded from and saved to the state file of the state folder), and adds the
 * project checks, the `always` answer's policy write, the audit log lines of every answer and grant
 * change, and the mapping of the core's errors onto the API's codes.
 */
import type { Logger } from 'pino';
import {
  APPROVER_ANSWERS,
  MAX_APPROVER_GRANT_TTL_SECONDS,
  type Approval,
  type ApprovalAnswer,
  type ApprovalAnswerResponse,
  type ApprovalStatus,
  type Grant,
} from '../../schemas/index.js';
import type { ApprovalsPort } from '../domain/decide.js';
import { ApiError, unknownProject } from '../errors.js';
import type { LiveEvents } from '../events/live-events.js';
import type { PermissionsService } from '../permissions/permissions-service.js';
import type { Projects } from '../projects/projects.js';
import { ApprovalRequests, type AnswerAttribution, type AnswerOutcome, type RequestRecord } from './approval-requests.js';
import { SYSTEM_CLOCK, bootDeadline, bootTimeOf, type ServiceClock } from '../clock.js';
import { OnceAllowances } from './once-allowances.js';
import { ApprovalsStateFile, type LoadedState } from './state-file.js';
import { TemporaryGrants } from './temporary-grants.js';

/** What approvals read of the served projects (the registry implements it). */
export type ApprovalsProjects = Pick<Projects, 'has' | 'folderOf' | 'catalogOf' | 'conditionsOf' | 'isOnAsk' | 'isDeclared' | 'freshly'>;

/** Where an answer `always` is written: the tool joins the agent's `allowedTools` (the permissions service). */
export type AlwaysPort = Pick<PermissionsService, 'allowAlways'>;

export interface ApprovalsServiceOptions {
  readonly projects: ApprovalsProjects;
  readonly always: AlwaysPort;
  /** Told of every new or changed request (the `approval` events of `GET /events`). */
  readonly events?: Pick<LiveEvents, 'approvalChanged'> | undefined;
  /** The audit lines of answers and grant changes, and the saves that failed with no caller to tell. */
  readonly logger: Logger;
  /** The state folder (`PDP_STATE_DIR`); without one nothing survives a restart. */
  readonly stateDirectory?: string | undefined;
  /** Lifetime of a pending request (`PDP_APPROVAL_TTL_SECONDS`). */
  readonly approvalTtlSeconds?: number | undefined;
  /** Lifetime of an unused `once` answer. */
  readonly onceTtlSeconds?: number | undefined;
  /** The one clock of every expiry, and of the state file across restarts (clock.ts). */
  readonly clock?: ServiceClock | undefined;
  /** The only projects the approver token may answer in; undefined: every project. */
  readonly approverProjects?: readonly string[] | undefined;
}

/** The `always` answers of a project being written. */
interface AlwaysWrites {
  count: number;
  /** The requests they claimed, which the policy changes heard meanwhile do not close. */
  readonly claimed: Set<RequestRecord>;
  changed: boolean;
}

/** Who changes grants: only the admin token reaches those routes (docs/api.md#security). */
const WHO = 'admin';

export class ApprovalsService {
  /** What `/decide` consults after an agent's allowlist. */
  readonly port: ApprovalsPort;
  /** The core, which the methods below check, time and log around. */
  readonly requests: ApprovalRequests;
  readonly grants: TemporaryGrants;
  readonly onces: OnceAllowances;
  /** What could not be loaded from the state file, to log at start. */
  readonly warnings: readonly string[];
  private readonly clock: ServiceClock;
  private readonly file: ApprovalsStateFile | undefined;
  /** The latest wall time seen, kept in the file: after a reboot nothing is judged earlier than it. */
  private seenWallMs: number;
  /** Projects with `always` writes under way: how many, the requests they claimed, and whether the policy changed meanwhile. */
  private readonly writing = new Map<string, AlwaysWrites>();
  private closed = false;
  private readonly approverProjects: ReadonlySet<string> | undefined;

  constructor(private readonly options: ApprovalsServiceOptions) {
    const { projects, logger } = options;
    const clock = options.clock ?? SYSTEM_CLOCK;
    this.clock = clock;
    this.approverProjects = options.approverProjects === undefined ? undefined : new Set(options.approverProjects);
    const file = options.stateDirectory === undefined ? undefined : new ApprovalsStateFile(options.stateDirectory);
    this.file = file;
    const loaded: LoadedState = file?.load() ?? { grants: [], onces: [] };
    this.seenWallMs = Math.max(Date.parse(loaded.seenAt ?? '') || 0, clock.wall());
    const persist =
      file === undefined
        ? undefined
        : () => {
            this.save(file);
          };
    this.grants = new TemporaryGrants({ persist, logger, clock, projects });
    this.onces = new OnceAllowances({ persist, logger, clock, projects, ttlSeconds: options.onceTtlSeconds });
    this.warnings = this.restore(loaded);
    this.requests = new ApprovalRequests({
      onces: this.onces,
      grants: this.grants,
      projects,
      events: options.events,
      ttlSeconds: options.approvalTtlSeconds,
      clock,
    });
    const now = (): number => clock.monotonic();
    this.port = {
      // Most denied calls have no grant: the clock is read only when one covers the call.
      granted: (project, requester, tool, args) => this.grants.judge(project, requester, tool, args, now),
      consumeOnce: (project, requester, tool, issueRef) => this.requests.consumeOnce(project, requester, tool, issueRef, now()),
      request: (project, requester, tool, issueRef) => this.requests.request(project, requester, tool, issueRef, now()),
    };
  }

  /** The kept requests of a project, newest first. */
  list(project: string, status: ApprovalStatus | undefined): Approval[] {
    this.check(project);
    return this.requests.list(project, status, this.now());
  }

  /** One request; with `waitSeconds`, once it is no longer pending, or changes, or after that long (long-poll). */
  async wait(project: string, id: string, waitSeconds: number, signal: AbortSignal): Promise<Approval> {
    this.check(project);
    // Once closing, a long-poll answers at once so that it cannot hold the shutdown.
    const waitMs = this.closed ? 0 : waitSeconds * 1000;
    return this.requests.wait(project, id, waitMs, signal).catch(rethrow);
  }

  /**
   * The user's answer; logged whatever it is, once its effect is in place. The approver token may
   * answer `once`, `for` up to 8 h, or `deny`: never `always`, which writes the policy.
   */
  async answer(
    project: string,
    id: string,
    answer: ApprovalAnswer,
    ttlSeconds: number | undefined,
    attribution: AnswerAttribution = { by: 'admin' },
  ): Promise<ApprovalAnswerResponse> {
    if (attribution.by === 'approver') {
      if (this.approverProjects !== undefined && !this.approverProjects.has(project)) {
        throw new ApiError(
          'forbidden',
          `The approver token may not answer requests of project ${project} (PDP_APPROVER_PROJECTS); the admin token can.`,
        );
      }
      checkApproverAnswer(answer, ttlSeconds);
    }
    this.check(project);
    const answering =
      answer === 'always'
        ? this.answerAlways(project, id, ttlSeconds, attribution)
        : this.requests.answer(project, id, answer, ttlSeconds, this.now(), attribution);
    const outcome = await answering.catch(rethrow);
    const { approval, grant } = outcome;
    this.options.logger.info(
      {
        project,
        approval: approval.id,
        requester: approval.requester,
        tool: approval.tool,
        ...(approval.issueRef === undefined ? {} : { issueRef: approval.issueRef }),
        answer,
        ...(ttlSeconds === undefined ? {} : { ttlSeconds }),
        ...(grant === undefined ? {} : { grant: grant.id, expiresAt: grant.expiresAt }),
        who: attribution.by,
        ...(attribution.via === undefined ? {} : { via: attribution.via }),
      },
      'approval answered',
    );
    return outcome;
  }

  /**
   * `always`: the request is claimed, the permissions service writes the tool into the agent's
   * `allowedTools` (checking, on the file it read, that the tool is still on ask), then the request
   * closes, or stays pending when the write failed. The project's policy changes heard meanwhile,
   * this write's own included, reach the other requests once the writes are done; the claimed one
   * is left to its write, which read the file itself.
   */
  private async answerAlways(
    project: string,
    id: string,
    ttlSeconds: number | undefined,
    attribution: AnswerAttribution,
  ): Promise<AnswerOutcome> {
    const now = this.now();
    const claimed = this.requests.claim(project, id, ttlSeconds, now);
    const writes = this.writing.get(project) ?? { count: 0, claimed: new Set(), changed: false };
    writes.count += 1;
    writes.claimed.add(claimed);
    this.writing.set(project, writes);
    try {
      try {
        await this.options.always.allowAlways(project, claimed.requester, claimed.tool);
      } catch (error) {
        throw this.requests.releaseClaim(claimed, error, this.now());
      }
      return this.requests.settleClaim(claimed, now, attribution);
    } finally {
      writes.count -= 1;
      if (writes.count === 0) {
        this.writing.delete(project);
        if (writes.changed) this.requests.policyChanged(project, this.now(), writes.claimed);
      }
    }
  }

  listGrants(project: string): Grant[] {
    this.check(project);
    return this.grants.list(project, this.now());
  }

  createGrant(project: string, requester: string, tools: readonly string[], ttlSeconds: number): Grant {
    this.check(project);
    const grant = wrap(() => this.grants.create(project, requester, tools, ttlSeconds, this.now()));
    this.options.logger.info(
      { project, grant: grant.id, requester, tools: grant.tools, ttlSeconds, expiresAt: grant.expiresAt, who: WHO },
      'grant created',
    );
    return grant;
  }

  revokeGrant(project: string, id: string): Grant {
    this.check(project);
    try {
      const grant = wrap(() => this.grants.revoke(project, id, this.now()));
      this.options.logger.info({ project, grant: id, requester: grant.requester, tools: grant.tools, who: WHO }, 'grant revoked');
      return grant;
    } catch (error) {
      // A revocation that could not be saved still holds in memory: it is logged as what it is.
      if (error instanceof ApiError && error.code === 'write_failed') {
        this.options.logger.error({ project, grant: id, who: WHO, err: error }, 'grant revoked but not saved');
      }
      throw error;
    }
  }

  /**
   * After a change of a project's policy (API write or file): closes what is no longer on ask
   * (docs/api.md#approvals-and-temporary-grants); held while an `always` answer of the project is being written.
   */
  policyChanged(project: string): void {
    const writes = this.writing.get(project);
    if (writes === undefined) this.requests.policyChanged(project, this.now());
    else writes.changed = true;
  }

  /**
   * Once a project is loaded: forgets the grants and `once` answers kept for it that were made for
   * another folder than the one it is now (deleted and made again while the service was stopped).
   */
  adoptFolder(project: string, folder: string | undefined): void {
    const other = (id: string, made: string): boolean => id === project && made !== folder;
    this.grants.dropWhere(other);
    this.onces.dropWhere(other);
  }

  /** Once every project is loaded: forgets the grants and `once` answers kept for projects that are gone. */
  retainProjects(served: (project: string) => boolean): void {
    const gone = (id: string): boolean => !served(id);
    this.grants.dropWhere(gone);
    this.onces.dropWhere(gone);
  }

  /** Forgets everything of a project that is no longer served. */
  dropProject(project: string): void {
    this.requests.dropProject(project);
    this.grants.dropProject(project);
  }

  /**
   * Told of every project change (server/projects/project-changes.ts): a project loaded adopts its
   * folder, a removed one is forgotten, and any other change closes what is no longer on ask.
   */
  projectChanged(project: string, change: string): void {
    if (change === 'added') this.adoptFolder(project, this.options.projects.folderOf(project));
    if (change === 'removed') this.dropProject(project);
    else this.policyChanged(project);
  }

  /** What was granted or asked for a folder is not inherited by the one that replaces it. */
  folderReplaced(project: string): void {
    this.dropProject(project);
  }

  /** Releases the long-polls, stops the periodic expiry and saves what is still live with the wall time of the stop (shutdown). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.requests.close();
    const at = this.now();
    if (this.file === undefined || (this.grants.persisted(at).length === 0 && this.onces.persisted(at).length === 0)) return;
    try {
      this.save(this.file);
    } catch (error) {
      this.options.logger.error({ err: error }, 'approvals state not saved');
    }
  }

  private now(): number {
    return this.clock.monotonic();
  }

  private check(project: string): void {
    if (!this.options.projects.has(project)) throw unknownProject(project);
  }

  /** Writes the state file; throws when it cannot. */
  private save(file: ApprovalsStateFile): void {
    const now = this.now();
    const boot = bootTimeOf(this.clock);
    this.seenWallMs = Math.max(this.seenWallMs, this.clock.wall());
    // Each end also on the boot clock, which a wall clock set back while the service is stopped does not move.
    const bootExpiry = boot === undefined ? undefined : (expiresAt: number) => bootDeadline(boot, now, expiresAt);
    file.write({
      bootId: boot?.id,
      seenAt: new Date(this.seenWallMs).toISOString(),
      grants: this.grants.persisted(now, bootExpiry),
      onces: this.onces.persisted(now, bootExpiry),
    });
  }

  /** Takes back what the state file kept; returns what could not be, to log at start. */
  private restore(loaded: LoadedState): string[] {
    const now = this.now();
    const bounds = {
      boot: bootTimeOf(this.clock),
      savedBootId: loaded.bootId,
      seenWallMs: loaded.seenAt === undefined ? undefined : Date.parse(loaded.seenAt) || undefined,
    };
    return [
      ...(loaded.warning === undefined ? [] : [loaded.warning]),
      ...this.grants.restore(loaded.grants, now, bounds),
      ...this.onces.restore(loaded.onces, now, bounds),
    ];
  }
}

/** What the approver token may answer: `once`, `for` of at most 8 h, `deny` (else 403 forbidden). */
function checkApproverAnswer(answer: ApprovalAnswer, ttlSeconds: number | undefined): void {
  if (!APPROVER_ANSWERS.includes(answer)) {
    throw new ApiError(
      'forbidden',
      `The approver token may answer once, for (at most ${String(MAX_APPROVER_GRANT_TTL_SECONDS)} s) or deny; "${answer}" changes the policy and needs the admin token.`,
    );
  }
  if (answer === 'for' && ttlSeconds !== undefined && ttlSeconds > MAX_APPROVER_GRANT_TTL_SECONDS) {
    throw new ApiError(
      'forbidden',
      `The approver token may grant at most ${String(MAX_APPROVER_GRANT_TTL_SECONDS)} s (8 h); a longer grant needs the admin token.`,
      { maxTtlSeconds: MAX_APPROVER_GRANT_TTL_SECONDS },
    );
  }
}

/** An out-of-range `ttlSeconds` is a malformed request on the wire. */
function rethrow(error: unknown): never {
  throw error instanceof ApiError && error.code === 'invalid_ttl' ? new ApiError('invalid_request', error.message, error.details) : error;
}

function wrap<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    return rethrow(error);
  }
}
