/**
 * Approvals and temporary grants as the HTTP routes and the decisions use them (docs/api.md#approvals-and-temporary-grants):
 * the project checks, the clock, the audit log lines of every answer and grant change, and the
 * mapping of the core's errors onto the API's codes.
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
import { SYSTEM_CLOCK, type ServiceClock } from './clock.js';
import { ApiError, unknownProject } from '../errors.js';
import type { AnswerAttribution } from './approval-requests.js';
import type { Approvals } from './open-approvals.js';

export interface ApprovalsServiceOptions {
  readonly approvals: Approvals;
  /** Whether the service serves this project now. */
  readonly hasProject: (project: string) => boolean;
  /** The identity of a served project's folder (folder-identity.ts), or undefined. */
  readonly folderOf: (project: string) => string | undefined;
  readonly logger: Logger;
  /** Its monotonic time times every expiry (clock.ts). */
  readonly clock?: ServiceClock | undefined;
  /** The only projects the approver token may answer in; undefined: every project. */
  readonly approverProjects?: readonly string[] | undefined;
}

/** Who changes grants: only the admin token reaches those routes (docs/api.md#security). */
const WHO = 'admin';

export class ApprovalsService {
  /** What `/decide` consults after an agent's allowlist. */
  readonly port: ApprovalsPort;
  private readonly clock: () => number;
  private closed = false;
  private readonly approverProjects: ReadonlySet<string> | undefined;

  constructor(private readonly options: ApprovalsServiceOptions) {
    this.approverProjects = options.approverProjects === undefined ? undefined : new Set(options.approverProjects);
    const serviceClock = options.clock ?? SYSTEM_CLOCK;
    const clock = (): number => serviceClock.monotonic();
    this.clock = clock;
    const { requests, grants } = options.approvals;
    this.port = {
      // Most denied calls have no grant: the clock is read only when one covers the call.
      granted: (project, requester, tool, args) => grants.judge(project, requester, tool, args, clock),
      consumeOnce: (project, requester, tool, issueRef) => requests.consumeOnce(project, requester, tool, issueRef, clock()),
      request: (project, requester, tool, issueRef) => requests.request(project, requester, tool, issueRef, clock()),
    };
  }

  /** The kept requests of a project, newest first. */
  list(project: string, status: ApprovalStatus | undefined): Approval[] {
    this.check(project);
    return this.options.approvals.requests.list(project, status, this.clock());
  }

  /** One request; with `waitSeconds`, once it is no longer pending, or changes, or after that long (long-poll). */
  async wait(project: string, id: string, waitSeconds: number, signal: AbortSignal): Promise<Approval> {
    this.check(project);
    // Once closing, a long-poll answers at once so that it cannot hold the shutdown.
    const waitMs = this.closed ? 0 : waitSeconds * 1000;
    return this.options.approvals.requests.wait(project, id, waitMs, signal).catch(rethrow);
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
    const outcome = await this.options.approvals.requests.answer(project, id, answer, ttlSeconds, this.clock(), attribution).catch(rethrow);
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

  listGrants(project: string): Grant[] {
    this.check(project);
    return this.options.approvals.grants.list(project, this.clock());
  }

  createGrant(project: string, requester: string, tools: readonly string[], ttlSeconds: number): Grant {
    this.check(project);
    const grant = wrap(() => this.options.approvals.grants.create(project, requester, tools, ttlSeconds, this.clock()));
    this.options.logger.info(
      { project, grant: grant.id, requester, tools: grant.tools, ttlSeconds, expiresAt: grant.expiresAt, who: WHO },
      'grant created',
    );
    return grant;
  }

  revokeGrant(project: string, id: string): Grant {
    this.check(project);
    try {
      const grant = wrap(() => this.options.approvals.grants.revoke(project, id, this.clock()));
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

  /** What could not be loaded from the state file, to log at start. */
  get warnings(): readonly string[] {
    return this.options.approvals.warnings;
  }

  /** After a change of a project's policy (API write or file): closes what is no longer on ask (docs/api.md#approvals-and-temporary-grants). */
  policyChanged(project: string): void {
    this.options.approvals.requests.policyChanged(project, this.clock());
  }

  /**
   * Once a project is loaded: forgets the grants and `once` answers kept for it that were made for
   * another folder than the one it is now (deleted and made again while the service was stopped).
   */
  adoptFolder(project: string, folder: string | undefined): void {
    const other = (id: string, made: string): boolean => id === project && made !== folder;
    this.options.approvals.grants.dropWhere(other);
    this.options.approvals.onces.dropWhere(other);
  }

  /** Once every project is loaded: forgets the grants and `once` answers kept for projects that are gone. */
  retainProjects(served: (project: string) => boolean): void {
    const gone = (id: string): boolean => !served(id);
    this.options.approvals.grants.dropWhere(gone);
    this.options.approvals.onces.dropWhere(gone);
  }

  /** Forgets everything of a project that is no longer served. */
  dropProject(project: string): void {
    this.options.approvals.requests.dropProject(project);
    this.options.approvals.grants.dropProject(project);
  }

  /**
   * Told of every project change (server/projects/project-changes.ts): a project loaded adopts its
   * folder, a removed one is forgotten, and any other change closes what is no longer on ask.
   */
  projectChanged(project: string, change: string): void {
    if (change === 'added') this.adoptFolder(project, this.options.folderOf(project));
    if (change === 'removed') this.dropProject(project);
    else this.policyChanged(project);
  }

  /** What was granted or asked for a folder is not inherited by the one that replaces it. */
  folderReplaced(project: string): void {
    this.dropProject(project);
  }

  /** Releases the long-polls and stops the periodic expiry (shutdown). */
  close(): void {
    this.closed = true;
    this.options.approvals.close();
  }

  private check(project: string): void {
    if (!this.options.hasProject(project)) throw unknownProject(project);
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
