/**
 * Watches the folders whose changes matter, and nothing else: the projects root and its parent
 * (to see the root itself replaced), each project folder (for its `.ideai` entry), the parent of
 * each explicit project folder, each `.ideai` (for the three files in it), and the policy file
 * itself (for writes through another name of it: a hard link, a symlink). Every event that
 * names a watched folder, and every {@link Watcher.check} of the rescan, makes the watches of
 * that folder follow what its path now leads to (see folder-watch.ts), and a project whose watch
 * was rebuilt is reported as changed: whatever happened while no watch listened is read then.
 */
import { readlinkSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { FolderWatch } from './folder-watch.js';

const POLICY_FILE = 'mcp-tool-permissions.json';
const SERVERS_FILE = 'mcp-servers.json';
const WATCHED_FILES: ReadonlySet<string> = new Set([POLICY_FILE, 'agents.json', SERVERS_FILE]);

/** The folders being watched: the projects root (each sub-folder a project) and explicit project roots. */
export interface WatchScope {
  readonly root: string | undefined;
  readonly explicitRoots: readonly string[];
}

export interface WatchHandlers {
  /** Something changed in the project folder `root` (its `.ideai`, a watched file), or its watch was rebuilt. */
  onProject(root: string): void;
  /** The entry `name` of the projects root changed: a project may have appeared, gone or been replaced. */
  onRootEntry(name: string): void;
  /** The projects root was replaced, or came back: its listing, and every project in it, must be checked again. */
  onRootListing(): void;
}

export interface Watcher {
  /** Starts watching a project folder and its `.ideai`; call it before reading the project, so no change is missed. */
  addProject(root: string): void;
  removeProject(root: string): void;
  /** Compares the watched folders of the root and of these projects with the disk, and rebuilds what was replaced. */
  check(projectRoots: Iterable<string>): void;
  /** Folders that exist but cannot be watched now, counted by errno code (ENOSPC: no inotify watch left). */
  unwatched(): ReadonlyMap<string, number>;
  close(): void;
}

interface WatchedProject {
  readonly folder: FolderWatch;
  readonly ideai: FolderWatch;
  /** The policy file itself (its inode): edits through a hard link or a symlink's target (docs/design.md#links). */
  readonly policy: FolderWatch;
  /** Project ids served from this folder (two ids may share one path). */
  users: number;
}

export function startWatcher(scope: WatchScope, handlers: WatchHandlers, logger: Logger): Watcher {
  return new FolderWatcher(scope, handlers, logger);
}

class FolderWatcher implements Watcher {
  private readonly projects = new Map<string, WatchedProject>();
  /** Parents of the projects root and of explicit project folders, with the names watched in each. */
  private readonly parents = new Map<string, { readonly watch: FolderWatch; readonly names: Set<string> }>();
  private readonly rootWatch: FolderWatch | undefined;
  private closed = false;

  constructor(
    private readonly scope: WatchScope,
    private readonly handlers: WatchHandlers,
    private readonly logger: Logger,
  ) {
    const { root } = scope;
    if (root !== undefined) {
      this.rootWatch = new FolderWatch(
        root,
        (name) => {
          this.onRootEvent(name);
        },
        this.onFailure,
      );
      this.rootWatch.refresh();
      this.watchParentFor(root);
    }
    for (const explicit of scope.explicitRoots) this.watchParentFor(explicit);
  }

  addProject(root: string): void {
    const known = this.projects.get(root);
    if (known !== undefined) {
      known.users++;
      return;
    }
    const project: WatchedProject = {
      folder: new FolderWatch(
        root,
        (name) => {
          this.onProjectEvent(root, name);
        },
        this.onFailure,
      ),
      ideai: new FolderWatch(
        path.join(root, '.ideai'),
        (name) => {
          this.onIdeaiEvent(root, name);
        },
        this.onFailure,
      ),
      policy: new FolderWatch(
        path.join(root, '.ideai', POLICY_FILE),
        () => {
          this.onPolicyFileEvent(root);
        },
        this.onFailure,
        'file',
      ),
      users: 1,
    };
    this.projects.set(root, project);
    project.folder.refresh();
    project.ideai.refresh();
    project.policy.refresh();
  }

  removeProject(root: string): void {
    const project = this.projects.get(root);
    if (project === undefined || --project.users > 0) return;
    this.projects.delete(root);
    project.folder.close();
    project.ideai.close();
    project.policy.close();
  }

  unwatched(): ReadonlyMap<string, number> {
    const counts = new Map<string, number>();
    const count = (watch: FolderWatch | undefined): void => {
      const code = watch?.failure;
      if (code !== undefined) counts.set(code, (counts.get(code) ?? 0) + 1);
    };
    count(this.rootWatch);
    for (const { watch } of this.parents.values()) count(watch);
    for (const project of this.projects.values()) {
      count(project.folder);
      count(project.ideai);
      count(project.policy);
    }
    return counts;
  }

  check(projectRoots: Iterable<string>): void {
    if (this.closed) return;
    for (const { watch } of this.parents.values()) watch.refresh();
    this.refreshRoot();
    for (const root of projectRoots) this.refreshProject(root);
  }

  close(): void {
    this.closed = true;
    this.rootWatch?.stop();
    for (const { watch } of this.parents.values()) watch.stop();
    for (const project of this.projects.values()) {
      project.folder.stop();
      project.ideai.stop();
      project.policy.stop();
    }
    this.projects.clear();
  }

  private readonly onFailure = (folder: string, error: unknown): void => {
    this.logger.warn({ err: error, folder }, 'cannot watch a folder; the periodic rescan still checks it');
  };

  private watchParentFor(folder: string): void {
    const parent = path.dirname(folder);
    let entry = this.parents.get(parent);
    if (entry === undefined) {
      const names = new Set<string>();
      entry = {
        watch: new FolderWatch(
          parent,
          (name) => {
            this.onParentEvent(parent, names, name);
          },
          this.onFailure,
        ),
        names,
      };
      this.parents.set(parent, entry);
      entry.watch.refresh();
    }
    entry.names.add(path.basename(folder));
  }

  private onParentEvent(parent: string, names: ReadonlySet<string>, name: string | null): void {
    if (this.closed || (name !== null && !names.has(name))) return;
    for (const watched of name === null ? names : [name]) {
      const folder = path.join(parent, watched);
      if (folder === this.scope.root) this.refreshRoot();
      else this.refreshProject(folder);
    }
  }

  private onRootEvent(name: string | null): void {
    if (this.closed) return;
    const root = this.scope.root as string;
    // The watched folder itself moved or deleted is reported under its own name.
    if (name === null || name === path.basename(root)) this.refreshRoot();
    if (name === null) {
      this.handlers.onRootListing();
      return;
    }
    this.refreshProject(path.join(root, name));
    this.handlers.onRootEntry(name);
  }

  private onProjectEvent(root: string, name: string | null): void {
    if (this.closed) return;
    if (name === path.basename(root)) this.refreshProject(root);
    // A symlinked `.ideai` leads to a folder of the project: that folder replaced is an event under its own name.
    if (name !== null && name !== '.ideai' && !this.isIdeaiLinkTarget(root, name)) return;
    this.projects.get(root)?.ideai.refresh();
    this.projects.get(root)?.policy.refresh();
    this.handlers.onProject(root);
  }

  private onIdeaiEvent(root: string, name: string | null): void {
    if (this.closed) return;
    if (name === '.ideai') this.refreshProject(root);
    else if (
      name === null ||
      WATCHED_FILES.has(name) ||
      this.linkTargetOf(root, POLICY_FILE) === name ||
      this.linkTargetOf(root, SERVERS_FILE) === name
    ) {
      // The file at the path may be another inode now (an atomic save, a link swapped): its watch follows.
      this.projects.get(root)?.policy.refresh();
      this.handlers.onProject(root);
    }
  }

  /** The name a symlinked policy (or servers) file points to in `.ideai` (what file-read.ts accepts), if it is one. */
  private linkTargetOf(root: string, file: string): string | undefined {
    try {
      return readlinkSync(path.join(root, '.ideai', file));
    } catch {
      return undefined;
    }
  }

  /** Whether `.ideai` is a symlink to the entry `name` of the project folder (what file-read.ts accepts). */
  private isIdeaiLinkTarget(root: string, name: string): boolean {
    try {
      return path.resolve(root, readlinkSync(path.join(root, '.ideai'))) === path.join(root, name);
    } catch {
      return false;
    }
  }

  /** Anything done to the policy file's inode (written, truncated, its links changed, deleted). */
  private onPolicyFileEvent(root: string): void {
    if (this.closed) return;
    this.projects.get(root)?.policy.refresh();
    this.handlers.onProject(root);
  }

  /** Rebuilds the watches of a project whose folder or `.ideai` was replaced, and reports it. */
  private refreshProject(root: string): void {
    const project = this.projects.get(root);
    if (project === undefined) return;
    const folderChanged = project.folder.refresh();
    const ideaiChanged = project.ideai.refresh();
    const policyChanged = project.policy.refresh();
    if (folderChanged || ideaiChanged || policyChanged) {
      this.logger.info({ folder: root }, 'folder replaced; its watch was rebuilt');
      this.handlers.onProject(root);
    }
  }

  /** Rebuilds the watches of a replaced projects root and of every project in it, then has them all checked. */
  private refreshRoot(): void {
    const root = this.scope.root;
    if (root === undefined || !this.rootWatch?.refresh()) return;
    this.logger.info({ folder: root }, 'projects root replaced or back; its watches were rebuilt');
    for (const [folder, project] of this.projects) {
      if (path.dirname(folder) !== root) continue;
      project.folder.refresh();
      project.ideai.refresh();
      project.policy.refresh();
    }
    this.handlers.onRootListing();
  }
}
