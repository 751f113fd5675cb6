/**
 * The panel's core: loading, navigation (guarded by the draft), the token, and what the views
 * derive from the state. Draft edits live in {@link Editing}, writes in {@link Writes}. Every
 * method updates the state and asks for a re-render.
 */
import { overrideRefusal } from './agent-names.js';
import { ApiError, asApiError, type PanelView, type PermissionsApi, type VersionedView } from './api.js';
import { basisOf, conflictSides, sameBasis } from './draft-rebase.js';
import { Editing } from './editing.js';
import { frenchError } from './errors-fr.js';
import { LiveSync } from './live-sync.js';
import { Requests } from './requests.js';
import {
  DEFAULT_TARGET,
  findAgent,
  groupOpenByDefault,
  sameTarget,
  savedTarget,
  targetId,
  type SavedTarget,
  type TargetKey,
} from './model.js';
import { initialState, type PanelState, type Tab } from './state.js';
import type { TokenStore } from './token.js';
import { Writes } from './writes.js';

export class Panel {
  readonly state: PanelState;
  readonly edit: Editing;
  readonly writes: Writes;
  readonly live: LiveSync;
  readonly requests: Requests;

  constructor(
    readonly api: PermissionsApi,
    private readonly tokens: TokenStore,
    private readonly onChange: () => void,
  ) {
    this.state = initialState(tokens.get());
    this.edit = new Editing(this);
    this.writes = new Writes(this);
    this.live = new LiveSync(this, api.eventsUrl());
    this.requests = new Requests(this);
  }

  /** Asks for a re-render (coalesced by the caller). */
  changed(): void {
    this.onChange();
  }

  // ------------------------------------------------------------------ derived state

  /** The saved state of the selected target (undefined while loading or if it vanished). */
  saved(): SavedTarget | undefined {
    return this.state.view === null ? undefined : savedTarget(this.state.view, this.state.target);
  }

  /** The allowlist the editor shows: the draft if there is one, else the saved state. */
  shownAllowed(): Set<string> {
    const draft = this.state.draft;
    if (draft !== null && sameTarget(draft.target, this.state.target)) return draft.allowed;
    return this.saved()?.allowed ?? new Set();
  }

  /** The tools on ask the editor shows: the draft's if there is one, else the saved state's. */
  shownAsk(): Set<string> {
    const draft = this.state.draft;
    if (draft !== null && sameTarget(draft.target, this.state.target)) return draft.ask;
    return this.saved()?.ask ?? new Set();
  }

  /** Whether the shown target is (or is about to be) its own allowlist rather than inherited. */
  overriding(): boolean {
    const draft = this.state.draft;
    // A draft of an agent is always an override, even when its saved override was deleted elsewhere.
    const drafted = draft !== null && draft.target.kind === 'agent' && sameTarget(draft.target, this.state.target);
    return (this.saved()?.overriding ?? false) || drafted;
  }

  /** The policy can be changed now: admin token checked, a valid file, and data that is not stale. */
  canWrite(): boolean {
    const { token, role, view, loadError } = this.state;
    return token !== null && role === 'admin' && view !== null && view.status === 'ok' && loadError === null;
  }

  /** Why the selected agent cannot get an override (a misleading id), or null. */
  overrideRefusal(): string | null {
    const target = this.state.target;
    return target.kind === 'agent' ? overrideRefusal(target.agentId) : null;
  }

  /** Checkboxes appear only here: an agent that inherits is read-only until "Créer un override". */
  editable(): boolean {
    if (!this.canWrite() || this.saved() === undefined) return false;
    return this.state.target.kind === 'default' || this.overriding();
  }

  dirty(): boolean {
    return this.state.draft !== null;
  }

  /** The data shown is from an earlier load that the last reload could not refresh. */
  stale(): boolean {
    return this.state.view !== null && this.state.loadError !== null;
  }

  groupOpen(groupId: string, access: 'read' | 'write'): boolean {
    const key = `${targetId(this.state.target)}|${groupId}`;
    return this.state.openGroups.get(key) ?? groupOpenByDefault(this.state.target, access);
  }

