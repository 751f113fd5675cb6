/**
 * Which paths the file watcher looks at: the projects root, project folders, their `.ideai/`
 * and the two files in it, nothing else. Pure path logic, shared by the registry (to route an
 * event to its project) and the watcher thread (to filter what chokidar walks and watches).
 */
import path from 'node:path';
import { PROJECT_ID_PATTERN } from '../../../schemas/ids.js';

export const WATCHED_FILES: ReadonlySet<string> = new Set(['mcp-tool-permissions.json', 'agents.json']);

/** The folders being watched: the projects root (each sub-folder a project) and explicit project roots. */
export interface WatchScope {
  readonly root: string | undefined;
  readonly explicitRoots: readonly string[];
  /**
   * Source of the project id pattern (schemas' PROJECT_ID_PATTERN), passed as data so that the
   * watcher thread does not load the schemas (TypeBox) just for one regular expression.
   */
  readonly projectIdPattern: string;
}

/** The scope of a registry over `projectsRoot` and the explicit `projects` (paths resolved as the registry keys them). */
export function watchScopeOf(projectsRoot: string | undefined, projects: Readonly<Record<string, string>> | undefined): WatchScope {
  return {
    root: projectsRoot === undefined ? undefined : path.resolve(projectsRoot),
    explicitRoots: Object.values(projects ?? {}).map((root) => path.resolve(root)),
    projectIdPattern: PROJECT_ID_PATTERN,
  };
}

/** No folder to watch: no watcher thread is started. */
export const watchesNothing = (scope: WatchScope): boolean => scope.root === undefined && scope.explicitRoots.length === 0;

export function sameScope(a: WatchScope, b: WatchScope): boolean {
  return (
    a.root === b.root &&
    a.projectIdPattern === b.projectIdPattern &&
    a.explicitRoots.length === b.explicitRoots.length &&
    a.explicitRoots.every((root, index) => b.explicitRoots[index] === root)
  );
}

const compiled = new Map<string, RegExp>();
const projectIdRegex = (pattern: string): RegExp => {
  let regex = compiled.get(pattern);
  if (regex === undefined) compiled.set(pattern, (regex = new RegExp(pattern)));
  return regex;
};

export function isProjectRoot(scope: WatchScope, folder: string): boolean {
  if (scope.root !== undefined && path.dirname(folder) === scope.root) return true;
  return scope.explicitRoots.includes(folder);
}

/** Only project folders, their `.ideai/` and the two files in it pass the watcher's filter. */
export function isRelevant(scope: WatchScope, file: string): boolean {
  if (file === scope.root) return true;
  const parent = path.dirname(file);
  if (scope.root !== undefined && parent === scope.root) return projectIdRegex(scope.projectIdPattern).test(path.basename(file));
  if (isProjectRoot(scope, file)) return true;
  const name = path.basename(file);
  if (name === '.ideai') return isProjectRoot(scope, parent);
  return WATCHED_FILES.has(name) && path.basename(parent) === '.ideai' && isProjectRoot(scope, path.dirname(parent));
}

/** A message from the watcher thread. */
export type WatcherMessage =
  | { readonly type: 'all'; readonly event: string; readonly file: string }
  | { readonly type: 'raw'; readonly rawPath: string | undefined; readonly watchedPath: string | undefined }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'ready' };
