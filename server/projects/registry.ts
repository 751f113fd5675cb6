/**
 * The set of projects the service serves (docs/api.md#projects-and-files): the direct sub-folders of
 * `projectsRoot` and the explicit `projects`, each loaded at start and kept fresh by the folder
 * watcher, plus a cheap periodic stat rescan as a safety net for any event a platform drops. A
 * project leaves only when its folder is confirmed absent twice: a root that cannot be listed
 * (too many open files, no permission) never removes anything.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import type { PolicyConditions } from '../../schemas/index.js';
import type { PolicyEvent } from '../../schemas/events.js';
import { PROJECT_ID_REGEX, compareIds } from '../../schemas/ids.js';
import type { CompiledPolicy } from '../domain/compile.js';
import { declaresAgent } from '../domain/agents-file.js';
import { isOnAsk } from '../domain/decide.js';
import { conditionsInForce } from '../domain/grant-conditions.js';
import { IDEA_CATALOG, type ProjectCatalog } from '../domain/project-catalog.js';
import type { CompiledServers } from '../domain/servers-file.js';
import { FOLDER_UNREADABLE, folderIdentity } from './folder-identity.js';
import { HardLinkMemory } from './hard-links.js';
import { Project, type ProjectChange, type ProjectState } from './project.js';
import { ProjectChanges, type RegistryChange } from './project-changes.js';
import type { Projects } from './projects.js';
import { startWatcher, type WatchScope, type Watcher } from './watcher/index.js';

/** Projects read or checked at the same time (at start, by a rescan). */
const CONCURRENCY = 32;
/** Projects whose files one rescan period checks. */
const RESCAN_BATCH = 100;
/** A project folder found missing is removed only if it is still missing when checked again this much later. */
export const ABSENCE_CONFIRM_MS = 250;

export interface RegistryOptions {
  readonly projectsRoot?: string | undefined;
  readonly projects?: Readonly<Record<string, string>> | undefined;
  readonly logger: Logger;
  /** Safety-net rescan period in ms (0 disables it). */
  readonly rescanMs?: number | undefined;
}

/** Runs `task` over `items` with at most `limit` at a time. */
async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** What a folder of the projects root is: a project folder, confirmed absent, or unknown (it could not be checked). */
type EntryKind = 'folder' | 'absent' | 'unknown';

export class ProjectRegistry implements Projects {
  private readonly projects = new Map<string, Project>();
  /** Folders being added (watched, not yet served), and whether a change was heard in one meanwhile. */
  private readonly adding = new Map<string, boolean>();
  /** The identity of each project's folder when last checked (undefined: none there). */
  private readonly folders = new Map<string, string | undefined>();
  private readonly explicit: ReadonlyMap<string, string>;
  private readonly root: string | undefined;
  private watcher: Watcher | undefined;
  /** When each missing project folder was first found missing (see ABSENCE_CONFIRM_MS). */
  private readonly missingSince = new Map<string, number>();
  /** What each project id refused for its hard links, kept while it leaves and comes back (a folder moved away and back). */
  private readonly hardLinks = new Map<string, HardLinkMemory>();
  /** The pending second check of each missing folder. */
  private readonly confirmations = new Map<string, NodeJS.Timeout>();
  private rescanTimer: NodeJS.Timeout | undefined;
  private rescanning = false;
  private rescanCursor = 0;
  private closed = false;
  private ready = false;
  private listedOnce = false;
  private readonly onListed: (() => void)[] = [];
  /** Whether the last listing of the root failed: a run of failures is logged once. */
  private listingFails = false;
  /** The error code of the last listing of the root that failed, while none has succeeded since. */
  private listingError: string | undefined;
  /** Who hears that a project changed (project-changes.ts). */
  readonly changes = new ProjectChanges();

  constructor(private readonly options: RegistryOptions) {
    this.root = options.projectsRoot === undefined ? undefined : path.resolve(options.projectsRoot);
    this.explicit = new Map(Object.entries(options.projects ?? {}).map(([id, root]) => [id, path.resolve(root)]));
  }

