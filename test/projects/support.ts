/**
 * Helpers of the projects suite: temp folders, policy documents, atomic saves as an editor makes
 * them, a registry on real folders with the real watcher, and decisions answered from its state
 * exactly as the decision service answers them.
 */
import { renameSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import { afterEach } from 'vitest';
import type { DecisionBody } from '../../server/domain/decide.js';
import { NO_EPHEMERAL, decide } from '../../server/domain/decide.js';
import { ProjectRegistry, type RegistryChange, type RegistryOptions } from '../../server/projects/registry.js';

export const POLICY_FILE = 'mcp-tool-permissions.json';
export const silent = pino({ level: 'silent' });

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()?.();
});

/** A fresh temp folder, removed after the test. */
export async function tempFolder(prefix = 'pdp-projects-'): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), prefix));
  cleanups.push(() => rm(folder, { recursive: true, force: true }));
  return folder;
}

/** A policy document granting each agent its tools (and an optional project default). */
export function policyDoc(agents: Record<string, readonly string[]>, projectDefault?: readonly string[]): string {
  const doc = {
    version: 1,
    ...(projectDefault === undefined ? {} : { projectDefault: { allowedTools: [...projectDefault] } }),
    agents: Object.entries(agents).map(([agentId, allowedTools]) => ({ agentId, policy: { allowedTools: [...allowedTools] } })),
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}

/** `<folder>/<id>/.ideai/mcp-tool-permissions.json` with `policy` (none when null). */
export async function makeProject(folder: string, id: string, policy: string | null): Promise<string> {
  const root = path.join(folder, id);
  await mkdir(path.join(root, '.ideai'), { recursive: true });
  if (policy !== null) await writeFile(path.join(root, '.ideai', POLICY_FILE), policy);
  return root;
}

export const policyPathOf = (projectRoot: string): string => path.join(projectRoot, '.ideai', POLICY_FILE);

let saves = 0;
/**
 * {@link saveAtomically} whose rename runs on the main thread: it can land anywhere in a write
 * except inside the write's synchronous check-and-rename, the window that remains by design
 * (docs/design.md, "Writes and their remaining race window").
 */
export async function saveAtomicallyOnThisThread(file: string, content: string): Promise<void> {
  const temp = path.join(path.dirname(file), `.editor-${process.pid}-${saves++}.tmp`);
  await writeFile(temp, content);
  renameSync(temp, file);
}

/** Saves `content` the way editors do: a temp file in the same folder, renamed over the target. */
export async function saveAtomically(file: string, content: string | Buffer): Promise<void> {
  const temp = path.join(path.dirname(file), `.editor-${process.pid}-${saves++}.tmp`);
  await writeFile(temp, content);
  await rename(temp, file);
}

export interface StartedRegistry {
  readonly registry: ProjectRegistry;
  /** Every change reported through onReload, in order. */
  readonly changes: Array<{ project: string; change: RegistryChange }>;
}

/** A registry on real folders (the real watcher; no rescan unless asked), closed after the test. */
export async function startRegistry(options: Omit<RegistryOptions, 'logger'>): Promise<StartedRegistry> {
  const changes: StartedRegistry['changes'] = [];
  const registry = new ProjectRegistry({
    rescanMs: 0,
    ...options,
    logger: silent,
    onReload: (project, change) => changes.push({ project, change }),
  });
  cleanups.push(async () => {
    registry.close();
  });
  await registry.start();
  return { registry, changes };
}

/** What `/decide` would answer for this query from the registry's current state. */
export function decideWith(registry: ProjectRegistry, project: string, requester: string, tool: string): DecisionBody {
  return decide({ project, requester, tool }, registry.get(project)?.state.policy, NO_EPHEMERAL);
}

/** Polls `probe` every millisecond until it is true; returns the time it took, or throws after `timeoutMs`. */
export async function timeUntil(probe: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    if (await probe()) return performance.now() - started;
    if (performance.now() - started > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
