/**
 * The panel's state and every user action on it. Views read {@link PanelState} and call these
 * methods; each method updates the state and asks for a re-render. Saves always go through the
 * public API with `If-Match`, so a concurrent change is detected instead of overwritten.
 */
import type { CatalogResponse, PermissionsView, ProjectsResponse } from '../../schemas/api.js';
import { ApiError, type PermissionsApi, type VersionedView } from './api.js';
import {
  DEFAULT_TARGET,
  allowlistToSave,
  findAgent,
  groupOpenByDefault,
  groupTools,
  sameSet,
  sameTarget,
  savedTarget,
  targetId,
  type SavedTarget,
  type TargetKey,
} from './model.js';

export type Tab = 'mcp' | 'system';

/** Unsaved changes of one target. */
export interface Draft {
  target: TargetKey;
  allowed: Set<string>;
  /** The agent inherits today: saving creates its override even if nothing else changed. */
  createsOverride: boolean;
  /** The user asked to drop the unknown names of the saved allowlist. */
  dropsUnknown: boolean;
}

/** Write tools the user enabled on the project default, waiting for the inline confirmation. */
export interface WriteConfirmation {
  groupId: string;
  tools: string[];
}

export interface SaveProblem {
  kind: 'conflict' | 'auth' | 'error';
  message: string;
}

export interface PanelState {
  tab: Tab;
  token: string | null;
  tokenForm: { open: boolean; reason: string | null };
  catalog: CatalogResponse | null;
  projects: ProjectsResponse['projects'];
  projectId: string | null;
  view: PermissionsView | null;
  revision: string | null;
  loading: boolean;
  loadError: ApiError | null;
  target: TargetKey;
  draft: Draft | null;
  confirmation: WriteConfirmation | null;
  /** A target/project change or a refresh waiting for the user to abandon the draft. */
  pendingSwitch: { message: string; proceed: () => void } | null;
  saving: boolean;
  saveProblem: SaveProblem | null;
  /** Shows "Permissions enregistrées" until this time (ms since epoch). */
  savedUntil: number;
  /** Explicit open/closed choices per target and group (defaults come from the group's access). */
  openGroups: Map<string, boolean>;
  /** Element to focus after the next render, when the action removed the focused element. */
  focusAfterRender: string | null;
}

const TOKEN_KEY = 'idea-pdp.token';
const TOKEN_DISMISSED_KEY = 'idea-pdp.token-dismissed';
export const SAVED_FEEDBACK_MS = 2000;

export class Panel {
  readonly state: PanelState;