  defaultAllowed(): Set<string> {
    return new Set(this.state.view?.projectDefault.allowedTools ?? []);
  }

  defaultAsk(): Set<string> {
    return new Set(this.state.view?.projectDefault.askTools ?? []);
  }

  targetName(target: TargetKey): string {
    if (target.kind === 'default') return 'Défaut projet';
    const agent = this.state.view === null ? undefined : findAgent(this.state.view, target.agentId);
    return agent?.name ?? target.agentId;
  }

  /** The DOM id of a target's button in the target column. */
  targetButtonId(target: TargetKey): string {
    return target.kind === 'default' ? 'target-default' : `target-agent-${encodeURIComponent(target.agentId)}`;
  }

  // ------------------------------------------------------------------ loading

  /**
   * Checks the token of the session, then loads the catalog (once), the projects and the
   * permissions of the selected project. A draft of the same project is kept (see {@link adoptView}).
   * `live`: the load follows a live event rather than a click; `own`: it follows a write this page
   * made outside the editor ("Toujours autoriser"), which is not news from elsewhere.
   */
  async load(projectId?: string, { live = false, own = false }: { live?: boolean; own?: boolean } = {}): Promise<void> {
    const state = this.state;
    state.loading = true;
    state.loadError = null;
    if (!live) state.liveNotice = null;
    this.onChange();
    try {
      await this.checkSessionToken();
      state.catalog ??= await this.api.catalog();
      const projects = (await this.api.projects()).projects;
      const ids = projects.map((project) => project.id);
      const shown = state.projectId;
      if (projectId === undefined && shown !== null && !ids.includes(shown) && state.view !== null) {
        // A draft of a project that is gone cannot be saved, but it is not thrown away unasked either.
        if (this.dirty()) throw new ApiError(404, 'unknown_project', `project ${shown} is no longer served`);
        state.liveNotice =
          `Le projet « ${shown} » n\u2019est plus servi par ce service (dossier supprimé ou déplacé).` +
          (ids[0] === undefined ? '' : ` Projet « ${ids[0]} » affiché.`);
        state.announcement = state.liveNotice;
      }
      state.projects = projects;
      const wanted = projectId ?? state.projectId;
      const chosen = wanted !== null && ids.includes(wanted) ? wanted : (ids[0] ?? null);
      if (chosen !== state.projectId) {
        state.target = DEFAULT_TARGET;
        this.clearEditing();
        this.requests.switchProject(state.projectId);
      }
      const sameProject = chosen === state.projectId;
      const before = state.revision;
      state.projectId = chosen;
      if (chosen === null) {
        state.view = null;
        state.revision = null;
      } else {
        const fresh = await this.api.permissions(chosen);
        this.adoptView(fresh);
        if (sameProject && before !== null && fresh.revision !== before && !own) this.changedElsewhere();
        // Not awaited: the requests have their own errors and never hold the view back.
        void this.requests.refresh();
      }
    } catch (error) {
      state.loadError = asApiError(error);
      if (state.loadError.status === 401) this.openTokenForm('Un jeton est nécessaire pour lire les permissions de ce service.');
    } finally {
      state.loading = false;
      this.onChange();
      this.live.settled();
    }
  }

  /**
   * Reloads the view and keeps the draft: the hook for "the policy changed" (Actualiser, and the
   * live events of `GET /events`). The draft is re-applied when the change does not touch it, else
   * both sides are shown.
   */
  reloadView(options: { live?: boolean; own?: boolean } = {}): Promise<void> {
    return this.load(undefined, options);
  }

