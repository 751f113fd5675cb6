/**
 * Approval requests (docs/api.md#approvals-and-temporary-grants): when an agent calls a tool its policy lists in `askTools`, the
 * user is asked. One pending request per project, requester and tool; at most 100 open per project;
 * a refusal answers `approval_denied` for 60 s; an unanswered request expires. Requests live in
 * memory only (a restart forgets them; the agent's next call opens a new one); the `once` answers
 * they arm are kept by {@link OnceAllowances}, which saves them.
 */
import { randomBytes } from 'node:crypto';
import {
  APPROVAL_DENIAL_COOLDOWN_SECONDS,
  DEFAULT_APPROVAL_TTL_SECONDS,
  MAX_APPROVAL_WAIT_SECONDS,
  MAX_GRANT_TTL_SECONDS,
  MAX_OPEN_APPROVALS_PER_PROJECT,
  MAX_OPEN_APPROVALS_PER_REQUESTER,
  type Approval,
  type ApprovalAnswer,
  type ApprovalAnsweredBy,
  type ApprovalStatus,
  type ApprovalVia,
  type DecisionApproval,
  type Grant,
  type ApprovalCause,
} from '../../schemas/approvals.js';
import { isToolName } from '../../schemas/catalog.js';
import { isQualifiedToolName } from '../../schemas/servers.js';
import { isAgentRequester } from '../../schemas/requester.js';
import { SYSTEM_CLOCK, wallOffsetOf, type ServiceClock } from '../clock.js';
import { ApiError } from '../errors.js';
import type { LiveEvents } from '../events/live-events.js';
import type { Projects } from '../projects/projects.js';
import { parseIssueRef, type IssueRef } from './issue-ref.js';
import type { OnceAllowances } from './once-allowances.js';
import { PairMap } from './pair-map.js';
import type { TemporaryGrants } from './temporary-grants.js';

/** Answered and expired requests kept per project for the list, oldest forgotten first. */
export const MAX_CLOSED_APPROVALS_PER_PROJECT = 200;

/** What the decision path answers for a tool on ask. */
export type RequestOutcome =
  | { readonly kind: 'pending'; readonly created: boolean; readonly approval: DecisionApproval }
  | { readonly kind: 'denied' }
  | { readonly kind: 'queue_full'; readonly limit: 'project' | 'requester' };

/** Who gave an answer: the token that carried it, and where the user answered when the caller says so. */
export interface AnswerAttribution {
  readonly by: ApprovalAnsweredBy;
  readonly via?: ApprovalVia | undefined;
}

export interface AnswerOutcome {
  readonly approval: Approval;
  /** The grant an answer `for` created. */
  readonly grant?: Grant;
}

export interface ApprovalRequestsOptions {
  /** Where `once` answers are armed and consumed. */
  readonly onces: OnceAllowances;
  /** Where an answer `for` creates its grant. */
  readonly grants: TemporaryGrants;
  /**
   * What the requests read of their project now: whether a tool is still on ask for a requester,
   * whether the project declares a requester (`.ideai/agents.json` or an override), and `freshly`,
   * which runs an answer right after the project's files were read again under the folder's write
   * lock, before any other write or reload of it: an answer is judged on the file as it is, not on
   * what the watcher has heard so far.
   */
  readonly projects: Pick<Projects, 'isOnAsk' | 'isDeclared' | 'freshly'>;
  /** Told of every new or changed request (the `approval` events of `GET /events`). */
  readonly events?: Pick<LiveEvents, 'approvalChanged'> | undefined;
  /** Lifetime of a pending request (`PDP_APPROVAL_TTL_SECONDS`). */
  readonly ttlSeconds?: number | undefined;
  /** Time for the periodic expiry and for {@link ApprovalRequests.wait} (monotonic), and for the times shown (wall). */
  readonly clock?: ServiceClock | undefined;
  readonly sweepIntervalMs?: number;
}

/** A request as this class keeps it (what {@link ApprovalRequests.claim} hands back, to settle or release). */
export interface RequestRecord {
  readonly id: string;
  readonly project: string;
  readonly requester: string;
  readonly tool: string;
  readonly issueRef: IssueRef | undefined;
  /** Monotonic times (clock.ts). */
  readonly createdAt: number;
  readonly expiresAt: number;
  /** Wall minus monotonic time when it was opened: its times are shown on that wall clock. */
  readonly wallOffset: number;
  status: ApprovalStatus;
  /** Set when it closed unanswered for a reason other than its time (approvals.ts: ApprovalCause). */
  cause?: ApprovalCause;
  answer?: ApprovalAnswer;
  answeredAt?: number;
  answeredBy?: ApprovalAnsweredBy;
  via?: ApprovalVia;
  /**
   * Claimed by an `always` answer whose policy write is under way: still pending (a decision reuses
   * it) but neither answerable, expired nor displaced until that answer settles or releases it.
   */
  claimed: boolean;
  readonly waiters: Set<() => void>;
}

