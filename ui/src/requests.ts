/**
 * The "Demandes" tab's logic (docs/api.md §11): the pending approval requests and the temporary
 * grants of the open project, kept current from the live `approval` events, and the user's answers
 * (admin token only: an agent must never approve itself).
 */
import type { ApprovalEvent } from '../../schemas/events.js';
import type { Approval, ApprovalAnswer, Grant } from '../../schemas/approvals.js';
import { asApiError } from './api.js';
import { frenchError } from './errors-fr.js';
import type { Panel } from './panel.js';
import { emptyRequests } from './state.js';

/** The durations of "Autoriser pendant…". */
export const GRANT_DURATIONS: readonly { seconds: number; label: string; spoken: string }[] = [
  { seconds: 15 * 60, label: '15 min', spoken: '15 minutes' },
  { seconds: 60 * 60, label: '1 h', spoken: '1 heure' },
  { seconds: 8 * 60 * 60, label: '8 h', spoken: '8 heures' },
];

/** Events of a burst are answered with one read. */
const GATHER_MS = 40;

/** A DOM id suffix for a request or grant id. */
export function domKey(id: string): string {
  return encodeURIComponent(id).replace(/%/g, '_');
}

/** What an answer did, in French ("Demande de QA pour idea_memory_write autorisée une fois."). */
export function answeredText(agent: string, tool: string, answer: ApprovalAnswer, ttlSeconds?: number): string {
  const what = `Demande de ${agent} pour ${tool}`;
  if (answer === 'once') return `${what} autorisée une fois.`;
  if (answer === 'deny') return `${what} refusée.`;
  if (answer === 'always') return `${what} autorisée : ${tool} ajouté aux tools autorisés de ${agent}.`;
  const duration = GRANT_DURATIONS.find((entry) => entry.seconds === ttlSeconds)?.spoken ?? `${ttlSeconds ?? 0} secondes`;
  return `${what} autorisée pendant ${duration}.`;
}

