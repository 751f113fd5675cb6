/**
 * The approvals' logic behind the header's "Demandes" button
 * (docs/api.md#approvals-and-temporary-grants): the pending approval requests and the temporary
 * grants of the open project, kept current from the live `approval` events, and the user's answers
 * (admin token only: an agent must never approve itself).
 */
import type { ApprovalEvent } from '../../../schemas/events.js';
import type { Approval, ApprovalAnswer, ApprovalsResponse, GrantsResponse } from '../../../schemas/approvals.js';
import { asApiError, type ApiError, type PermissionsApi } from '../api/api.js';
import { frenchError } from '../model/errors-fr.js';
import type { Navigation } from './navigation.js';
import { GRANT_DURATIONS, answeredText, closedText, domKey } from '../model/requests-model.js';
import { agentName, canAnswer } from '../state/selectors.js';
import { openTokenForm } from '../state/state.js';
import type { Store } from '../state/store.js';
import { ProjectList } from './project-list.js';

/** Events of a burst are answered with one read. */
const GATHER_MS = 40;
/** Closed requests said one by one; more are counted (a policy change can close a hundred at once). */
const SAID_CLOSED = 3;

/** What one read of the lists brings: the approval requests and the grants of the project. */
interface RequestLists {
  approvals: ApprovalsResponse;
  grants: GrantsResponse;
}

