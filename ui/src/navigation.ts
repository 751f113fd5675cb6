/**
 * Loading and navigation: the catalog, the projects and the permissions of the open project;
 * target, project and tab changes (guarded by the draft); the token. Built from the store and the
 * API; `hooks.tokenChanged` lets the composition root reconnect the live stream with a new token.
 */
import { ApiError, asApiError, type PermissionsApi } from './api.js';
import { frenchError } from './errors-fr.js';
import { DEFAULT_TARGET, sameTarget, targetId, type TargetKey } from './model.js';
import { abandonMessage, dirty, groupOpen, targetButtonId, targetName } from './selectors.js';
import { clearEditing, emptyRequests, openTokenForm, type PanelState, type Tab } from './state.js';
import type { Store } from './store.js';
import type { TokenStore } from './token.js';
import { adoptView } from './view-sync.js';

export interface NavigationHooks {
  /** The token changed (given, forgotten): the live stream reconnects with it. */
  tokenChanged(): void;
}

/** The open project changed: its request lists start empty; the old project's pending ones are remembered. */
function switchRequestsProject(state: PanelState): void {
  const requests = state.requests;
  const elsewhere = requests.elsewhere;
  if (state.projectId !== null && requests.pending.length > 0)
    elsewhere.set(state.projectId, new Set(requests.pending.map((entry) => entry.id)));
  state.requests = emptyRequests(elsewhere);
  state.denials = { loaded: false, decisions: [], loadError: null };
}

export class Navigation {
  constructor(
    private readonly store: Store,
    private readonly api: PermissionsApi,
    private readonly tokens: TokenStore,
    private readonly hooks: NavigationHooks,
  ) {}

  // ------------------------------------------------------------------ loading

