/** What the `idea-pdp` commands share: where they write, the folders they are given, how files are named. */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { PolicyProblem } from '../../schemas/index.js';
import { UsageError } from './usage.js';

export interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** Each DIR must be a folder: anything else is a usage error, not a project without files. */
export async function projectFolders(dirs: readonly string[]): Promise<string[]> {
  const folders = dirs.length === 0 ? ['.'] : [...dirs];
  for (const dir of folders) {
    const stats = await fs.stat(dir).catch(() => undefined);
    if (!stats?.isDirectory()) throw new UsageError(`not a folder: ${dir}`);
  }
  return folders;
}

/** Folders deeper than this are not walked: a repository's projects sit a few levels down, not 32. */
const MAX_WALK_DEPTH = 32;

async function hasIdeai(dir: string): Promise<boolean> {
  return (await fs.lstat(path.join(dir, '.ideai')).catch(() => undefined))?.isDirectory() === true;
}

/** The project folders under `dir` (those holding `.ideai/`), in path order; links, hidden folders and node_modules are not entered. */
async function walk(dir: string, depth: number, found: string[]): Promise<void> {
  if (await hasIdeai(dir)) {
    found.push(dir);
    return;
  }
  if (depth >= MAX_WALK_DEPTH) return;
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  const folders = entries
    .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules')
    .map((entry) => entry.name)
    .sort();
  for (const name of folders) await walk(path.join(dir, name), depth + 1, found);
}

/**
 * Each DIR that is a project (it holds `.ideai/`) as it is; any other folder walked for the projects under
 * it, so `check .` at a repository's root covers every project. A walk that finds none keeps DIR: its
 * missing policy file is then reported as for any project (an error with --require).
 */
export async function walkedProjectFolders(dirs: readonly string[]): Promise<string[]> {
  const projects: string[] = [];
  for (const dir of await projectFolders(dirs)) {
    const found: string[] = [];
    await walk(dir, 0, found);
    projects.push(...(found.length === 0 ? [dir] : found));
  }
  return projects;
}

/** How a file of DIR is named in the output: relative to the current folder. */
export const shown = (dir: string, file: string): string => path.relative(process.cwd(), path.resolve(dir, file)) || file;

export const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;

/** The project id a folder is decided in: `--project`, else the folder's own name (as under PDP_PROJECTS_ROOT). */
export async function projectIdOf(dir: string, project: string | undefined): Promise<string> {
  return project ?? path.basename(await fs.realpath(dir));
}

export function problemAt(file: string, severity: PolicyProblem['severity'], code: PolicyProblem['code'], message: string): PolicyProblem {
  return { file, line: 1, column: 1, severity, code, message };
}