export class Requests extends ProjectList<RequestLists> {
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    store: Store,
    private readonly api: PermissionsApi,
    private readonly navigation: Navigation,
  ) {
    super(store);
  }

  protected async fetch(project: string): Promise<RequestLists> {
    const [approvals, grants] = await Promise.all([this.api.approvals(project), this.api.grants(project)]);
    return { approvals, grants };
  }

  protected async apply({ approvals, grants }: RequestLists, project: string): Promise<boolean> {
    const requests = this.state.requests;
    const pending = approvals.approvals.filter((entry) => entry.status === 'pending');
    const still = new Set(pending.map((entry) => entry.id));
    // The request this page is answering closes before its answer returns: the answer says it.
    const gone = requests.loaded ? requests.pending.filter((entry) => !still.has(entry.id) && entry.id !== requests.busy) : [];
    const announcedNew = requests.loaded && this.announceNew(requests.pending, pending);
    this.store.stage(() => {
      requests.pending = pending;
      requests.grants = grants.grants;
      requests.loaded = true;
      requests.loadError = null;
      requests.unsupported = false;
      requests.elsewhere.delete(project);
      if (requests.durationsFor !== null && !pending.some((entry) => entry.id === requests.durationsFor)) requests.durationsFor = null;
    });
    if (gone.length > 0) {
      this.store.changed(); // the lists now, the reason once read
      await this.announceClosed(project, gone, announcedNew);
    }
    return true;
  }

  protected readFailed(failure: ApiError): void {
    this.store.stage((next) => {
      if (failure.status === 404 && failure.code !== 'unknown_project') next.requests.unsupported = true;
      else next.requests.loadError = frenchError(failure);
    });
  }

  /**
   * Requests that left the pending list without this page answering them (its own answers leave
   * the list before the read): says why, so a request does not just vanish under the user's eyes.
   */
  private async announceClosed(project: string, gone: readonly Approval[], announcedNew: boolean): Promise<void> {
    const [first] = gone;
    if (first === undefined) return;
    // One read per closed request: a handful at a time, and only when one closed.
    const looked = await Promise.all(gone.slice(0, SAID_CLOSED).map((entry) => this.api.approval(project, entry.id).catch(() => null)));
    if (this.state.projectId !== project) return;
    const texts = gone.slice(0, SAID_CLOSED).map((entry, index) => {
      const agent = agentName(this.state, entry.requester);
      const closed = looked[index];
      return closed === null || closed === undefined || closed.status === 'pending'
        ? `Demande de ${agent} pour ${entry.tool} plus en attente.`
        : closedText(agent, closed);
    });
    if (gone.length > SAID_CLOSED) texts.push(`Et ${gone.length - SAID_CLOSED} autres demandes fermées.`);
    const text = texts.join(' ');
    this.store.stage((state) => {
      state.requests.notice = { text, refusal: looked.some((entry) => entry?.status === 'denied'), requester: first.requester };
      // A new request, said just before, matters more to a screen reader than a closed one; the save
      // that closed it (its confirmation still shown) is said with it rather than cut off.
      const saved = state.notice !== null && state.notice.until > Date.now() && state.announcement === state.notice.text;
      if (!announcedNew) state.announcement = saved ? `${state.announcement} ${text}` : text;
    });
  }

  /** Says the requests that appeared; false when none did. */
  private announceNew(before: readonly Approval[], after: readonly Approval[]): boolean {
    const known = new Set(before.map((entry) => entry.id));
    const fresh = after.filter((entry) => !known.has(entry.id));
    const [first] = fresh;
    if (first === undefined) return false;
    const where = this.state.requestsOpen ? '' : ' (bouton Demandes)';
    const text =
      fresh.length === 1
        ? `Nouvelle demande : ${agentName(this.state, first.requester)} veut appeler ${first.tool}${where}.`
        : `${fresh.length} nouvelles demandes d\u2019approbation${where}.`;
    this.store.stage((state) => {
      state.announcement = text;
    });
    return true;
  }

  /** An `approval` event: the open project's lists are read again; another project's are counted. */
  onEvent(event: ApprovalEvent): void {
    const state = this.state;
    if (event.project === state.projectId) {
      if (this.timer !== null) return;
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.refresh();
      }, GATHER_MS);
      return;
    }
    this.store.update((next) => {
      const ids = next.requests.elsewhere.get(event.project) ?? new Set<string>();
      if (event.status === 'pending') {
        if (!ids.has(event.id)) next.announcement = `Nouvelle demande d\u2019approbation dans le projet « ${event.project} ».`;
        ids.add(event.id);
      } else {
        ids.delete(event.id);
      }
      if (ids.size > 0) next.requests.elsewhere.set(event.project, ids);
      else next.requests.elsewhere.delete(event.project);
    });
  }

  showDurations(id: string | null): void {
    const closing = this.state.requests.durationsFor;
    this.store.update((state) => {
      state.requests.durationsFor = id;
      state.focusAfterRender =
        id === null
          ? closing === null
            ? null
            : `approve-for-${domKey(closing)}`
          : `approve-for-${domKey(id)}-${GRANT_DURATIONS[0]?.seconds ?? 0}`;
    });
  }

  async answer(id: string, answer: ApprovalAnswer, ttlSeconds?: number): Promise<void> {
    const state = this.state;
    const requests = state.requests;
    const project = state.projectId;
    const request = requests.pending.find((entry) => entry.id === id);
    if (!canAnswer(this.state) || requests.busy !== null || project === null || request === undefined) return;
    // The lists of the project answered in: a project switched meanwhile has lists of its own.
    this.store.update(() => {
      requests.busy = id;
      requests.problem = null;
      requests.notice = null;
      requests.durationsFor = null;
    });
    try {
      const result = await this.api.answerApproval(project, id, answer, ttlSeconds);
      const index = requests.pending.findIndex((entry) => entry.id === id);
      const grant = result.grant;
      this.store.stage(() => {
        requests.pending = requests.pending.filter((entry) => entry.id !== id);
        if (grant !== undefined) requests.grants = [grant, ...requests.grants.filter((entry) => entry.id !== grant.id)];
      });
      // "Toujours autoriser" wrote the policy: show it now, as this page's own change.
      if (answer === 'always') await this.navigation.reloadView({ own: true });
      const text = answeredText(agentName(this.state, request.requester), request.tool, answer, ttlSeconds);
      const focus = this.focusAfterAnswer(index, request.requester);
      this.store.stage((next) => {
        requests.notice = { text, refusal: answer === 'deny', requester: request.requester };
        next.announcement = text;
        next.focusAfterRender = focus;
      });
    } catch (error) {
      this.failed(error, 'Réponse impossible.');
    } finally {
      this.store.update(() => {
        requests.busy = null;
      });
    }
  }

  /**
   * The next request where the user answered: in "Demandes", the one that took the answered one's
   * place; beside an agent's editor, that agent's next one, else the editor's title.
   */
  private focusAfterAnswer(index: number, requester: string): string {
    const { pending } = this.state.requests;
    if (this.state.requestsOpen) {
      const next = pending[Math.min(index, pending.length - 1)];
      return next === undefined ? 'requests-title' : `approve-once-${domKey(next.id)}`;
    }
    const own = pending.find((entry) => entry.requester === requester);
    return own === undefined ? 'editor-title' : `approve-once-${domKey(own.id)}`;
  }

  /** "Retirer": the grant stops allowing on the next call. */
  async revoke(grantId: string): Promise<void> {
    const state = this.state;
    const requests = state.requests;
    const project = state.projectId;
    const grant = requests.grants.find((entry) => entry.id === grantId);
    if (!canAnswer(this.state) || requests.busy !== null || project === null || grant === undefined) return;
    this.store.update(() => {
      requests.busy = grantId;
      requests.problem = null;
      requests.notice = null;
    });
    try {
      await this.api.revokeGrant(project, grantId);
      const index = requests.grants.findIndex((entry) => entry.id === grantId);
      const left = requests.grants.filter((entry) => entry.id !== grantId);
      const text = `Accord temporaire de ${agentName(this.state, grant.requester)} retiré : ${grant.tools.join(', ')} n\u2019est plus autorisé par cet accord.`;
      const next = left[Math.min(index, left.length - 1)];
      this.store.stage((state) => {
        requests.grants = left;
        requests.notice = { text, refusal: false, requester: grant.requester };
        state.announcement = text;
        state.focusAfterRender = next === undefined ? 'grants-title' : `revoke-${domKey(next.id)}`;
      });
    } catch (error) {
      this.failed(error, 'Retrait impossible.');
    } finally {
      this.store.update(() => {
        requests.busy = null;
      });
    }
  }

  private failed(error: unknown, prefix: string): void {
    const failure = asApiError(error);
    const french = frenchError(failure);
    if (failure.code === 'approval_closed' || failure.status === 404) {
      this.store.stage((state) => {
        state.requests.problem = {
          message:
            'Cette demande ou cet accord n\u2019existe plus (expiré, ou quelqu\u2019un y a déjà répondu) : la liste est mise à jour.',
          detail: french.detail,
        };
        state.focusAfterRender = 'requests-title';
      });
      void this.refresh();
      return;
    }
    this.store.stage((state) => {
      state.requests.problem = { message: `${prefix} ${french.message}`, detail: french.detail };
      if (failure.status === 401) {
        state.role = null;
        openTokenForm(state, 'Le service a refusé ce jeton pour répondre : saisissez le jeton administrateur.');
      }
    });
  }
}
