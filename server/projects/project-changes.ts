/**
 * "A project changed": the one fan-out from the registry to what a change of a project sets off
 * (an API write, a reload of its files, a project that comes or goes, a folder replaced). The
 * registry tells it once the change is visible to `get()`, so `/decide` already sees it; it tells
 * its subscribers one after the other, synchronously, in the order they subscribed, and catches
 * nothing. That order is written in one place, the subscribing loop of `buildServices`
 * (server/services.ts): the `/events` stream last.
 *
 * Subscribers take the change as a string and the state by its shape, so they need not import this
 * folder.
 */
import type { ProjectChange, ProjectState } from './project.js';

/** What happened to a project: its state changed (see ProjectChange), or it came or went. */
export type RegistryChange = Exclude<ProjectChange, 'unchanged'> | 'added' | 'removed';

/** What a subscriber is told; each hook is optional. */
export interface ProjectChangeListener {
  /**
   * After every change of a project, once `get()` (and so `/decide`) returns the new state, and when
   * projects come and go. `state` is the project's state now, undefined once it is removed.
   */
  readonly projectChanged?: (project: string, change: RegistryChange, state: ProjectState | undefined) => void;
  /** When the folder of a served project is seen gone or replaced by another (see folder-identity.ts). */
  readonly folderReplaced?: (project: string) => void;
}

export class ProjectChanges {
  private readonly listeners: ProjectChangeListener[] = [];

  /** Tells `listener` of every change from now on, after those that subscribed before it. */
  subscribe(listener: ProjectChangeListener): void {
    this.listeners.push(listener);
  }

  projectChanged(project: string, change: RegistryChange, state: ProjectState | undefined): void {
    for (const listener of this.listeners) listener.projectChanged?.(project, change, state);
  }

  folderReplaced(project: string): void {
    for (const listener of this.listeners) listener.folderReplaced?.(project);
  }
}
