/**
 * "A project changed": the one fan-out from the registry to what a change of a project sets off
 * (an API write, a reload of its files, a project that comes or goes, a folder replaced). The
 * registry tells it once the change is visible to `get()`, so `/decide` already sees it; it tells
 * its subscribers one after the other, synchronously, in the order they subscribed, and catches
 * nothing. server/services.ts subscribes, in this order:
 *
 * 1. the metrics (ops/metrics.ts): counts the reload, or forgets a removed project's series;
 * 2. the decisions (decisions/decision-service.ts): forget a removed project's recent decisions;
 * 3. the saved recent decisions (decisions/recent-decisions-file.ts): a removed project's file goes;
 * 4. the approvals (approvals/approvals-service.ts): a new policy closes the requests it now
 *    decides; a removed project or a replaced folder drops its requests and grants;
 * 5. the ephemeral policies (permissions/ephemeral.ts): a replaced folder drops those armed for it;
 * 6. last, the `/events` stream (events/live-events.ts), so that it never announces a change
 *    before what follows from it is done.
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
