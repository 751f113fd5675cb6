/**
 * The set of projects the service serves (SPEC §3): the direct sub-folders of `projectsRoot`
 * and the explicit `projects`, each loaded at start and kept fresh by ONE chokidar watcher (in
 * its own thread, see watcher-worker.ts) that only looks at the paths that matter (project
 * folders, their `.ideai/`, the two files in it), plus a cheap periodic stat rescan as a safety
 * net for any event a platform drops.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { PROJECT_ID_REGEX } from '../../schemas/ids.js';
import { Project, type ReloadOutcome } from './project.js';
import { WATCHED_FILES, isProjectRoot, sameScope, watchScopeOf, watchesNothing, type WatchScope } from './watcher/watch-scope.js';
import { WatcherThread } from './watcher/watcher-thread.js';

/** Projects checked at the same time by a rescan or after a watcher outage. */
const CHECK_CONCURRENCY = 32;
/** Projects whose files one rescan period checks. */
const RESCAN_BATCH = 100;
/**
 * When a folder appears (a project, or its `.ideai/`), chokidar starts watching it a moment later:
 * a file created in that moment (`mkdir .ideai && ln -s … .ideai/mcp-tool-permissions.json`) can
 * be missed by the watcher and read too early by the reload the folder's own event triggered. The
 * project is checked again after these delays (a stat each, a reload only if something changed).
 */
const NEW_FOLDER_RECHECK_MS = [250, 1500] as const;

/** Runs `task` over `items` with at most `limit` at a time. */
async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

export interface RegistryOptions {
  readonly projectsRoot?: string | undefined;
  readonly projects?: Readonly<Record<string, string>> | undefined;
  readonly logger: Logger;
  /** Safety-net rescan period in ms (0 disables it). */
  readonly rescanMs?: number | undefined;
  /** Told after every reload that changed a project, and when projects come and go. */
  readonly onReload?: ((project: string, outcome: ReloadOutcome | 'added' | 'removed') => void) | undefined;
  /**
   * A watcher thread the caller already started for the same folders (`watchScopeOf(projectsRoot,
   * projects)`); the registry takes it over and closes it. Without it, the registry starts its own.
   */
  readonly watcher?: WatcherThread | undefined;
}

export class ProjectRegistry {
  private readonly projects = new Map<string, Project>();
  private readonly byRoot = new Map<string, Project>();
  private readonly explicit: ReadonlyMap<string, string>;
  private readonly root: string | undefined;
  private watcher: WatcherThread | undefined;
  private readonly scope: WatchScope;
  /** While the watcher thread is down, every rescan checks every project instead of one batch. */
  private watcherDown = false;
  private rescanTimer: NodeJS.Timeout | undefined;
  /** Pending re-checks after a folder appeared, by project id (see NEW_FOLDER_RECHECK_MS). */
  private readonly rechecks = new Map<string, NodeJS.Timeout[]>();
  private rescanning = false;
  private rescanCursor = 0;
  private closed = false;
  private ready = false;

  constructor(private readonly options: RegistryOptions) {
    this.scope = watchScopeOf(options.projectsRoot, options.projects);
    this.root = this.scope.root;
    this.explicit = new Map(Object.entries(options.projects ?? {}).map(([id, root]) => [id, path.resolve(root)]));
    // Owned from here on, so that close() stops it even if start() never runs.
    this.watcher = options.watcher;
    if (this.watcher !== undefined && !sameScope(this.watcher.scope, this.scope)) {
      throw new Error('the watcher thread given to the registry watches other folders than its projects');
    }
  }

