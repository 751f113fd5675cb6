/**
 * Other MCP servers (docs/api.md#other-mcp-servers-tools): reads what their proxies reported
 * (`GET /projects/:p/servers`) and declares a tool the user classed (`PUT .../servers/:server/tools/:tool`).
 * A proxy's report sends no event, so the list is read after every load of the view and every few
 * seconds while the page is seen (main.ts), like Refus récents. The declaration is a write like the
 * policy's: `If-Match` with the catalog's version; on `412` the catalog is read again and, when the
 * tool is still undeclared there, the same declaration is sent on the new version (at most three
 * times), else nothing is written and the panel says who won.
 */
import type { ServersResponse } from '../../../schemas/servers.js';
import { ApiError, asApiError, type PermissionsApi } from '../api/api.js';
import { frenchError } from '../model/errors-fr.js';
import type { Navigation } from './navigation.js';
import { ProjectList } from './project-list.js';
import {
  accessWord,
  declareBody,
  declareButtonId,
  declareFormFor,
  declaredText,
  qualified,
  type DeclaredAccess,
  type ServersPanel,
} from '../model/servers-model.js';
import { openTokenForm } from '../state/state.js';
import type { Store } from '../state/store.js';

/** A declaration is sent again at most this many times on versions that keep changing under it (as a save). */
const MAX_REAPPLY = 3;

export class Servers extends ProjectList<ServersResponse> {
  constructor(
    store: Store,
    private readonly api: PermissionsApi,
    private readonly navigation: Navigation,
  ) {
    super(store);
  }

  protected fetch(project: string): Promise<ServersResponse> {
    return this.api.servers(project);
  }

  protected apply({ servers }: ServersResponse): boolean {
    const current = this.state.servers;
    // Nothing new: no render (the periodic read must not redraw the page every few seconds).
    if (current.loaded && current.loadError === null && JSON.stringify(current.servers) === JSON.stringify(servers)) return false;
    this.change((panel) => {
      panel.loaded = true;
      panel.servers = servers;
      panel.loadError = null;
      // A form of a tool declared elsewhere meanwhile has nothing left to declare.
      const form = panel.form;
      if (
        form !== null &&
        !servers.some((server) => server.id === form.server && server.discovered.some((tool) => tool.name === form.tool))
      ) {
        panel.form = null;
      }
    });
    return true;
  }

  protected readFailed(failure: ApiError): void {
    const loadError = frenchError(failure);
    this.change((panel) => {
      panel.loaded = true;
      panel.loadError = loadError;
    });
  }

  /** Staged: the caller tells the listeners. */
  private change(edit: (panel: ServersPanel) => void): void {
    this.store.stage((state) => {
      edit(state.servers);
    });
  }

  // ------------------------------------------------------------------ the « Déclarer » form

  openDeclare(serverId: string, toolName: string): void {
    const server = this.state.servers.servers.find((entry) => entry.id === serverId);
    const tool = server?.discovered.find((entry) => entry.name === toolName);
    if (server === undefined || tool === undefined) return;
    this.store.update((state) => {
      state.servers.form = declareFormFor(server, tool);
      state.servers.notice = null;
      state.focusAfterRender = state.servers.form.access === 'write' ? 'declare-write' : 'declare-read';
    });
  }

  closeDeclare(): void {
    const form = this.state.servers.form;
    if (form === null) return;
    this.store.update((state) => {
      state.servers.form = null;
      state.focusAfterRender = declareButtonId(form.server, form.tool);
    });
  }

  setDeclareAccess(access: DeclaredAccess): void {
    this.editForm((form) => {
      form.access = access;
    });
  }

  setDeclareLabel(text: string): void {
    this.editForm((form) => {
      form.label = text;
    });
  }

  setDeclareServerLabel(text: string): void {
    this.editForm((form) => {
      form.serverLabel = text;
    });
  }

  private editForm(edit: (form: NonNullable<ServersPanel['form']>) => void): void {
    const form = this.state.servers.form;
    if (form === null) return;
    this.store.update(() => {
      edit(form);
    });
  }

  /** Writes the declaration the user chose; the view and the catalog are read again after it. */
  async declare(): Promise<void> {
    const { servers, projectId, catalog } = this.state;
    const form = servers.form;
    if (form === null || projectId === null || catalog === null || servers.busy) return;
    const access = form.access;
    // Never a class the user did not choose (a tool without hint starts with none).
    if (access === null) return;
    const name = qualified(form.server, form.tool);
    const body = declareBody({ ...form, access });
    this.store.update((state) => {
      state.servers.busy = true;
      form.problem = null;
    });
    try {
      // A catalog without a version never matches (412): the one read then has it.
      let version = catalog.version ?? 'unknown';
      let reapplied = false;
      for (let attempt = 0; ; attempt += 1) {
        try {
          const answer = await this.api.declareTool(projectId, form.server, form.tool, body, version);
          this.change((panel) => {
            panel.servers = answer.servers;
          });
          break;
        } catch (error) {
          const failure = asApiError(error);
          if (failure.code !== 'revision_mismatch' || attempt >= MAX_REAPPLY) throw failure;
          // The servers file changed elsewhere: what this declaration depends on is that the tool is still undeclared.
          const fresh = await this.api.projectCatalog(projectId);
          const elsewhere = fresh.tools.find((tool) => tool.name === name);
          if (elsewhere !== undefined) {
            this.change((panel) => {
              panel.form = null;
              panel.notice = `${name} a été déclaré ailleurs entre-temps, en ${accessWord(elsewhere.access)} : rien n\u2019a été écrit.`;
            });
            this.store.stage((state) => {
              state.announcement = state.servers.notice ?? '';
            });
            await this.navigation.reloadView({ own: true });
            return;
          }
          version = fresh.version ?? 'unknown';
          reapplied = true;
        }
      }
      const text = declaredText(name, access, reapplied);
      this.change((panel) => {
        panel.form = null;
        panel.notice = text;
      });
      this.store.stage((state) => {
        state.announcement = text;
        state.focusAfterRender = `group-toggle-server:${form.server}`;
      });
      // The catalog and the view follow the file (a new revision): read them now rather than wait for the event.
      await this.navigation.reloadView({ own: true });
    } catch (error) {
      const failure = asApiError(error);
      this.store.stage((state) => {
        form.problem = problemOf(failure);
        if (failure.status === 401) {
          state.role = null;
          openTokenForm(state, 'Le service a refusé ce jeton pour une modification : saisissez le jeton administrateur.');
        }
      });
    } finally {
      this.store.update((state) => {
        state.servers.busy = false;
      });
    }
  }
}

function problemOf(failure: ApiError): { message: string; detail: string | null } {
  const french = frenchError(failure);
  if (failure.code === 'policy_invalid') {
    return {
      message:
        'Déclaration impossible : le fichier .ideai/mcp-servers.json (ou la policy) est invalide. Corrigez-le d\u2019abord : toutes les décisions du projet sont refusées en attendant.',
      detail: french.detail,
    };
  }
  return { message: `Déclaration impossible. ${french.message}`, detail: french.detail };
}
