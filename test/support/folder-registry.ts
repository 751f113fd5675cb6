/**
 * A registry on real folders with the real watcher, and decisions answered from its state exactly
 * as the decision service answers them (the projects and servers suites). Temp folders, policy
 * texts and editor saves are in files.ts and temp-folder.ts.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { afterEach } from 'vitest';
import type { DecisionBody } from '../../server/domain/decide.js';
import { NO_EPHEMERAL } from '../../server/domain/decide.js';
import { decide } from './decide.js';
import type { RegistryChange } from '../../server/projects/project-changes.js';
import { ProjectRegistry, type RegistryOptions } from '../../server/projects/registry.js';
import { POLICY_FILE } from './files.js';
import { waitFor } from './wait.js';

export const silent = pino({ level: 'silent' });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** `<folder>/<id>/.ideai/mcp-tool-permissions.json` with `policy` (none when null). */
export async function makeProject(folder: string, id: string, policy: string | null): Promise<string> {
  const root = path.join(folder, id);
  await mkdir(path.join(root, '.ideai'), { recursive: true });
  if (policy !== null) await writeFile(path.join(root, '.ideai', POLICY_FILE), policy);
  return root;
}

export const policyPathOf = (projectRoot: string): string => path.join(projectRoot, '.ideai', POLICY_FILE);

export interface StartedRegistry {
  readonly registry: ProjectRegistry;
  /** Every change the registry reported to its subscribers, in order. */
  readonly changes: { project: string; change: RegistryChange }[];
}

/** A registry on real folders (the real watcher; no rescan unless asked), closed after the test. */
export async function startRegistry(options: Omit<RegistryOptions, 'logger'>): Promise<StartedRegistry> {
  const changes: StartedRegistry['changes'] = [];
  const registry = new ProjectRegistry({
    rescanMs: 0,
    ...options,
    logger: silent,
  });
  registry.changes.subscribe({ projectChanged: (project, change) => changes.push({ project, change }) });
  cleanups.push(() => {
    registry.close();
    return Promise.resolve();
  });
  await registry.start();
  return { registry, changes };
}

/** What `/decide` would answer for this query from the registry's current state. */
export function decideWith(registry: ProjectRegistry, project: string, requester: string, tool: string): DecisionBody {
  return decide({ project, requester, tool }, registry.get(project)?.state.policy, NO_EPHEMERAL);
}

/** {@link waitFor} polling every millisecond: these tests measure how soon a change is heard. */
export const timeUntil = (probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<number> =>
  waitFor(probe, what, timeoutMs, 1);