  /**
   * Loads every project while the watcher starts; resolves once both are done. A change that lands
   * between a project's first read and its first watcher event is caught by one fingerprint check
   * of every project before the registry says it is ready.
   */
  async start(): Promise<void> {
    // startWatcher() attaches to the thread synchronously, before loadAll() reads any project:
    // events dropped before the attach are about files read after it. Keep it so: call it first.
    const watching = this.startWatcher();
    const loading = this.loadAll();
    await Promise.all([loading, watching]);
    // Awaited: once ready, no decision is answered from a state older than the files (a
    // revocation written while the service started included).
    await Promise.all(
      this.list()
        .filter((project) => project.changedOnDiskSync())
        .map((project) => this.reload(project)),
    );
    const rescanMs = this.options.rescanMs ?? 2000;
    if (rescanMs > 0) {
      this.rescanTimer = setInterval(() => void this.rescan(), rescanMs);
      this.rescanTimer.unref();
    }
    this.ready = true;
  }

  /** Reads every project at start, synchronously (see Project.openSync): nothing is served meanwhile. */
  private async loadAll(): Promise<void> {
    const entries: [string, string][] = [...this.explicit];
    if (this.root !== undefined) {
      const root = this.root;
      for (const id of await this.rootFolders()) if (!this.explicit.has(id)) entries.push([id, path.join(root, id)]);
    }
    for (const [id, root] of entries) {
      if (this.projects.has(id) || this.closed) continue;
      try {
        this.register(Project.openSync(id, root));
      } catch (error) {
        this.options.logger.error({ err: error, project: id }, 'project failed to load');
      }
    }
  }

  private async startWatcher(): Promise<void> {
    if (watchesNothing(this.scope)) return;
    this.watcher ??= new WatcherThread(this.scope, this.options.logger);
    this.watcher.attach({
      onEvent: (event, file) => this.onEvent(event, file),
      onRaw: (rawPath, watchedPath) => this.onRawEvent(rawPath, watchedPath),
      onDown: () => {
        this.watcherDown = true;
      },
      onRestarted: () => {
        this.watcherDown = false;
        void this.checkEveryProject();
      },
    });
    await this.watcher.start();
  }

  /** Reloads every project whose files changed since they were read (after a watcher outage). */
  private checkEveryProject(): Promise<void> {
    return this.checkProjects(this.list());
  }

  /** Reloads those of `projects` whose files changed since they were read (a stat each, never throws). */
  private async checkProjects(projects: readonly Project[]): Promise<void> {
    await forEachLimited(projects, CHECK_CONCURRENCY, async (project) => {
      if (!this.closed && (await project.changedOnDisk())) void this.reload(project);
    });
  }

  get isReady(): boolean {
    return this.ready && !this.closed;
  }

  get(id: string): Project | undefined {
    return this.projects.get(id);
  }

  get size(): number {
    return this.projects.size;
  }

  list(): Project[] {
    return [...this.projects.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.rescanTimer) clearInterval(this.rescanTimer);
    for (const timers of this.rechecks.values()) for (const timer of timers) clearTimeout(timer);
    this.rechecks.clear();
    await this.watcher?.close();
  }

  /**
   * Compares the root's folders with the projects, and the files of the next {@link RESCAN_BATCH}
   * projects (round robin) with what was read: a full cycle over 1,000 projects takes 10 periods,
   * so the safety net costs a few stats per period, not thousands.
   */
  async rescan(): Promise<void> {
    if (this.rescanning || this.closed) return;
    this.rescanning = true;
    try {
      if (this.root !== undefined) {
        const folders = new Set(await this.rootFolders());
        for (const id of folders) if (!this.projects.has(id)) await this.add(id, path.join(this.root, id));
        for (const project of this.list()) {
          if (!this.explicit.has(project.id) && !folders.has(project.id)) this.remove(project.id);
        }
      }
      const projects = this.list();
      if (this.rescanCursor >= projects.length) this.rescanCursor = 0;
      const batch = this.watcherDown ? projects : projects.slice(this.rescanCursor, this.rescanCursor + RESCAN_BATCH);
      this.rescanCursor += batch.length;
      await this.checkProjects(batch);
    } catch (error) {
      this.options.logger.warn({ err: error }, 'rescan failed');
    } finally {
      this.rescanning = false;
    }
  }