export class Requests {
  private reading: Promise<void> | null = null;
  private readAgain = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly panel: Panel) {}

  /** Answering and revoking need the admin token (the decide token only reads). */
  canAnswer(): boolean {
    const { token, role } = this.panel.state;
    return token !== null && role === 'admin';
  }

  /** The open project changed: its lists are read again; the old project's pending ones are remembered. */
  switchProject(previous: string | null): void {
    const requests = this.panel.state.requests;
    const elsewhere = requests.elsewhere;
    if (previous !== null && requests.pending.length > 0) elsewhere.set(previous, new Set(requests.pending.map((entry) => entry.id)));
    this.panel.state.requests = emptyRequests(elsewhere);
  }

  /** Reads the pending requests and the grants of the open project (one read at a time). */
  refresh(): Promise<void> {
    if (this.reading !== null) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = null;
      if (this.readAgain) {
        this.readAgain = false;
        void this.refresh();
      }
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    const { state } = this.panel;
    const project = state.projectId;
    if (project === null) return;
    try {
      const [approvals, grants] = await Promise.all([this.panel.api.approvals(project), this.panel.api.grants(project)]);
      if (state.projectId !== project) return;
      const requests = state.requests;
      const pending = approvals.approvals.filter((entry) => entry.status === 'pending');
      if (requests.loaded) this.announceNew(requests.pending, pending);
      requests.pending = pending;
      requests.grants = grants.grants;
      requests.loaded = true;
      requests.loadError = null;
      requests.unsupported = false;
      requests.elsewhere.delete(project);
      if (requests.durationsFor !== null && !pending.some((entry) => entry.id === requests.durationsFor)) requests.durationsFor = null;
    } catch (error) {
      if (state.projectId !== project) return;
      const failure = asApiError(error);
      if (failure.status === 404 && failure.code !== 'unknown_project') state.requests.unsupported = true;
      else state.requests.loadError = frenchError(failure);
    } finally {
      this.panel.changed();
    }
  }

  private announceNew(before: readonly Approval[], after: readonly Approval[]): void {
    const known = new Set(before.map((entry) => entry.id));
    const fresh = after.filter((entry) => !known.has(entry.id));
    const [first] = fresh;
    if (first === undefined) return;
    const where = this.panel.state.tab === 'requests' ? '' : ' (onglet Demandes)';
    this.panel.state.announcement =
      fresh.length === 1
        ? `Nouvelle demande : ${this.agentName(first.requester)} veut appeler ${first.tool}${where}.`
        : `${fresh.length} nouvelles demandes d\u2019approbation${where}.`;
  }

  /** An `approval` event: the open project's lists are read again; another project's are counted. */
  onEvent(event: ApprovalEvent): void {
    const { state } = this.panel;
    if (event.project === state.projectId) {
      if (this.timer !== null) return;
      this.timer = setTimeout(() => {
        this.timer = null;
        void this.refresh();
      }, GATHER_MS);
      return;
    }
    const ids = state.requests.elsewhere.get(event.project) ?? new Set<string>();
    if (event.status === 'pending') {
      if (!ids.has(event.id)) state.announcement = `Nouvelle demande d\u2019approbation dans le projet « ${event.project} ».`;
      ids.add(event.id);
    } else {
      ids.delete(event.id);
    }
    if (ids.size > 0) state.requests.elsewhere.set(event.project, ids);
    else state.requests.elsewhere.delete(event.project);
    this.panel.changed();
  }

  agentName(agentId: string): string {
    return this.panel.targetName({ kind: 'agent', agentId });
  }

  /** The live grant that lets `agentId` call `tool`, if any. */
  grantFor(agentId: string, tool: string): Grant | undefined {
    const now = Date.now();
    return this.panel.state.requests.grants.find(
      (grant) => grant.requester === agentId && grant.tools.includes(tool) && Date.parse(grant.expiresAt) > now,
    );
  }

  showDurations(id: string | null): void {
    const requests = this.panel.state.requests;
    const closing = requests.durationsFor;
    requests.durationsFor = id;
    this.panel.state.focusAfterRender =
      id === null
        ? closing === null
          ? null
          : `approve-for-${domKey(closing)}`
        : `approve-for-${domKey(id)}-${GRANT_DURATIONS[0]?.seconds ?? 0}`;
    this.panel.changed();
  }

  async answer(id: string, answer: ApprovalAnswer, ttlSeconds?: number): Promise<void> {
    const { state } = this.panel;
    const requests = state.requests;
    const project = state.projectId;
    const request = requests.pending.find((entry) => entry.id === id);
    if (!this.canAnswer() || requests.busy !== null || project === null || request === undefined) return;
    requests.busy = id;
    requests.problem = null;
    requests.notice = null;
    requests.durationsFor = null;
    this.panel.changed();
    try {
      const result = await this.panel.api.answerApproval(project, id, answer, ttlSeconds);
      const index = requests.pending.findIndex((entry) => entry.id === id);
      requests.pending = requests.pending.filter((entry) => entry.id !== id);
      const grant = result.grant;
      if (grant !== undefined) requests.grants = [grant, ...requests.grants.filter((entry) => entry.id !== grant.id)];
      // "Toujours autoriser" wrote the policy: show it now, as this page's own change.
      if (answer === 'always') await this.panel.reloadView({ own: true });
      const text = answeredText(this.agentName(request.requester), request.tool, answer, ttlSeconds);
      requests.notice = text;
      state.announcement = text;
      const next = requests.pending[Math.min(index, requests.pending.length - 1)];
      state.focusAfterRender = next === undefined ? 'requests-title' : `approve-once-${domKey(next.id)}`;
    } catch (error) {
      this.failed(error, 'Réponse impossible.');
    } finally {
      requests.busy = null;
      this.panel.changed();
    }
  }

  /** "Retirer": the grant stops allowing on the next call. */
  async revoke(grantId: string): Promise<void> {
    const { state } = this.panel;
    const requests = state.requests;
    const project = state.projectId;
    const grant = requests.grants.find((entry) => entry.id === grantId);
    if (!this.canAnswer() || requests.busy !== null || project === null || grant === undefined) return;
    requests.busy = grantId;
    requests.problem = null;
    requests.notice = null;
    this.panel.changed();
    try {
      await this.panel.api.revokeGrant(project, grantId);
      const index = requests.grants.findIndex((entry) => entry.id === grantId);
      requests.grants = requests.grants.filter((entry) => entry.id !== grantId);
      const text = `Accord temporaire de ${this.agentName(grant.requester)} retiré : ${grant.tools.join(', ')} n\u2019est plus autorisé par cet accord.`;
      requests.notice = text;
      state.announcement = text;
      const next = requests.grants[Math.min(index, requests.grants.length - 1)];
      state.focusAfterRender = next === undefined ? 'grants-title' : `revoke-${domKey(next.id)}`;
    } catch (error) {
      this.failed(error, 'Retrait impossible.');
    } finally {
      requests.busy = null;
      this.panel.changed();
    }
  }

  private failed(error: unknown, prefix: string): void {
    const { state } = this.panel;
    const failure = asApiError(error);
    const french = frenchError(failure);
    if (failure.code === 'approval_closed' || failure.status === 404) {
      state.requests.problem = {
        message: 'Cette demande ou cet accord n\u2019existe plus (expiré, ou quelqu\u2019un y a déjà répondu) : la liste est mise à jour.',
        detail: french.detail,
      };
      state.focusAfterRender = 'requests-title';
      void this.refresh();
      return;
    }
    state.requests.problem = { message: `${prefix} ${french.message}`, detail: french.detail };
    if (failure.status === 401) {
      state.role = null;
      this.panel.openTokenForm('Le service a refusé ce jeton pour répondre : saisissez le jeton administrateur.');
    }
  }
}