class ProjectRequests {
  /** Every kept request by id, in the order they were opened. */
  readonly byId = new Map<string, RequestRecord>();
  /** The one pending request of each requester and tool. */
  readonly pending = new PairMap<RequestRecord>();
  /** Until when each refused requester and tool gets `approval_denied`. */
  readonly refusedUntil = new PairMap<number>();
}

export class ApprovalRequests {
  private readonly projects = new Map<string, ProjectRequests>();
  private readonly ttlMs: number;
  private readonly clock: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly options: ApprovalRequestsOptions) {
    this.ttlMs = (options.ttlSeconds ?? DEFAULT_APPROVAL_TTL_SECONDS) * 1000;
    const clock = options.clock ?? SYSTEM_CLOCK;
    this.clock = () => clock.monotonic();
    this.sweeper = setInterval(() => {
      this.sweep(this.clock());
    }, options.sweepIntervalMs ?? 1000);
    this.sweeper.unref();
  }

  /**
   * Opens, or reuses, the pending request of `requester` for `tool`. Only agents ask, and only for
   * catalog tools: anything else is a caller's mistake and throws.
   */
  request(project: string, requester: string, tool: string, issueRef: string | undefined, now: number): RequestOutcome {
    if (!isAgentRequester(requester) || !(isToolName(tool) || isQualifiedToolName(tool))) {
      throw new TypeError('only an agent can ask, and only for a catalog tool');
    }
    const state = this.projects.get(project) ?? this.addProject(project);
    const refusedUntil = state.refusedUntil.get(requester, tool);
    if (refusedUntil !== undefined) {
      if (refusedUntil > now) return { kind: 'denied' };
      state.refusedUntil.delete(requester, tool);
    }
    const existing = state.pending.get(requester, tool);
    if (existing !== undefined && !this.expireIfDue(existing, now)) {
      return { kind: 'pending', created: false, approval: toDecisionApproval(existing) };
    }
    if (state.pending.countOf(requester) >= MAX_OPEN_APPROVALS_PER_REQUESTER) {
      this.expireDue(state, now);
      if (state.pending.countOf(requester) >= MAX_OPEN_APPROVALS_PER_REQUESTER) return { kind: 'queue_full', limit: 'requester' };
    }
    if (state.pending.size >= MAX_OPEN_APPROVALS_PER_PROJECT) {
      this.expireDue(state, now);
      if (state.pending.size >= MAX_OPEN_APPROVALS_PER_PROJECT && !this.displaceFor(state, requester, now)) {
        return { kind: 'queue_full', limit: 'project' };
      }
    }
    const record: RequestRecord = {
      id: newId(state.byId),
      project,
      requester,
      tool,
      issueRef: parseIssueRef(issueRef),
      createdAt: now,
      expiresAt: now + this.ttlMs,
      wallOffset: wallOffsetOf(this.options.clock ?? SYSTEM_CLOCK),
      status: 'pending',
      claimed: false,
      waiters: new Set(),
    };
    state.byId.set(record.id, record);
    state.pending.set(requester, tool, record);
    forgetOldestClosed(state);
    this.changed(record);
    return { kind: 'pending', created: true, approval: toDecisionApproval(record) };
  }

  /** True exactly once after a `once` answer for this requester, tool and ticket (see {@link OnceAllowances.consume}). */
  consumeOnce(project: string, requester: string, tool: string, issueRef: string | undefined, now: number): boolean {
    return this.options.onces.consume(project, requester, tool, issueRef, now);
  }

  /**
   * The user's answer `deny`, `once` or `for`, judged on the project's policy file as it is now: an
   * editor's save that took the tool off ask a moment ago wins, even before the watcher hears it.
   * The request closes only once the answer's effect is in place (the refusal noted, the `once`
   * armed and saved, the grant created); when the effect fails, it stays pending and the error is
   * thrown. `always` writes the policy first: {@link claim}, then {@link settleClaim}.
   */
  async answer(
    project: string,
    id: string,
    answer: ApprovalAnswer,
    ttlSeconds: number | undefined,
    now: number,
    attribution: AnswerAttribution = { by: 'admin' },
  ): Promise<AnswerOutcome> {
    const record = this.checked(project, id, answer, ttlSeconds, now);
    if (answer === 'always') throw new TypeError('an always answer writes the policy first: claim the request, then settle it');
    return this.options.projects.freshly(project, () => {
      const at = this.clock();
      this.answerable(project, id, at);
      let grant: Grant | undefined;
      if (answer === 'deny') {
        this.projects.get(project)?.refusedUntil.set(record.requester, record.tool, at + APPROVAL_DENIAL_COOLDOWN_SECONDS * 1000);
      } else if (answer === 'once') {
        this.options.onces.arm(project, record.id, record.requester, record.tool, record.issueRef?.key, at);
      } else {
        grant = this.options.grants.create(project, record.requester, [record.tool], ttlSeconds as number, at);
      }
      return this.closeAnswered(record, answer, at, attribution, grant);
    });
  }

  /**
   * Claims a request for an `always` answer, whose policy write the caller then makes; throws as
   * {@link answer} does when it may not be answered so.
   */
  claim(project: string, id: string, ttlSeconds: number | undefined, now: number): RequestRecord {
    const record = this.checked(project, id, 'always', ttlSeconds, now);
    record.claimed = true;
    return record;
  }

  /** Closes a claimed request once its `always` write is done. */
  settleClaim(record: RequestRecord, now: number, attribution: AnswerAttribution): AnswerOutcome {
    record.claimed = false;
    return this.closeAnswered(record, 'always', now, attribution, undefined);
  }

  /**
   * Ends the claim of an `always` answer whose write failed: the request is pending again, or, when
   * the write found its tool no longer on ask in the file it read, closed with nothing written.
   * Returns the error the answer gets.
   */
  releaseClaim(record: RequestRecord, error: unknown, now: number): unknown {
    record.claimed = false;
    if ((error as { code?: unknown }).code !== 'approval_closed') return error;
    if (record.status === 'pending') this.closeForPolicy(record, now);
    return closedError(record);
  }

  /** The request if `answer` (with `ttlSeconds`) may be given to it now; throws otherwise. */
  private checked(project: string, id: string, answer: ApprovalAnswer, ttlSeconds: number | undefined, now: number): RequestRecord {
    const record = this.answerable(project, id, now);
    if (answer === 'for' ? !isGrantTtl(ttlSeconds) : ttlSeconds !== undefined) {
      throw new ApiError(
        'invalid_ttl',
        `ttlSeconds, an integer from 1 to ${MAX_GRANT_TTL_SECONDS}, goes with the answer "for" and only with it.`,
      );
    }
    return record;
  }

  /** The request if it may be answered now: pending, not claimed, its tool still on ask (else closed); throws otherwise. */
  private answerable(project: string, id: string, now: number): RequestRecord {
    const record = this.projects.get(project)?.byId.get(id);
    if (record === undefined) throw new ApiError('not_found', `No approval request ${JSON.stringify(id)} in project ${project}.`);
    this.expireIfDue(record, now);
    if (record.status === 'pending' && !record.claimed && !this.isOnAsk(record)) this.closeForPolicy(record, now);
    if (record.status !== 'pending' || record.claimed) throw closedError(record);
    return record;
  }

  /** Closes a request whose answer's effect is in place. */
  private closeAnswered(
    record: RequestRecord,
    answer: ApprovalAnswer,
    now: number,
    attribution: AnswerAttribution,
    grant: Grant | undefined,
  ): AnswerOutcome {
    record.answeredBy = attribution.by;
    if (attribution.via !== undefined) record.via = attribution.via;
    this.closeRequest(record, answer === 'deny' ? 'denied' : 'approved', now, answer);
    return grant === undefined ? { approval: toWire(record) } : { approval: toWire(record), grant };
  }

  /** One request as it now is, or `undefined`. */
  get(project: string, id: string, now: number): Approval | undefined {
    const record = this.projects.get(project)?.byId.get(id);
    if (record === undefined) return undefined;
    this.expireIfDue(record, now);
    return toWire(record);
  }

  /** The kept requests of a project, newest first, optionally only those with `status`. */
  list(project: string, status: ApprovalStatus | undefined, now: number): Approval[] {
    const state = this.projects.get(project);
    if (state === undefined) return [];
    this.expireDue(state, now);
    const approvals: Approval[] = [];
    for (const record of state.byId.values()) if (status === undefined || record.status === status) approvals.push(toWire(record));
    return approvals.reverse();
  }

  /**
   * Long-poll: the request at once when it is no longer pending, else on its next change, else after
   * `timeoutMs` (at most 60 s) or when `signal` aborts, with its state then. Rejects with `not_found`.
   */
  wait(project: string, id: string, timeoutMs: number, signal?: AbortSignal): Promise<Approval> {
    const record = this.projects.get(project)?.byId.get(id);
    if (record === undefined)
      return Promise.reject(new ApiError('not_found', `No approval request ${JSON.stringify(id)} in project ${project}.`));
    this.expireIfDue(record, this.clock());
    if (record.status !== 'pending' || timeoutMs <= 0 || signal?.aborted === true) return Promise.resolve(toWire(record));
    return new Promise((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        record.waiters.delete(finish);
        signal?.removeEventListener('abort', finish);
        this.expireIfDue(record, this.clock());
        resolve(toWire(record));
      };
      // A timer may fire a little before the clock reads its time: the expiry is awaited until the clock agrees.
      const atExpiry = (): void => {
        const left = record.expiresAt - this.clock();
        if (left > 0 && record.status === 'pending') timer = setTimeout(atExpiry, left);
        else finish();
      };
      const waitMs = Math.min(timeoutMs, MAX_APPROVAL_WAIT_SECONDS * 1000);
      // Ends at the request's expiry too, so that a waiter learns of it without waiting for the sweep.
      let timer =
        waitMs < record.expiresAt - this.clock() ? setTimeout(finish, waitMs) : setTimeout(atExpiry, record.expiresAt - this.clock());
      record.waiters.add(finish);
      signal?.addEventListener('abort', finish, { once: true });
    });
  }

  /** Expires the requests past their time, forgets ended refusals, unused expired `once` answers and expired grants. */
  sweep(now: number): void {
    for (const state of this.projects.values()) {
      this.expireDue(state, now);
      for (const [requester, tool, until] of state.refusedUntil.entries()) if (until <= now) state.refusedUntil.delete(requester, tool);
    }
    this.options.onces.sweep(now);
    this.options.grants.expire(now);
  }

  /**
   * After a change of the project's policy: closes the pending requests whose tool is no longer on
   * ask for their requester (`expired`, cause `policy_changed`), but for those `spared`, and drops
   * such armed `once` answers. ApprovalsService holds a project's changes while an `always` answer
   * of it is being written, and then spares the requests those answers claimed: the write read the
   * file itself and decided them.
   */
  policyChanged(project: string, now: number, spared: ReadonlySet<RequestRecord> = NONE_SPARED): void {
    const state = this.projects.get(project);
    if (state !== undefined) {
      for (const [, , record] of state.pending.entries())
        if (!spared.has(record) && !this.isOnAsk(record)) this.closeForPolicy(record, now);
    }
    const { projects } = this.options;
    this.options.onces.retain(project, (requester, tool) => projects.isOnAsk(project, requester, tool));
  }

  /** Forgets a project's requests, refusals and `once` answers (the project disappeared); its waiters get the request as it was. */
  dropProject(project: string): void {
    const state = this.projects.get(project);
    this.projects.delete(project);
    this.options.onces.dropProject(project);
    if (state !== undefined) for (const record of state.byId.values()) wake(record);
  }

  /** Stops the periodic expiry and releases every waiter (shutdown). */
  close(): void {
    clearInterval(this.sweeper);
    for (const state of this.projects.values()) for (const record of state.byId.values()) wake(record);
  }

  private isOnAsk(record: RequestRecord): boolean {
    return this.options.projects.isOnAsk(record.project, record.requester, record.tool);
  }

  /**
   * Makes room in a full queue for a requester the project declares, by closing the oldest pending
   * request of one it does not declare (`expired`, cause `displaced`): 100 made-up requesters with
   * one request each would otherwise lock the project's own agents out for the requests' lifetime.
   */
  private displaceFor(state: ProjectRequests, requester: string, now: number): boolean {
    const { projects } = this.options;
    let declared: boolean | undefined;
    for (const record of state.byId.values()) {
      if (record.status !== 'pending' || record.claimed || projects.isDeclared(record.project, record.requester)) continue;
      declared ??= projects.isDeclared(record.project, requester);
      if (!declared) return false;
      record.cause = 'displaced';
      this.closeRequest(record, 'expired', now);
      return true;
    }
    return false;
  }

  private closeForPolicy(record: RequestRecord, now: number): void {
    record.cause = 'policy_changed';
    this.closeRequest(record, 'expired', now);
  }

  private addProject(project: string): ProjectRequests {
    const state = new ProjectRequests();
    this.projects.set(project, state);
    return state;
  }

  private expireDue(state: ProjectRequests, now: number): void {
    for (const [, , record] of state.pending.entries()) this.expireIfDue(record, now);
  }

  /** Expires a pending request past its time (never a claimed one); true when it is no longer pending. */
  private expireIfDue(record: RequestRecord, now: number): boolean {
    if (record.status === 'pending' && !record.claimed && record.expiresAt <= now) this.closeRequest(record, 'expired', now);
    return record.status !== 'pending';
  }

  private closeRequest(record: RequestRecord, status: Exclude<ApprovalStatus, 'pending'>, now: number, answer?: ApprovalAnswer): void {
    record.status = status;
    if (answer !== undefined) {
      record.answer = answer;
      record.answeredAt = now;
    }
    const state = this.projects.get(record.project);
    if (state?.pending.get(record.requester, record.tool) === record) state.pending.delete(record.requester, record.tool);
    if (state?.byId.get(record.id) === record) this.changed(record);
    wake(record);
  }

  private changed(record: RequestRecord): void {
    this.options.events?.approvalChanged({ project: record.project, id: record.id, status: record.status });
  }
}