  private onEvent(event: string, file: string): void {
    if (this.closed) return;
    if (this.root !== undefined && path.dirname(file) === this.root) {
      const id = path.basename(file);
      if (this.explicit.has(id)) return;
      if (event === 'addDir' && !this.projects.has(id)) void this.add(id, file).then(() => this.recheckSoon(id));
      else if (event === 'unlinkDir') this.remove(id);
      else if (this.projects.has(id)) void this.reload(this.projects.get(id) as Project);
      return;
    }
    const name = path.basename(file);
    const projectRoot = name === '.ideai' ? path.dirname(file) : WATCHED_FILES.has(name) ? path.dirname(path.dirname(file)) : file;
    const project = this.byRoot.get(projectRoot);
    if (!project) return;
    void this.reload(project);
    if (name === '.ideai') this.recheckSoon(project.id);
  }

  /** Checks a project again after NEW_FOLDER_RECHECK_MS (the last folder event of a project wins). */
  private recheckSoon(id: string): void {
    if (this.closed) return;
    for (const timer of this.rechecks.get(id) ?? []) clearTimeout(timer);
    const timers = NEW_FOLDER_RECHECK_MS.map((delay, index) => {
      const timer = setTimeout(() => {
        if (index === NEW_FOLDER_RECHECK_MS.length - 1) this.rechecks.delete(id);
        const project = this.projects.get(id);
        if (project && !this.closed) void this.checkProjects([project]);
      }, delay);
      timer.unref();
      return timer;
    });
    this.rechecks.set(id, timers);
  }

  private onRawEvent(rawPath: string | undefined, watched: string): void {
    if (this.closed) return;
    const name = rawPath === undefined ? '' : path.basename(rawPath);
    if (WATCHED_FILES.has(path.basename(watched))) this.onEvent('raw', watched);
    else if (WATCHED_FILES.has(name) && path.basename(watched) === '.ideai') this.onEvent('raw', path.join(watched, name));
    else if (name === '.ideai' && isProjectRoot(this.scope, watched)) this.onEvent('raw', path.join(watched, name));
  }

  /** Reloads a project; the promise settles once the reload is done, and never rejects. */
  private reload(project: Project): Promise<void> {
    return project
      .reload()
      .then((outcome) => {
        if (outcome === 'unchanged') return;
        this.options.logger.info({ project: project.id, status: outcome, revision: project.state.policy.revision }, 'policy reloaded');
        this.options.onReload?.(project.id, outcome);
      })
      .catch((error: unknown) => this.options.logger.error({ err: error, project: project.id }, 'reload failed'));
  }

  private async add(id: string, root: string): Promise<void> {
    if (this.projects.has(id) || this.closed) return;
    try {
      const project = await Project.open(id, root);
      if (this.projects.has(id) || this.closed) return;
      this.register(project);
    } catch (error) {
      this.options.logger.error({ err: error, project: id }, 'project failed to load');
    }
  }

  private register(project: Project): void {
    this.projects.set(project.id, project);
    this.byRoot.set(project.root, project);
    this.options.logger.info({ project: project.id, status: project.state.policy.status }, 'project loaded');
    this.options.onReload?.(project.id, 'added');
  }

  private remove(id: string): void {
    const project = this.projects.get(id);
    if (project && this.projects.delete(id)) {
      if (this.byRoot.get(project.root) === project) this.byRoot.delete(project.root);
      this.options.logger.info({ project: id }, 'project removed');
      this.options.onReload?.(id, 'removed');
    }
  }

  private async rootFolders(): Promise<string[]> {
    if (this.root === undefined) return [];
    let entries;
    try {
      entries = await fs.readdir(this.root, { withFileTypes: true });
    } catch (error) {
      this.options.logger.warn({ err: error, root: this.root }, 'cannot list the projects root');
      return [];
    }
    const ids: string[] = [];
    for (const entry of entries) {
      if (!PROJECT_ID_REGEX.test(entry.name)) continue;
      if (entry.isDirectory()) ids.push(entry.name);
      else if (entry.isSymbolicLink()) {
        const stats = await fs.stat(path.join(this.root, entry.name)).catch(() => undefined);
        if (stats?.isDirectory()) ids.push(entry.name);
      }
    }
    return ids;
  }
}