  /** Watches, then loads every project; resolves once each is read (a change after its watch started is not missed). */
  async start(): Promise<void> {
    const scope: WatchScope = { root: this.root, explicitRoots: [...this.explicit.values()] };
    this.watcher = startWatcher(
      scope,
      {
        onProject: (root) => {
          this.reloadFolder(root);
        },
        onRootEntry: (name) => {
          this.checkRootEntry(name).catch((error: unknown) => {
            this.options.logger.error({ err: error, entry: name }, 'checking a folder of the projects root failed');
          });
        },
        onRootListing: () => {
          this.recheckRoot().catch((error: unknown) => {
            this.options.logger.error({ err: error, root: this.root }, 'checking the projects root again failed');
          });
        },
      },
      this.options.logger,
    );
    const entries: [string, string][] = [...this.explicit];
    const root = this.root;
    const listing = await this.rootFolders();
    if (root !== undefined && Array.isArray(listing))
      for (const id of listing) if (!this.explicit.has(id)) entries.push([id, path.join(root, id)]);
    await forEachLimited(entries, CONCURRENCY, ([id, folder]) => this.add(id, folder));
    // A root that is not there has no projects; one that cannot be listed has projects nobody knows yet.
    if (listing !== 'unreadable') this.listed();
    const rescanMs = this.options.rescanMs ?? 2000;
    if (rescanMs > 0 && !this.closed) {
      this.rescanTimer = setInterval(() => void this.rescan(), rescanMs);
      this.rescanTimer.unref();
    }
    this.ready = true;
  }

  /**
   * Whether the projects root has been listed since start (always, without a root): until then the
   * projects it holds are unknown, not gone, and nothing kept for a project may be forgotten.
   */
  get rootListed(): boolean {
    return this.listedOnce;
  }

  /**
   * Why the projects root has not been listed since start, or undefined (listed once, missing, or
   * no root): /readyz is not ready meanwhile, since the projects it holds are not served.
   */
  get unlistedRoot(): string | undefined {
    if (this.listedOnce || this.listingError === undefined) return undefined;
    return `the projects root ${this.root ?? ''} cannot be listed (${this.listingError}): its projects are not served, and their calls denied, until it can be (the rescan tries again every period)`;
  }

  /** Runs `task` once, after the first listing of the projects root that succeeds (at once if one has). */
  afterRootListed(task: () => void): void {
    if (this.listedOnce) task();
    else this.onListed.push(task);
  }

  get isReady(): boolean {
    return this.ready && !this.closed;
  }

  /** Folders that exist but cannot be watched now, by errno code: their changes are heard by the rescan only. */
  unwatchedFolders(): ReadonlyMap<string, number> {
    return this.watcher?.unwatched() ?? new Map<string, number>();
  }

  get(id: string): Project | undefined {
    return this.projects.get(id);
  }

  /** The identity of a project's folder as last seen (folder-identity.ts), or undefined. */
  folderOf(id: string): string | undefined {
    return this.folders.get(id);
  }

  has(id: string): boolean {
    return this.projects.has(id);
  }

  policyOf(id: string): CompiledPolicy | undefined {
    return this.projects.get(id)?.state.policy;
  }

  serversOf(id: string): CompiledServers | undefined {
    return this.projects.get(id)?.state.servers;
  }

  catalogOf(id: string): ProjectCatalog {
    const servers = this.serversOf(id);
    return servers?.status === 'ok' ? servers.catalog : IDEA_CATALOG;
  }

  isOnAsk(id: string, agentId: string, tool: string): boolean {
    return isOnAsk(this.policyOf(id), agentId, tool);
  }

  isDeclared(id: string, agentId: string): boolean {
    const state = this.projects.get(id)?.state;
    return state !== undefined && declaresAgent(state.agents, state.policy, agentId);
  }

  conditionsOf(id: string, agentId: string, tools: readonly string[]): PolicyConditions | undefined {
    return conditionsInForce(this.policyOf(id), agentId, tools);
  }

  freshly<T>(id: string, task: () => T): Promise<T> {
    return this.projects.get(id)?.freshly(task) ?? Promise.resolve().then(task);
  }

  summaries(): PolicyEvent[] {
    return this.list().map((project) => ({
      project: project.id,
      revision: project.state.policy.revision,
      status: project.state.policy.status,
    }));
  }

  get size(): number {
    return this.projects.size;
  }

  list(): Project[] {
    return [...this.projects.values()].sort((a, b) => compareIds(a.id, b.id));
  }

  close(): void {
    this.closed = true;
    clearInterval(this.rescanTimer);
    for (const timer of this.confirmations.values()) clearTimeout(timer);
    this.confirmations.clear();
    for (const project of this.projects.values()) project.close();
    this.watcher?.close();
  }