  /**
   * Checks the token of the session, then loads the catalog (once), the projects and the
   * permissions of the selected project. A draft of the same project is kept (see {@link adoptView}).
   * `live`: the load follows a live event rather than a click; `own`: it follows a write this page
   * made outside the editor ("Toujours autoriser"), which is not news from elsewhere.
   */
  async load(projectId?: string, { live = false, own = false }: { live?: boolean; own?: boolean } = {}): Promise<void> {
    const state = this.store.state;
    state.loading = true;
    state.loadError = null;
    if (!live) state.liveNotice = null;
    this.store.changed();
    try {
      await this.checkSessionToken();
      state.catalog ??= await this.api.catalog();
      const projects = (await this.api.projects()).projects;
      const ids = projects.map((project) => project.id);
      const shown = state.projectId;
      if (projectId === undefined && shown !== null && !ids.includes(shown) && state.view !== null) {
        // A draft of a project that is gone cannot be saved, but it is not thrown away unasked either.
        if (dirty(this.store.state)) throw new ApiError(404, 'unknown_project', `project ${shown} is no longer served`);
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
        clearEditing(this.store.state);
        switchRequestsProject(state);
      }
      const sameProject = chosen === state.projectId;
      const before = state.revision;
      state.projectId = chosen;
      if (chosen === null) {
        state.view = null;
        state.revision = null;
      } else {
        const fresh = await this.api.permissions(chosen);
        adoptView(state, fresh);
        state.loadCount += 1;
        if (sameProject && before !== null && fresh.revision !== before && !own) this.changedElsewhere();
      }
    } catch (error) {
      state.loadError = asApiError(error);
      if (state.loadError.status === 401) openTokenForm(state, 'Un jeton est nécessaire pour lire les permissions de ce service.');
    } finally {
      state.loading = false;
      this.store.changed();
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
    const state = this.store.state;
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
      targetName(state, state.draft.target) +
      ' », elles seront enregistrées sur la version actuelle.';
    state.announcement = state.drift;
  }

  // ------------------------------------------------------------------ navigation (guarded by the draft)

  /** Runs `proceed` now, or after the user agrees to abandon the unsaved draft. */
  confirmDiscardDraft(message: string, proceed: () => void): void {
    if (!dirty(this.store.state)) {
      proceed();
      return;
    }
    this.store.state.pendingSwitch = {
      message,
      proceed: () => {
        clearEditing(this.store.state);
        proceed();
      },
    };
    this.store.state.focusAfterRender = 'switch-stay';
    this.store.changed();
  }

  confirmSwitch(): void {
    const pending = this.store.state.pendingSwitch;
    this.store.state.pendingSwitch = null;
    pending?.proceed();
    this.focusTarget();
    this.store.changed();
  }

  cancelSwitch(): void {
    this.store.state.pendingSwitch = null;
    this.focusTarget();
    this.store.changed();
  }

  /** Focus back on the selected target's button. */
  focusTarget(): void {
    this.store.state.focusAfterRender = targetButtonId(this.store.state.target);
  }

  selectTarget(target: TargetKey): void {
    if (sameTarget(target, this.store.state.target)) return;
    this.store.state.requestsOpen = false;
    this.confirmDiscardDraft(abandonMessage(this.store.state), () => {
      this.store.state.target = target;
      this.store.state.problem = null;
      this.store.state.confirmation = null;
      this.store.state.undo = null;
      this.store.changed();
    });
  }

  selectProject(projectId: string): void {
    if (projectId === this.store.state.projectId) return;
    this.confirmDiscardDraft(abandonMessage(this.store.state), () => void this.load(projectId));
  }

  setTab(tab: Tab): void {
    this.store.state.tab = tab;
    this.store.state.requestsOpen = false;
    this.store.changed();
  }

  /** The header's "Demandes" button: requests and grants in the right column (the targets stay), or back to the editor. */
  showRequests(open: boolean): void {
    const state = this.store.state;
    state.requestsOpen = open;
    state.tab = 'mcp';
    state.focusAfterRender = open ? 'requests-title' : 'editor-title';
    this.store.changed();
  }

  toggleGroup(groupId: string, access: 'read' | 'write'): void {
    this.store.state.openGroups.set(`${targetId(this.store.state.target)}|${groupId}`, !groupOpen(this.store.state, groupId, access));
    this.store.changed();
  }

  // ------------------------------------------------------------------ token

  /** A stored token is checked once per page (a restarted service may have another one). */
  private async checkSessionToken(): Promise<void> {
    const token = this.store.state.token;
    if (token === null || this.store.state.role !== null) return;
    try {
      this.store.state.role = await this.api.whoami(token);
    } catch (error) {
      const failure = asApiError(error);
      if (failure.status !== 401) throw failure;
      this.tokens.clear();
      this.store.state.token = null;
      openTokenForm(
        this.store.state,
        'Le jeton gardé pour cette session n\u2019est plus accepté par le service (redémarré avec un autre jeton ?).',
      );
    }
  }

  /** Checks a token with the service before keeping it; a refused token keeps the form open. */
  async submitToken(value: string, origin: 'form' | 'address' = 'form', loadAfter = true): Promise<boolean> {
    const token = value.trim();
    if (token === '' || this.store.state.tokenForm.checking) return false;
    const form = this.store.state.tokenForm;
    this.store.state.tokenForm = { ...form, checking: true, error: null };
    this.store.changed();
    try {
      const role = await this.api.whoami(token);
      if (role === 'anonymous') throw new Error('anonymous');
      this.tokens.set(token);
      this.store.state.token = token;
      this.store.state.role = role;
      this.store.state.tokenForm = { open: false, reason: null, checking: false, error: null };
      this.hooks.tokenChanged();
      this.store.state.announcement =
        role === 'admin' ? 'Jeton administrateur vérifié.' : 'Jeton de lecture vérifié : modifications impossibles.';
      if (this.store.state.problem?.kind === 'auth') this.store.state.problem = null;
      this.focusTarget();
      if (loadAfter && (this.store.state.view === null || this.store.state.loadError !== null)) await this.load();
      return true;
    } catch (error) {
      const failure = asApiError(error);
      const refused = failure.status === 401 || failure.code === 'client_error';
      this.store.state.tokenForm = {
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
      this.store.state.focusAfterRender = 'token-input';
      return false;
    } finally {
      this.store.changed();
    }
  }

  /** Closes the notice of a change the live events made (the open project gone). */
  closeLiveNotice(): void {
    this.store.state.liveNotice = null;
    this.store.state.focusAfterRender = 'refresh';
    this.store.changed();
  }

  forgetToken(): void {
    this.confirmDiscardDraft(abandonMessage(this.store.state), () => {
      this.tokens.clear();
      this.store.state.token = null;
      this.store.state.role = null;
      this.hooks.tokenChanged();
      this.store.state.focusAfterRender = 'token-open';
      this.store.changed();
    });
  }

  openTokenForm(reason: string | null = null): void {
    openTokenForm(this.store.state, reason);
    this.store.changed();
  }

  /** Opens the token form at start unless the user chose to go on without one this session. */
  askTokenIfNone(): void {
    if (this.store.state.token === null && !this.tokens.dismissed())
      this.store.state.tokenForm = { open: true, reason: null, checking: false, error: null };
  }

  dismissTokenForm(): void {
    this.tokens.dismiss();
    this.store.state.tokenForm = { open: false, reason: null, checking: false, error: null };
    this.store.state.focusAfterRender = this.store.state.token === null ? 'token-open' : 'token-forget';
    this.store.changed();
  }
}
