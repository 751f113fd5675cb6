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