  /**
   * Compares the root's folders with the projects, and the files of the next {@link RESCAN_BATCH}
   * projects (round robin) with what was read, rebuilding their watches if their folders were
   * replaced: a full cycle over 1,000 projects takes 10 periods.
   */
  async rescan(): Promise<void> {
    if (this.rescanning || this.closed) return;
    this.rescanning = true;
    try {
      await this.listRoot();
      const projects = this.list();
      if (this.rescanCursor >= projects.length) this.rescanCursor = 0;
      const batch = projects.slice(this.rescanCursor, this.rescanCursor + RESCAN_BATCH);
      this.rescanCursor += batch.length;
      this.watcher?.check(batch.map((project) => project.root));
      await this.checkProjects(batch);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'rescan failed');
    } finally {
      this.rescanning = false;
    }
  }

  /**
   * After the root was replaced or came back: its listing, then every project in it (a few at a
   * time, so that a single change is not queued behind them all).
   */
  private async recheckRoot(): Promise<void> {
    await this.listRoot();
    await this.checkProjects(this.list().filter((project) => path.dirname(project.root) === this.root));
  }

  /** Reloads those of `projects` whose files changed since they were read (a stat each). */
  private async checkProjects(projects: readonly Project[]): Promise<void> {
    await forEachLimited(projects, CONCURRENCY, async (project) => {
      if (this.closed) return;
      try {
        await this.checkFolder(project);
        if (await project.changedOnDisk()) await project.reload();
      } catch (error) {
        this.reloadFailed(project, error);
      }
    });
  }

  /** Adds the root's new folders, and checks those of its projects it no longer lists. */
  private async listRoot(): Promise<void> {
    const root = this.root;
    const folders = await this.rootFolders();
    if (root === undefined || !Array.isArray(folders) || this.closed) return;
    const listed = new Set(folders);
    for (const id of listed) if (!this.projects.has(id) && !this.explicit.has(id)) await this.add(id, path.join(root, id));
    for (const project of this.list()) if (!this.explicit.has(project.id) && !listed.has(project.id)) await this.checkRootEntry(project.id);
    this.listed();
  }

  /** The first good listing settles what the start could not: its waiting tasks run. */
  private listed(): void {
    if (this.listedOnce || this.closed) return;
    this.listedOnce = true;
    for (const task of this.onListed.splice(0)) task();
  }

  /** Adds, reloads or (once confirmed) removes the project of one folder of the root. */
  private async checkRootEntry(id: string): Promise<void> {
    const root = this.root;
    if (root === undefined || this.closed || !PROJECT_ID_REGEX.test(id) || this.explicit.has(id)) return;
    const kind = await entryKind(path.join(root, id));
    if (kind === 'folder') {
      this.missingSince.delete(id);
      const project = this.projects.get(id);
      if (project === undefined) await this.add(id, path.join(root, id));
      else {
        await this.refresh(project);
      }
    } else if (kind === 'absent' && this.projects.has(id)) {
      // Gone, even if for a moment: what was granted to that folder goes with it.
      try {
        if (this.folders.get(id) !== undefined) this.folderChanged(id, undefined);
      } catch (error) {
        const project = this.projects.get(id);
        if (project !== undefined) this.reloadFailed(project, error);
      }
      const since = this.missingSince.get(id);
      if (since === undefined) {
        this.missingSince.set(id, performance.now());
        this.checkLater(id, ABSENCE_CONFIRM_MS);
      } else if (performance.now() - since >= ABSENCE_CONFIRM_MS) {
        this.missingSince.delete(id);
        this.remove(id);
      } else if (!this.confirmations.has(id)) {
        this.checkLater(id, since + ABSENCE_CONFIRM_MS - performance.now());
      }
    }
  }

  private checkLater(id: string, delayMs: number): void {
    const timer = setTimeout(() => {
      this.confirmations.delete(id);
      void this.checkRootEntry(id);
    }, delayMs + 1);
    timer.unref();
    this.confirmations.set(id, timer);
  }

  private reloadFolder(root: string): void {
    // Heard while the project is read for the first time: it is read again once it is served.
    if (this.adding.has(root)) this.adding.set(root, true);
    for (const project of this.projects.values()) {
      if (project.root !== root) continue;
      project.heardChange();
      void this.refresh(project);
    }
  }

  /**
   * Checks a project's folder, then reloads its files (in this order, so that decisions on a new
   * folder's files never meet what the old folder was granted). Never rejects: a failure is
   * logged and denies every call of the project until a reload succeeds.
   */
  private async refresh(project: Project): Promise<void> {
    try {
      await this.checkFolder(project);
      await project.reload();
    } catch (error) {
      this.reloadFailed(project, error);
    }
  }

  /** A reload that failed: logged, and the project denies everything until one succeeds (fail closed). */
  private reloadFailed(project: Project, error: unknown): void {
    if (this.closed || this.projects.get(project.id) !== project) return;
    const why = error instanceof Error ? error.message : String(error);
    this.options.logger.error({ err: error, project: project.id }, 'project reload failed: every call is denied until a reload succeeds');
    try {
      project.failClosed(why);
    } catch (failure) {
      // The denial is in place before anyone is told of it; a subscriber that fails again changes nothing.
      this.options.logger.error({ err: failure, project: project.id }, 'telling of a denied project failed');
    }
  }

  /** Compares a project's folder with the one it was loaded from, and tells when it is another. */
  private async checkFolder(project: Project): Promise<void> {
    const identity = await folderIdentity(project.root);
    // A folder that cannot be checked (its root unreadable) is kept as it was: what hangs on it stays.
    if (identity === FOLDER_UNREADABLE || this.projects.get(project.id) !== project || this.closed) return;
    if (identity !== this.folders.get(project.id)) this.folderChanged(project.id, identity);
  }

  private folderChanged(id: string, identity: string | undefined): void {
    const previous = this.folders.get(id);
    this.folders.set(id, identity);
    this.options.logger.info({ project: id, folder: identity === undefined ? 'gone' : 'replaced' }, 'project folder changed');
    try {
      this.changes.folderReplaced(id);
    } catch (error) {
      // Told again at the next check: every subscriber must drop what hangs on the old folder.
      this.folders.set(id, previous);
      throw error;
    }
  }

  private async add(id: string, root: string): Promise<void> {
    if (this.projects.has(id) || this.closed) return;
    // Watched before it is read: a change made while it is read is heard, and read again once it is served.
    this.adding.set(root, false);
    this.watcher?.addProject(root);
    let project: Project;
    let folder: string | undefined;
    let heardMeanwhile = false;
    try {
      const identity = await folderIdentity(root);
      folder = identity === FOLDER_UNREADABLE ? undefined : identity;
      let hardLinks = this.hardLinks.get(id);
      if (hardLinks === undefined) this.hardLinks.set(id, (hardLinks = new HardLinkMemory()));
      project = await Project.open(
        id,
        root,
        (change) => {
          this.changed(project, change);
        },
        hardLinks,
      );
    } finally {
      heardMeanwhile = this.adding.get(root) === true;
      this.adding.delete(root);
    }
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- close() may have run during the await
    if (this.projects.has(id) || this.closed) {
      this.watcher?.removeProject(root);
      project.close();
      return;
    }
    this.projects.set(id, project);
    this.folders.set(id, folder);
    this.options.logger.info({ project: id, status: project.state.policy.status }, 'project loaded');
    this.tell(id, 'added', project.state);
    if (heardMeanwhile) this.reloadFolder(root);
  }

  private changed(project: Project, change: Exclude<ProjectChange, 'unchanged'>): void {
    if (this.projects.get(project.id) !== project) return;
    if (change !== 'written') {
      this.options.logger.info({ project: project.id, status: change, revision: project.state.policy.revision }, 'policy reloaded');
    }
    this.tell(project.id, change, project.state);
  }

  private tell(project: string, change: RegistryChange, state: ProjectState | undefined): void {
    this.changes.projectChanged(project, change, state);
  }

  private remove(id: string): void {
    const project = this.projects.get(id);
    if (project === undefined) return;
    this.projects.delete(id);
    this.folders.delete(id);
    // Content refused for its hard links stays refused if the project comes back: it was not rewritten.
    if (this.hardLinks.get(id)?.refusing !== true) this.hardLinks.delete(id);
    project.close();
    this.watcher?.removeProject(project.root);
    this.options.logger.info({ project: id }, 'project removed');
    this.tell(id, 'removed', undefined);
  }

  /**
   * The project ids among the root's folders (links to folders included), `missing` when there is
   * no root folder, or `unreadable` when it cannot be listed (no permission, EMFILE, EIO, a link loop).
   */
  private async rootFolders(): Promise<string[] | 'missing' | 'unreadable'> {
    const root = this.root;
    if (root === undefined) return [];
    let entries;
    try {
      entries = await fs.readdir(root, { withFileTypes: true });
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
      // Once per run of failures: the rescan lists the root every 2 s.
      if (!this.listingFails) this.options.logger.warn({ err: error, root }, 'cannot list the projects root');
      this.listingFails = true;
      this.listingError = (error as NodeJS.ErrnoException).code ?? 'error';
      return missing ? 'missing' : 'unreadable';
    }
    if (this.listingFails) this.options.logger.info({ root }, 'projects root listed again');
    this.listingFails = false;
    const ids: string[] = [];
    for (const entry of entries) {
      if (!PROJECT_ID_REGEX.test(entry.name)) continue;
      if (entry.isDirectory() || (entry.isSymbolicLink() && (await entryKind(path.join(root, entry.name))) === 'folder'))
        ids.push(entry.name);
    }
    return ids;
  }
}

async function entryKind(folder: string): Promise<EntryKind> {
  try {
    return (await fs.stat(folder)).isDirectory() ? 'folder' : 'absent';
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? 'absent' : 'unknown';
  }
}
