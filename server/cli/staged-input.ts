/**
 * What `--staged` reads of a project folder: the files git's index holds (`git show :path`), so a
 * pre-commit hook judges what is committed. An index entry the service would not load as the file
 * it names (a symbolic link, whose text `git show` prints, or a submodule), and a `.ideai` that is a
 * link in the index or in the working tree (the service follows it to files the index check never
 * reads), are refused: judging them would approve something other than what the service loads.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { MAX_FILE_BYTES } from '../projects/file-read.js';
import { UsageError } from './usage.js';

/** A file as the index holds it: its bytes, none, or why `--staged` will not judge it. */
export type StagedFile =
  | { readonly kind: 'file'; readonly bytes: Buffer }
  | { readonly kind: 'missing' }
  | { readonly kind: 'refused'; readonly code: 'staged_link' | 'unreadable'; readonly message: string };

export const MISSING: StagedFile = { kind: 'missing' };

/** Git's modes of an index entry that is not a file (`git ls-files -s`). */
const NOT_A_FILE: Readonly<Record<string, string>> = {
  '120000': 'a symbolic link (git mode 120000)',
  '160000': 'a submodule (git mode 160000)',
};

const IDEAI = '.ideai';

function git(dir: string, args: readonly string[]): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile('git', [...args], { cwd: dir, encoding: 'buffer', maxBuffer: MAX_FILE_BYTES * 2 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        reject(new UsageError(`--staged needs git: ${error.message}`));
        return;
      }
      resolve({ code: error === null ? 0 : (error.code as number), stdout, stderr: stderr.toString('utf8') });
    });
  });
}

/** The index entries of a project's `.ideai` (the entry `.ideai` itself included), read once. */
export class StagedIndex {
  private constructor(
    private readonly dir: string,
    /** Mode by path relative to `dir`, for `.ideai` and everything under it. */
    private readonly modes: ReadonlyMap<string, string>,
    /** Why nothing of `.ideai` is judged, or undefined. */
    readonly ideaiRefusal: string | undefined,
  ) {}

  static async read(dir: string): Promise<StagedIndex> {
    // -z: names as they are, never quoted; -s: each entry's mode.
    const listed = await git(dir, ['ls-files', '--cached', '-s', '-z', '--', IDEAI]);
    if (listed.code !== 0) throw new UsageError(`--staged: ${dir} is not in a git work tree (${listed.stderr.trim()})`);
    const modes = new Map<string, string>();
    for (const entry of listed.stdout.toString('utf8').split('\0')) {
      const tab = entry.indexOf('\t');
      if (tab < 0) continue;
      modes.set(entry.slice(tab + 1), entry.slice(0, entry.indexOf(' ')));
    }
    return new StagedIndex(dir, modes, await ideaiRefusal(dir, modes.get(IDEAI)));
  }

  /** The names of the entries directly in `.ideai/`. */
  names(): string[] {
    if (this.ideaiRefusal !== undefined) return [];
    return [...this.modes.keys()]
      .filter((name) => name.startsWith(`${IDEAI}/`))
      .map((name) => name.slice(IDEAI.length + 1))
      .filter((name) => !name.includes('/'));
  }

  /** A file of `.ideai` by its path relative to the project folder. */
  async file(file: string): Promise<StagedFile> {
    if (this.ideaiRefusal !== undefined) return { kind: 'refused', code: 'staged_link', message: this.ideaiRefusal };
    const mode = this.modes.get(file);
    if (mode === undefined) {
      const folder = [...this.modes.keys()].some((name) => name.startsWith(`${file}/`));
      // The service reads a folder in the file's place as unreadable, and denies every call.
      return folder ? { kind: 'refused', code: 'unreadable', message: 'staged as a folder, not a file' } : MISSING;
    }
    const what = NOT_A_FILE[mode];
    if (what !== undefined) {
      return {
        kind: 'refused',
        code: 'staged_link',
        message: `staged as ${what}: git show prints the entry's own text, the service reads what it leads to; commit the file itself in its place`,
      };
    }
    const shown = await git(this.dir, ['show', `:./${file}`]);
    if (shown.code !== 0) throw new UsageError(`--staged: git show :./${file} failed in ${this.dir}: ${shown.stderr.trim()}`);
    if (shown.stdout.length > MAX_FILE_BYTES) throw new UsageError(`${file} (staged): larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`);
    return { kind: 'file', bytes: shown.stdout };
  }
}

/** Why `.ideai` cannot be judged from the index: a link or a submodule there, or a link in the working tree. */
async function ideaiRefusal(dir: string, mode: string | undefined): Promise<string | undefined> {
  const what = mode === undefined ? undefined : NOT_A_FILE[mode];
  if (what !== undefined) {
    return `.ideai is staged as ${what}: the service reads the files it leads to, which --staged does not judge; commit .ideai as a folder`;
  }
  const onDisk = await fs.lstat(path.join(dir, IDEAI)).catch(() => undefined);
  if (onDisk?.isSymbolicLink() === true) {
    return '.ideai is a symbolic link in the working tree: the service reads the files it leads to, not what the index holds under .ideai; make .ideai a folder';
  }
  return undefined;
}