  /** The open project got a new revision that this page did not write: say so where it matters. */
  private changedElsewhere(): void {
    const state = this.state;
    if (state.repair !== null) {
      // Never write a repair over a file the user has not seen.
      const kind = state.repair.kind;
      state.repair = null;
      state.problem = {
        kind: 'error',
        message: 'Le fichier a changé pendant que vous choisissiez sa réparation : rien n\u2019a été écrit. Vérifiez son état actuel.',
        detail: null,
      };
      if (state.view?.status === 'invalid') state.focusAfterRender = `repair-${kind}`;
    }
    if (state.draft === null) {
      state.drift = null;
      state.announcement = 'Permissions mises à jour : la policy a été modifiée ailleurs.';
      return;
    }
    if (state.view?.status !== 'ok' || state.conflict !== null) {
      state.drift = null; // the repair view or the conflict says it, with the choices
      return;
    }
    state.drift =
      'La policy a été modifiée ailleurs pendant votre édition (fichier ou API). Vos modifications sont conservées : ce changement ne touche pas « ' +
      this.targetName(state.draft.target) +
      ' », elles seront enregistrées sur la version actuelle.';
    state.announcement = state.drift;
  }

  /** Takes a newer view; an open draft is re-based on it or turned into a conflict. */
  adoptView(result: VersionedView): void {
    this.applyView(result);
    this.reconcileDraft(result.view);
  }

  /** Takes a newer view without looking at the draft (the writes do their own reconciliation). */
  applyView(result: VersionedView): void {
    this.state.view = result.view;
    this.state.revision = result.revision;
    const target = this.state.target;
    if (target.kind === 'agent' && findAgent(result.view, target.agentId) === undefined && this.state.draft === null) {
      this.state.target = DEFAULT_TARGET;
    }
  }

  private reconcileDraft(view: PanelView): void {
    const { draft, catalog } = this.state;
    if (draft === null || catalog === null || view.status !== 'ok') return;
    const after = basisOf(view, draft.target, draft.createsOverride);
    if (sameBasis(draft.base, after)) {
      draft.base = after;
      this.state.conflict = null;
      return;
    }
    const fromSave = this.state.conflict?.fromSave ?? false;
    this.state.conflict = {
      target: draft.target,
      sides: conflictSides(catalog, draft.target, draft.base, after, { allowed: [...draft.allowed], ask: [...draft.ask] }),
      after,
      fromSave,
    };
  }

  clearEditing(): void {
    const state = this.state;
    state.draft = null;
    state.confirmation = null;
    state.problem = null;
    state.pendingSwitch = null;
    state.conflict = null;
    state.repair = null;
    state.undo = null;
    state.drift = null;
  }

  // ------------------------------------------------------------------ navigation (guarded by the draft)

  /** Runs `proceed` now, or after the user agrees to abandon the unsaved draft. */
  guard(message: string, proceed: () => void): void {
    if (!this.dirty()) {
      proceed();
      return;
    }
    this.state.pendingSwitch = {
      message,
      proceed: () => {
        this.clearEditing();
        proceed();
      },
    };
    this.state.focusAfterRender = 'switch-stay';
    this.onChange();
  }

  confirmSwitch(): void {
    const pending = this.state.pendingSwitch;
    this.state.pendingSwitch = null;
    pending?.proceed();
    this.focusTarget();
    this.onChange();
  }

  cancelSwitch(): void {
    this.state.pendingSwitch = null;
    this.focusTarget();
    this.onChange();
  }

  /** Focus back on the selected target's button. */
  focusTarget(): void {
    this.state.focusAfterRender = this.targetButtonId(this.state.target);
  }

  selectTarget(target: TargetKey): void {
    if (sameTarget(target, this.state.target)) return;
    this.guard(this.abandonMessage(), () => {
      this.state.target = target;
      this.state.problem = null;
      this.state.confirmation = null;
      this.state.undo = null;
      this.onChange();
    });
  }

  selectProject(projectId: string): void {
    if (projectId === this.state.projectId) return;
    this.guard(this.abandonMessage(), () => void this.load(projectId));
  }

  abandonMessage(): string {
    const draft = this.state.draft;
    return `Modifications non enregistrées pour « ${this.targetName(draft?.target ?? this.state.target)} ». Les abandonner ?`;
  }

