/**
 * A watch of one folder that knows which folder it watches. `fs.watch` (inotify) follows an inode,
 * not a path: when the folder at the path is replaced (renamed over, moved away and back, deleted
 * and re-created), the old watch keeps listening to the old folder and hears nothing of the new
 * one. {@link FolderWatch.refresh} compares the folder at the path (device and inode) with the one
 * watched and starts a new watch when they differ.
 */
import fs, { statSync, type FSWatcher } from 'node:fs';

/** `dev:ino` of the folder (or regular file) at `target` (links followed), or undefined when there is none. */
function identityAt(target: string, kind: 'folder' | 'file'): string | undefined {
  try {
    const stats = statSync(target, { bigint: true, throwIfNoEntry: false });
    const right = kind === 'folder' ? stats?.isDirectory() : stats?.isFile();
    return right === true ? `${stats?.dev}:${stats?.ino}` : undefined;
  } catch {
    return undefined;
  }
}

export class FolderWatch {
  private handle: FSWatcher | undefined;
  /** The folder being watched (`dev:ino`), or undefined when none is. */
  private watched: string | undefined;
  /** Why the folder, which exists, cannot be watched now (an errno code such as ENOSPC), or undefined. */
  private failedWith: string | undefined;

  constructor(
    readonly path: string,
    /** Told of every event in the folder: the name of the entry, null when the platform does not say. */
    private readonly onEvent: (name: string | null) => void,
    /** Told once when the folder exists but cannot be watched (until it can again). */
    private readonly onFailure: (path: string, error: unknown) => void,
    /**
     * `file`: watches the regular file at the path itself (its inode): a write through any other
     * name of it (a hard link) or through a symlink is heard, which a watch of its folder misses.
     */
    private readonly kind: 'folder' | 'file' = 'folder',
  ) {}

  /**
   * Watches the folder now at the path, unless it is the one already watched; true when the watch
   * changed (started, stopped or moved to another folder). The identity is read before and after
   * the watch starts, so a replacement in between is not mistaken for the folder watched.
   */
  refresh(): boolean {
    const now = identityAt(this.path, this.kind);
    if (now === undefined) this.failedWith = undefined;
    if (now === this.watched && (now === undefined || this.handle !== undefined)) return false;
    this.stop();
    for (let identity = now, attempt = 0; identity !== undefined && attempt < 3; identity = identityAt(this.path, this.kind), attempt++) {
      const handle = this.start();
      if (handle === undefined) return true;
      if (identityAt(this.path, this.kind) === identity) {
        this.handle = handle;
        this.watched = identity;
        return true;
      }
      handle.close();
    }
    return true;
  }

  stop(): void {
    this.handle?.close();
    this.handle = undefined;
    this.watched = undefined;
  }

  /** Why the folder cannot be watched now (it exists, and no watch listens to it), or undefined. */
  get failure(): string | undefined {
    return this.handle === undefined ? this.failedWith : undefined;
  }

  /** Stops for good (the folder is no longer of interest): no failure is reported any more. */
  close(): void {
    this.stop();
    this.failedWith = undefined;
  }

  private start(): FSWatcher | undefined {
    try {
      // Called through the module object: tests inject a failure there (ENOSPC: no inotify watch left).
      const handle = fs.watch(this.path, { persistent: false }, (_event, name) => {
        this.onEvent(name);
      });
      // An error ends the watch; the next refresh (an event of the parent, the rescan) starts another.
      handle.on('error', () => {
        if (this.handle === handle) this.stop();
      });
      this.failedWith = undefined;
      return handle;
    } catch (error) {
      // No permission, or no inotify watch left (fs.inotify.max_user_watches): the rescan still covers the folder.
      if (this.failedWith === undefined) this.onFailure(this.path, error);
      this.failedWith = (error as NodeJS.ErrnoException).code ?? 'error';
      return undefined;
    }
  }
}