  constructor(
    private readonly api: PermissionsApi,
    private readonly storage: Storage,
    private readonly onChange: () => void,
  ) {
    const token = storage.getItem(TOKEN_KEY);
    this.state = {
      tab: 'mcp',
      token: token === null || token === '' ? null : token,
      tokenForm: { open: false, reason: null },
      catalog: null,
      projects: [],
      projectId: null,
      view: null,
      revision: null,
      loading: true,
      loadError: null,
      target: DEFAULT_TARGET,
      draft: null,
      confirmation: null,
      pendingSwitch: null,
      saving: false,
      saveProblem: null,
      savedUntil: 0,
      openGroups: new Map(),
      focusAfterRender: null,
    };
    // Ask for the token once per session; without it the panel is a read-only view.
    if (this.state.token === null && storage.getItem(TOKEN_DISMISSED_KEY) === null) {
      this.state.tokenForm = { open: true, reason: null };
    }
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

  /** Whether the shown target is (or is about to be) its own allowlist rather than inherited. */
  overriding(): boolean {
    return (this.saved()?.overriding ?? false) || (this.state.draft?.createsOverride ?? false);
  }

  canWrite(): boolean {
    return this.state.token !== null && this.state.view !== null && this.state.view.status === 'ok';
  }

  /** Checkboxes appear only here: an agent that inherits is read-only until "Créer un override". */
  editable(): boolean {
    if (!this.canWrite() || this.saved() === undefined) return false;
    return this.state.target.kind === 'default' || this.overriding();
  }

  dirty(): boolean {
    return this.state.draft !== null;
  }

  groupOpen(groupId: string, access: 'read' | 'write'): boolean {
    const key = `${targetId(this.state.target)}|${groupId}`;
    return this.state.openGroups.get(key) ?? groupOpenByDefault(this.state.target, access);
  }

  defaultAllowed(): Set<string> {
    return new Set(this.state.view?.projectDefault.allowedTools ?? []);
  }

  // ------------------------------------------------------------------ loading

  /** Loads the catalog (once), the projects and the permissions of the selected project. */
  async load(projectId?: string): Promise<void> {
    const state = this.state;
    state.loading = true;
    state.loadError = null;
    this.onChange();
    try {
      state.catalog ??= await this.api.catalog();
      state.projects = (await this.api.projects()).projects;
      const wanted = projectId ?? state.projectId;
      const ids = state.projects.map((project) => project.id);
      const chosen = wanted !== null && ids.includes(wanted) ? wanted : (ids[0] ?? null);
      if (chosen !== state.projectId) state.target = DEFAULT_TARGET;
      state.projectId = chosen;
      this.clearEditing();
      if (chosen === null) {
        state.view = null;
        state.revision = null;
      } else {
        this.applyView(await this.api.permissions(chosen));
      }
    } catch (error) {
      state.loadError = toApiError(error);
      if (state.loadError.status === 401) {
        state.tokenForm = { open: true, reason: 'Un jeton est nécessaire pour lire les permissions de ce service.' };
      }
    } finally {
      state.loading = false;
      this.onChange();
    }
  }

  private applyView(result: VersionedView): void {
    this.state.view = result.view;
    this.state.revision = result.revision;
    const target = this.state.target;
    if (target.kind === 'agent' && findAgent(result.view, target.agentId) === undefined) {
      this.state.target = DEFAULT_TARGET;
    }
  }

  private clearEditing(): void {
    this.state.draft = null;
    this.state.confirmation = null;
    this.state.saveProblem = null;
    this.state.pendingSwitch = null;
  }

  // ------------------------------------------------------------------ navigation (guarded by the draft)

  /** Runs `proceed` now, or after the user agrees to abandon the unsaved draft. */
  private guard(message: string, proceed: () => void): void {
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

  /** Focus back on the selected target's button (its id is the one the target list renders). */
  private focusTarget(): void {
    const target = this.state.target;
    this.state.focusAfterRender = target.kind === 'default' ? 'target-default' : `target-agent-${encodeURIComponent(target.agentId)}`;
  }

  selectTarget(target: TargetKey): void {
    if (sameTarget(target, this.state.target)) return;
    this.guard(this.abandonMessage(), () => {
      this.state.target = target;
      this.state.saveProblem = null;
      this.state.confirmation = null;
      this.onChange();
    });
  }

  selectProject(projectId: string): void {
    if (projectId === this.state.projectId) return;
    this.guard(this.abandonMessage(), () => void this.load(projectId));
  }

  refresh(): void {
    this.guard(this.abandonMessage(), () => void this.load());
  }

  private abandonMessage(): string {
    return `Modifications non enregistrées pour « ${this.targetName(this.state.target)} ». Les abandonner ?`;
  }

  targetName(target: TargetKey): string {
    if (target.kind === 'default') return 'Défaut projet';
    const agent = this.state.view === null ? undefined : findAgent(this.state.view, target.agentId);
    return agent?.name ?? target.agentId;
  }

  setTab(tab: Tab): void {
    this.state.tab = tab;
    this.onChange();
  }

  toggleGroup(groupId: string, access: 'read' | 'write'): void {
    this.state.openGroups.set(`${targetId(this.state.target)}|${groupId}`, !this.groupOpen(groupId, access));
    this.onChange();
  }

  // ------------------------------------------------------------------ editing

  createOverride(): void {
    const saved = this.saved();
    if (saved === undefined || !this.canWrite()) return;
    // The override starts from the effective state: a replacement, not a patch.
    this.state.draft = { target: this.state.target, allowed: new Set(saved.allowed), createsOverride: true, dropsUnknown: false };
    this.state.focusAfterRender = 'editor-title';
    this.onChange();
  }

  toggleTool(name: string, allowed: boolean): void {
    const tool = this.state.catalog?.tools.find((entry) => entry.name === name);
    if (tool === undefined || !this.editable()) return;
    if (allowed && this.needsConfirmation(name)) {
      this.state.confirmation = { groupId: tool.group, tools: [name] };
      this.onChange();
      return;
    }
    this.changeAllowed((next) => (allowed ? next.add(name) : next.delete(name)));
  }

  /** "Tout autoriser / Tout retirer dans ce groupe". New write grants on the default wait for confirmation. */
  setGroup(groupId: string, allowed: boolean): void {
    if (this.state.catalog === null || !this.editable()) return;
    const group = groupTools(this.state.catalog).find((entry) => entry.id === groupId);
    if (group === undefined) return;
    const names = group.tools.map((tool) => tool.name);
    const toConfirm = allowed ? names.filter((name) => !this.shownAllowed().has(name) && this.needsConfirmation(name)) : [];
    this.changeAllowed((next) => {
      for (const name of names) {
        if (!allowed) next.delete(name);
        else if (!toConfirm.includes(name)) next.add(name);
      }
    });
    if (toConfirm.length > 0) {
      this.state.confirmation = { groupId, tools: toConfirm };
      this.onChange();
    }
  }

  /** A write tool newly granted on the project default reaches every agent without an override. */
  private needsConfirmation(name: string): boolean {
    if (this.state.target.kind !== 'default') return false;
    const tool = this.state.catalog?.tools.find((entry) => entry.name === name);
    return tool?.access === 'write' && !(this.saved()?.allowed.has(name) ?? false);
  }

  confirmWriteTools(): void {
    const confirmation = this.state.confirmation;
    this.state.confirmation = null;
    if (confirmation === null) return this.onChange();
    this.state.focusAfterRender = this.confirmationFocus(confirmation);
    this.changeAllowed((next) => {
      for (const name of confirmation.tools) next.add(name);
    });
  }

  cancelWriteTools(): void {
    const confirmation = this.state.confirmation;
    this.state.confirmation = null;
    if (confirmation !== null) this.state.focusAfterRender = this.confirmationFocus(confirmation);
    this.onChange();
  }

  private confirmationFocus(confirmation: WriteConfirmation): string {
    const [only] = confirmation.tools;
    return confirmation.tools.length === 1 && only !== undefined ? `tool-${only}` : `group-toggle-${confirmation.groupId}`;
  }

  /** Asks for the unknown names to be dropped (the next save only keeps catalog tools anyway). */
  dropUnknown(): void {
    this.changeAllowed(() => undefined, true);
  }

  private changeAllowed(mutate: (next: Set<string>) => void, dropsUnknown = false): void {
    const saved = this.saved();
    if (saved === undefined) return;
    const current = this.state.draft;
    const next = new Set(this.shownAllowed());
    mutate(next);
    const draft: Draft = {
      target: this.state.target,
      allowed: next,
      createsOverride: current?.createsOverride ?? false,
      dropsUnknown: dropsUnknown || (current?.dropsUnknown ?? false),
    };
    // Back to exactly the saved state: nothing to save any more.
    const clean = !draft.createsOverride && !draft.dropsUnknown && sameSet(next, saved.allowed);
    this.state.draft = clean ? null : draft;
    this.state.saveProblem = null;
    this.onChange();
  }

  cancelDraft(): void {
    this.clearEditing();
    this.state.focusAfterRender = 'editor-title';
    this.onChange();
  }

  // ------------------------------------------------------------------ writes

  async save(): Promise<void> {
    const { catalog, projectId, revision, draft } = this.state;
    if (catalog === null || projectId === null || revision === null || draft === null || this.state.confirmation !== null) return;
    const agentId = draft.target.kind === 'agent' ? draft.target.agentId : null;
    await this.write(() => this.api.putAllowlist(projectId, agentId, allowlistToSave(catalog, draft.allowed), revision));
  }

  /** "Réinitialiser l'override" / "Supprimer l'override inutile" / back to read-only for the default. */
  async deleteOverride(): Promise<void> {
    const { projectId, revision, target } = this.state;
    if (projectId === null || revision === null || !this.canWrite()) return;
    const agentId = target.kind === 'agent' ? target.agentId : null;
    await this.write(() => this.api.deleteTarget(projectId, agentId, revision));
  }

  private async write(call: () => Promise<VersionedView>): Promise<void> {
    this.state.saving = true;
    this.state.saveProblem = null;
    this.onChange();
    try {
      this.applyView(await call());
      this.state.draft = null;
      this.state.confirmation = null;
      this.state.savedUntil = Date.now() + SAVED_FEEDBACK_MS;
      this.state.focusAfterRender = 'editor-title';
      setTimeout(() => this.onChange(), SAVED_FEEDBACK_MS + 50);
    } catch (error) {
      // The draft stays as it is: the user can fix the cause and save again.
      this.state.saveProblem = describeSaveError(toApiError(error));
      if (this.state.saveProblem.kind === 'auth') {
        this.state.tokenForm = {
          open: true,
          reason: 'Le service a refusé ce jeton pour une modification : saisissez le jeton administrateur.',
        };
      }
    } finally {
      this.state.saving = false;
      this.onChange();
    }
  }

  /** After a 412: reload the current policy (the draft is abandoned, the target kept). */
  reloadAfterConflict(): void {
    this.clearEditing();
    this.state.focusAfterRender = 'editor-title';
    void this.load();
  }

  // ------------------------------------------------------------------ token

  setToken(token: string): void {
    const trimmed = token.trim();
    if (trimmed === '') return;
    this.storage.setItem(TOKEN_KEY, trimmed);
    this.state.token = trimmed;
    this.state.tokenForm = { open: false, reason: null };
    if (this.state.saveProblem?.kind === 'auth') this.state.saveProblem = null;
    if (this.state.view === null || this.state.loadError !== null) void this.load();
    else this.onChange();
  }

  forgetToken(): void {
    this.storage.removeItem(TOKEN_KEY);
    this.state.token = null;
    this.clearEditing();
    this.onChange();
  }

  openTokenForm(): void {
    this.state.tokenForm = { open: true, reason: null };
    this.onChange();
  }

  dismissTokenForm(): void {
    this.storage.setItem(TOKEN_DISMISSED_KEY, '1');
    this.state.tokenForm = { open: false, reason: null };
    this.onChange();
  }
}

function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, 'client_error', error instanceof Error ? error.message : String(error));
}

/** French wording of a failed write; the service's own message is kept for the details. */
export function describeSaveError(error: ApiError): SaveProblem {
  if (error.status === 412 || error.code === 'revision_mismatch') {
    return {
      kind: 'conflict',
      message:
        "Quelqu'un d'autre a modifié cette policy depuis son chargement. Rechargez pour partir de la version actuelle (vos modifications non enregistrées seront abandonnées).",
    };
  }
  if (error.status === 401) {
    return { kind: 'auth', message: `Jeton refusé : les modifications demandent le jeton administrateur. (${error.message})` };
  }
  if (error.code === 'invalid_tools') {
    const unknown = Array.isArray(error.details?.unknown) ? (error.details.unknown as unknown[]).map(String) : [];
    const suffix = unknown.length > 0 ? ` Tools inconnus : ${unknown.join(', ')}.` : '';
    return { kind: 'error', message: `Enregistrement refusé : ${error.message}${suffix}` };
  }
  return { kind: 'error', message: `Enregistrement impossible : ${error.message}` };
}