const NONE_SPARED: ReadonlySet<RequestRecord> = new Set();

function closedError(record: RequestRecord): ApiError {
  const state = record.claimed ? 'already being answered' : record.status;
  const why =
    record.cause === 'policy_changed'
      ? ': its tool is no longer on ask for this requester, so it grants nothing'
      : record.cause === 'displaced'
        ? ': it made room in the full queue for an agent the project declares'
        : '';
  return new ApiError('approval_closed', `Approval request ${record.id} is no longer pending (${state})${why}.`, {
    status: record.status,
    ...(record.cause === undefined ? {} : { cause: record.cause }),
  });
}

function wake(record: RequestRecord): void {
  for (const waiter of [...record.waiters]) waiter();
}

/** Keeps at most {@link MAX_CLOSED_APPROVALS_PER_PROJECT} closed requests, forgetting the oldest. */
function forgetOldestClosed(state: ProjectRequests): void {
  let excess = state.byId.size - state.pending.size - MAX_CLOSED_APPROVALS_PER_PROJECT;
  for (const [id, record] of state.byId) {
    if (excess <= 0) return;
    if (record.status === 'pending') continue;
    state.byId.delete(id);
    excess -= 1;
  }
}

function isGrantTtl(ttlSeconds: number | undefined): boolean {
  return ttlSeconds !== undefined && Number.isInteger(ttlSeconds) && ttlSeconds >= 1 && ttlSeconds <= MAX_GRANT_TTL_SECONDS;
}

