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
import { SYSTEM_CLOCK, wallOffsetOf, type ServiceClock } from './clock.js';
import { ApiError } from '../errors.js';
import { parseIssueRef, type IssueRef } from './issue-ref.js';
import type { OnceAllowances } from './once-allowances.js';
import { PairMap } from './pair-map.js';
import { isAgentRequester, type TemporaryGrants } from './temporary-grants.js';

/** Answered and expired requests kept per project for the list, oldest forgotten first. */
export const MAX_CLOSED_APPROVALS_PER_PROJECT = 200;

export interface ApprovalChange {
  readonly project: string;
  readonly id: string;
  readonly status: ApprovalStatus;
}

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
  /** Makes an answer `always` durable (the tool joins the agent's `allowedTools`); the request closes only once it resolves. */
  readonly makeAlways: (project: string, requester: string, tool: string) => Promise<void>;
  /** Whether `tool` is still on ask for `requester` in the project's policy now (default: always). */
  readonly isOnAsk?: (project: string, requester: string, tool: string) => boolean;
  /**
   * Runs `task` right after the project's policy file was read again from disk under the folder's
   * write lock (memory then follows the file), before any other write or reload of that folder:
   * an answer is judged on the file as it is, not on what the watcher has heard so far. Default: runs it now.
   */
  readonly withFreshPolicy?: <T>(project: string, task: () => T) => Promise<T>;
  /** Whether the project declares `requester` (`.ideai/agents.json` or an override); default: every requester. */
  readonly isDeclared?: (project: string, requester: string) => boolean;
  /** Lifetime of a pending request (`PDP_APPROVAL_TTL_SECONDS`). */
  readonly ttlSeconds?: number;
  /** Called after every new or changed request (the `approval` events of `GET /events`). */
  readonly onChange?: (change: ApprovalChange) => void;
  /** Time for the periodic expiry and for {@link ApprovalRequests.wait} (monotonic), and for the times shown (wall). */
  readonly clock?: ServiceClock;
  readonly sweepIntervalMs?: number;
}

interface RequestRecord {
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
  /** An answer's effect is being made (an `always` write): the request is pending but no longer answerable. */
  answering: boolean;
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
      answering: false,
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
   * The user's answer. The request closes only once the answer's effect is in place (the `once`
   * armed and saved, the grant created, the `always` write done); when the effect fails, the
   * request stays pending and the error is thrown.
   */
  async answer(
    project: string,
    id: string,
    answer: ApprovalAnswer,
    ttlSeconds: number | undefined,
    now: number,
    attribution: AnswerAttribution = { by: 'admin' },
  ): Promise<AnswerOutcome> {
    const record = this.answerable(project, id, now);
    if (answer === 'for' ? !isGrantTtl(ttlSeconds) : ttlSeconds !== undefined) {
      throw new ApiError(
        'invalid_ttl',
        `ttlSeconds, an integer from 1 to ${MAX_GRANT_TTL_SECONDS}, goes with the answer "for" and only with it.`,
      );
    }
    let grant: Grant | undefined;
    switch (answer) {
      case 'deny':
      case 'once':
      case 'for': {
        // An editor's save that took the tool off ask a moment ago wins, even before the watcher hears it.
        const fresh = this.options.withFreshPolicy ?? (<T>(_project: string, task: () => T) => Promise.resolve(task()));
        return fresh(project, () => {
          const at = this.clock();
          this.answerable(project, id, at);
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
      case 'always':
        record.answering = true;
        try {
          await this.options.makeAlways(project, record.requester, record.tool);
        } catch (error) {
          record.answering = false;
          // The write found the tool no longer on ask in the file it read: the request closes with nothing written.
          if ((error as { code?: unknown }).code !== 'approval_closed') throw error;
          // The await above may have closed it.
          if (record.status === 'pending') this.closeForPolicy(record, this.clock());
          throw closedError(record);
        }
        record.answering = false;
        return this.closeAnswered(record, answer, now, attribution, undefined);
    }
  }

  /** The request if it may be answered now: pending, not being answered, its tool still on ask (else closed); throws otherwise. */
  private answerable(project: string, id: string, now: number): RequestRecord {
    const record = this.projects.get(project)?.byId.get(id);
    if (record === undefined) throw new ApiError('not_found', `No approval request ${JSON.stringify(id)} in project ${project}.`);
    this.expireIfDue(record, now);
    if (record.status === 'pending' && !record.answering && !this.isOnAsk(record)) this.closeForPolicy(record, now);
    if (record.status !== 'pending' || record.answering) throw closedError(record);
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
   * ask for their requester (`expired`, cause `policy_changed`) and drops such armed `once` answers.
   * A request whose `always` is being written is left to that write, which checks again.
   */
  policyChanged(project: string, now: number): void {
    const state = this.projects.get(project);
    if (state !== undefined) {
      for (const [, , record] of state.pending.entries()) if (!record.answering && !this.isOnAsk(record)) this.closeForPolicy(record, now);
    }
    const isOnAsk = this.options.isOnAsk;
    if (isOnAsk !== undefined) this.options.onces.retain(project, (requester, tool) => isOnAsk(project, requester, tool));
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
    return this.options.isOnAsk?.(record.project, record.requester, record.tool) ?? true;
  }

  /**
   * Makes room in a full queue for a requester the project declares, by closing the oldest pending
   * request of one it does not declare (`expired`, cause `displaced`): 100 made-up requesters with
   * one request each would otherwise lock the project's own agents out for the requests' lifetime.
   */
  private displaceFor(state: ProjectRequests, requester: string, now: number): boolean {
    const isDeclared = this.options.isDeclared;
    if (isDeclared === undefined) return false;
    let declared: boolean | undefined;
    for (const record of state.byId.values()) {
      if (record.status !== 'pending' || record.answering || isDeclared(record.project, record.requester)) continue;
      declared ??= isDeclared(record.project, requester);
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

  /** Expires a pending request past its time (never one whose answer is being made); true when it is no longer pending. */
  private expireIfDue(record: RequestRecord, now: number): boolean {
    if (record.status === 'pending' && !record.answering && record.expiresAt <= now) this.closeRequest(record, 'expired', now);
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
    this.options.onChange?.({ project: record.project, id: record.id, status: record.status });
  }
}

function closedError(record: RequestRecord): ApiError {
  const state = record.answering ? 'already being answered' : record.status;
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
