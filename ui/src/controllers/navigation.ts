/**
 * Loading and navigation: the catalog, the projects and the permissions of the open project;
 * target, project and tab changes (guarded by the draft); the token. Built from the store and the
 * API; `hooks.tokenChanged` lets the composition root reconnect the live stream with a new token.
 */
import { ApiError, asApiError, type PermissionsApi } from '../api/api.js';
import { frenchError } from '../model/errors-fr.js';
import { DEFAULT_TARGET, sameTarget, targetId, type TargetKey } from '../model/model.js';
import { abandonMessage, dirty, groupOpen, targetButtonId, targetName } from '../state/selectors.js';
import { emptyServers } from '../model/servers-model.js';
import { clearEditing, emptyRequests, openTokenForm, type PanelState, type Tab } from '../state/state.js';
import type { Store } from '../state/store.js';
import type { TokenStore } from '../api/token.js';
import { adoptView } from '../state/view-sync.js';

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
  state.servers = emptyServers();
}

/** The open project got a new revision that this page did not write: say so where it matters. */
function noteChangedElsewhere(state: PanelState): void {
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

/** Focus back on the selected target's button. */
function focusTarget(state: PanelState): void {
  state.focusAfterRender = targetButtonId(state.target);
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
   * made outside the editor ("Toujours autoriser"), which is not news from elsewhere. The steps
   * are staged and the page drawn twice: loading, then loaded.
   */
  async load(projectId?: string, { live = false, own = false }: { live?: boolean; own?: boolean } = {}): Promise<void> {
    const state = this.store.state;
    this.store.update((next) => {
      next.loading = true;
      next.loadError = null;
      if (!live) next.liveNotice = null;
    });
    try {
      await this.checkSessionToken();
      if (state.catalog === null) {
        const catalog = await this.api.catalog();
        this.store.stage((next) => {
          next.catalog = catalog;
        });
      }
      const projects = (await this.api.projects()).projects;
      const ids = projects.map((project) => project.id);
      const shown = state.projectId;
      if (projectId === undefined && shown !== null && !ids.includes(shown) && state.view !== null) {
        // A draft of a project that is gone cannot be saved, but it is not thrown away unasked either.
        if (dirty(state)) throw new ApiError(404, 'unknown_project', `project ${shown} is no longer served`);
        this.store.stage((next) => {
          next.liveNotice =
            `Le projet « ${shown} » n\u2019est plus servi par ce service (dossier supprimé ou déplacé).` +
            (ids[0] === undefined ? '' : ` Projet « ${ids[0]} » affiché.`);
          next.announcement = next.liveNotice;
        });
      }
      const wanted = projectId ?? state.projectId;
      const chosen = wanted !== null && ids.includes(wanted) ? wanted : (ids[0] ?? null);
      const sameProject = chosen === state.projectId;
      const before = state.revision;
      this.store.stage((next) => {
        next.projects = projects;
        if (!sameProject) {
          next.target = DEFAULT_TARGET;
          clearEditing(next);
          switchRequestsProject(next);
        }
        next.projectId = chosen;
        if (chosen === null) {
          next.view = null;
          next.revision = null;
        }
      });
      if (chosen !== null) {
        // The project's catalog holds its servers' tools, and changes with .ideai/mcp-servers.json: read with every view.
        const [fresh, catalog] = await Promise.all([this.api.permissions(chosen), this.api.projectCatalog(chosen)]);
        this.store.stage((next) => {
          next.catalog = catalog;
          adoptView(next, fresh);
          next.loadCount += 1;
          if (sameProject && before !== null && fresh.revision !== before && !own) noteChangedElsewhere(next);
        });
      }
    } catch (error) {
      const failure = asApiError(error);
      this.store.stage((next) => {
        next.loadError = failure;
        if (failure.status === 401) openTokenForm(next, 'Un jeton est nécessaire pour lire les permissions de ce service.');
      });
    } finally {
      this.store.update((next) => {
        next.loading = false;
      });
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

  // ------------------------------------------------------------------ navigation (guarded by the draft)

  /** Runs `proceed` now, or after the user agrees to abandon the unsaved draft. */
  confirmDiscardDraft(message: string, proceed: () => void): void {
    if (!dirty(this.store.state)) {
      proceed();
      return;
    }
    this.store.update((state) => {
      state.pendingSwitch = {
        message,
        proceed: () => {
          this.store.stage(clearEditing);
          proceed();
        },
      };
      state.focusAfterRender = 'switch-stay';
    });
  }

  confirmSwitch(): void {
    const pending = this.store.state.pendingSwitch;
    this.store.stage((state) => {
      state.pendingSwitch = null;
    });
    pending?.proceed();
    this.store.update(focusTarget);
  }

  cancelSwitch(): void {
    this.store.update((state) => {
      state.pendingSwitch = null;
      focusTarget(state);
    });
  }

  selectTarget(target: TargetKey): void {
    if (sameTarget(target, this.store.state.target)) return;
    this.store.stage((state) => {
      state.requestsOpen = false;
    });
    this.confirmDiscardDraft(abandonMessage(this.store.state), () => {
      this.store.update((state) => {
        state.target = target;
        state.problem = null;
        state.confirmation = null;
        state.undo = null;
      });
    });
  }

  selectProject(projectId: string): void {
    if (projectId === this.store.state.projectId) return;
    this.confirmDiscardDraft(abandonMessage(this.store.state), () => void this.load(projectId));
  }

  setTab(tab: Tab): void {
    this.store.update((state) => {
      state.tab = tab;
      state.requestsOpen = false;
    });
  }

  /** The header's "Demandes" button: requests and grants in the right column (the targets stay), or back to the editor. */
  showRequests(open: boolean): void {
    this.store.update((state) => {
      state.requestsOpen = open;
      state.tab = 'mcp';
      state.focusAfterRender = open ? 'requests-title' : 'editor-title';
    });
  }

  toggleGroup(groupId: string, access: 'read' | 'write'): void {
    this.store.update((state) => {
      state.openGroups.set(`${targetId(state.target)}|${groupId}`, !groupOpen(state, groupId, access));
    });
  }

  // ------------------------------------------------------------------ token

  /** A stored token is checked once per page (a restarted service may have another one). */
  private async checkSessionToken(): Promise<void> {
    const { token, role } = this.store.state;
    if (token === null || role !== null) return;
    try {
      const checked = await this.api.whoami(token);
      this.store.stage((state) => {
        state.role = checked;
      });
    } catch (error) {
      const failure = asApiError(error);
      if (failure.status !== 401) throw failure;
      this.tokens.clear();
      this.store.stage((state) => {
        state.token = null;
        openTokenForm(state, 'Le jeton gardé pour cette session n\u2019est plus accepté par le service (redémarré avec un autre jeton ?).');
      });
    }
  }

  /** Checks a token with the service before keeping it; a refused token keeps the form open. */
  async submitToken(value: string, origin: 'form' | 'address' = 'form', loadAfter = true): Promise<boolean> {
    const token = value.trim();
    const form = this.store.state.tokenForm;
    if (token === '' || form.checking) return false;
    this.store.update((state) => {
      state.tokenForm = { ...form, checking: true, error: null };
    });
    try {
      const role = await this.api.whoami(token);
      if (role === 'anonymous') throw new Error('anonymous');
      this.tokens.set(token);
      this.store.stage((state) => {
        state.token = token;
        state.role = role;
        state.tokenForm = { open: false, reason: null, checking: false, error: null };
      });
      this.hooks.tokenChanged();
      this.store.stage((state) => {
        state.announcement = role === 'admin' ? 'Jeton administrateur vérifié.' : 'Jeton de lecture vérifié : modifications impossibles.';
        if (state.problem?.kind === 'auth') state.problem = null;
        focusTarget(state);
      });
      if (loadAfter && (this.store.state.view === null || this.store.state.loadError !== null)) await this.load();
      return true;
    } catch (error) {
      const failure = asApiError(error);
      const refused = failure.status === 401 || failure.code === 'client_error';
      this.store.stage((state) => {
        state.tokenForm = {
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
        state.focusAfterRender = 'token-input';
      });
      return false;
    } finally {
      // The steps above are staged: the page shows their outcome at once.
      this.store.changed();
    }
  }

  /** Closes the notice of a change the live events made (the open project gone). */
  closeLiveNotice(): void {
    this.store.update((state) => {
      state.liveNotice = null;
      state.focusAfterRender = 'refresh';
    });
  }

  forgetToken(): void {
    this.confirmDiscardDraft(abandonMessage(this.store.state), () => {
      this.tokens.clear();
      this.store.stage((state) => {
        state.token = null;
        state.role = null;
      });
      this.hooks.tokenChanged();
      this.store.update((state) => {
        state.focusAfterRender = 'token-open';
      });
    });
  }

  openTokenForm(reason: string | null = null): void {
    this.store.update((state) => {
      openTokenForm(state, reason);
    });
  }

  /** Opens the token form at start unless the user chose to go on without one this session. */
  askTokenIfNone(): void {
    if (this.store.state.token !== null || this.tokens.dismissed()) return;
    this.store.stage((state) => {
      state.tokenForm = { open: true, reason: null, checking: false, error: null };
    });
  }

  dismissTokenForm(): void {
    this.tokens.dismiss();
    this.store.update((state) => {
      state.tokenForm = { open: false, reason: null, checking: false, error: null };
      state.focusAfterRender = state.token === null ? 'token-open' : 'token-forget';
    });
  }
}