function newId(taken: ReadonlyMap<string, unknown>): string {
  let id: string;
  do id = randomBytes(9).toString('base64url');
  while (taken.has(id));
  return id;
}

function toDecisionApproval(record: RequestRecord): DecisionApproval {
  return { id: record.id, status: 'pending', expiresAt: new Date(Math.round(record.expiresAt + record.wallOffset)).toISOString() };
}

function toWire(record: RequestRecord): Approval {
  const approval: Approval = {
    id: record.id,
    requester: record.requester,
    tool: record.tool,
    status: record.status,
    createdAt: new Date(Math.round(record.createdAt + record.wallOffset)).toISOString(),
    expiresAt: new Date(Math.round(record.expiresAt + record.wallOffset)).toISOString(),
  };
  if (record.issueRef !== undefined) approval.issueRef = record.issueRef.display;
  if (record.answer !== undefined) approval.answer = record.answer;
  if (record.cause !== undefined) approval.details = { cause: record.cause };
  if (record.answeredAt !== undefined) approval.answeredAt = new Date(Math.round(record.answeredAt + record.wallOffset)).toISOString();
  if (record.answeredBy !== undefined && record.answer !== undefined) approval.answeredBy = record.answeredBy;
  if (record.via !== undefined && record.answer !== undefined) approval.via = record.via;
  return approval;
}