  setTab(tab: Tab): void {
    this.state.tab = tab;
    // Grants created or revoked elsewhere send no event: the tab is read again when it opens.
    if (tab === 'requests') void this.requests.refresh();
    this.onChange();
  }

  /** "Voir les demandes": the Demandes tab, focus on its list. */
  openRequests(): void {
    this.state.focusAfterRender = 'requests-title';
    this.setTab('requests');
  }

  toggleGroup(groupId: string, access: 'read' | 'write'): void {
    this.state.openGroups.set(`${targetId(this.state.target)}|${groupId}`, !this.groupOpen(groupId, access));
    this.onChange();
  }

  // ------------------------------------------------------------------ token

  /** A stored token is checked once per page (a restarted service may have another one). */
  private async checkSessionToken(): Promise<void> {
    const token = this.state.token;
    if (token === null || this.state.role !== null) return;
    try {
      this.state.role = await this.api.whoami(token);
    } catch (error) {
      const failure = asApiError(error);
      if (failure.status !== 401) throw failure;
      this.tokens.clear();
      this.state.token = null;
      this.openTokenForm('Le jeton gardé pour cette session n\u2019est plus accepté par le service (redémarré avec un autre jeton ?).');
    }
  }

  /** Checks a token with the service before keeping it; a refused token keeps the form open. */
  async submitToken(value: string, origin: 'form' | 'address' = 'form', loadAfter = true): Promise<boolean> {
    const token = value.trim();
    if (token === '' || this.state.tokenForm.checking) return false;
    const form = this.state.tokenForm;
    this.state.tokenForm = { ...form, checking: true, error: null };
    this.onChange();
    try {
      const role = await this.api.whoami(token);
      if (role === 'anonymous') throw new Error('anonymous');
      this.tokens.set(token);
      this.state.token = token;
      this.state.role = role;
      this.state.tokenForm = { open: false, reason: null, checking: false, error: null };
      this.live.restart();
      this.state.announcement =
        role === 'admin' ? 'Jeton administrateur vérifié.' : 'Jeton de lecture vérifié : modifications impossibles.';
      if (this.state.problem?.kind === 'auth') this.state.problem = null;
      this.focusTarget();
      if (loadAfter && (this.state.view === null || this.state.loadError !== null)) await this.load();
      return true;
    } catch (error) {
      const failure = asApiError(error);
      const refused = failure.status === 401 || failure.code === 'client_error';
      this.state.tokenForm = {
        open: true,
        reason: origin === 'address' ? 'Le jeton donné dans l\u2019adresse de la page n\u2019a pas pu être utilisé.' : form.reason,
        checking: false,
        error: refused
          ? {
              message: 'Jeton refusé par le service : vérifiez-le et recommencez.',
              detail: failure.status === 401 ? frenchError(failure).detail : null,
            }
          : { message: `Vérification du jeton impossible. ${frenchError(failure).message}`, detail: frenchError(failure).detail },
      };
      this.state.focusAfterRender = 'token-input';
      return false;
    } finally {
      this.onChange();
    }
  }

  forgetToken(): void {
    this.guard(this.abandonMessage(), () => {
      this.tokens.clear();
      this.state.token = null;
      this.state.role = null;
      this.live.restart();
      this.state.focusAfterRender = 'token-open';
      this.onChange();
    });
  }

  openTokenForm(reason: string | null = null): void {
    this.state.tokenForm = { open: true, reason, checking: false, error: null };
    this.state.focusAfterRender = 'token-input';
    this.onChange();
  }

  /** Opens the token form at start unless the user chose to go on without one this session. */
  askTokenIfNone(): void {
    if (this.state.token === null && !this.tokens.dismissed())
      this.state.tokenForm = { open: true, reason: null, checking: false, error: null };
  }

  dismissTokenForm(): void {
    this.tokens.dismiss();
    this.state.tokenForm = { open: false, reason: null, checking: false, error: null };
    this.state.focusAfterRender = this.state.token === null ? 'token-open' : 'token-forget';
    this.onChange();
  }
}
