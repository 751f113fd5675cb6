/**
 * What `idea-pdp` reads of a project folder: its files as the service reads them from the working
 * tree, or with `--staged` as git's index holds them (`git show :path`), so a pre-commit hook
 * judges what is committed. Also the names in `.ideai/`, for files named almost like the policy's.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { AgentsFileState } from '../domain/agents-file.js';
import type { CompiledPolicy } from '../domain/compile.js';
import { POLICY_FILE, TEST_FILE } from '../domain/policy-check.js';
import { readCompiledProject } from '../projects/compiled-files.js';
import { MAX_FILE_BYTES } from '../projects/file-read.js';
import { NO_AGENTS_FILE } from '../domain/agents-file.js';
import { builtinPolicy } from '../domain/compile.js';
import { compilePolicy, parseAgents } from '../projects/parse.js';
import { UsageError } from './usage.js';

export interface ProjectInput {
  readonly policy: CompiledPolicy;
  readonly policyText: string | null;
  readonly agents: AgentsFileState;
  readonly agentsText: string | null;
  /** Whether the policy file is there (a missing one is the canonical defaults). */
  readonly policyExists: boolean;
  /** The names of the entries of `.ideai/` (none when there is no such folder). */
  readonly ideaiNames: readonly string[];
}

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

/** A file of the index, by its path relative to `dir`; null when the index has none. */
async function stagedFile(dir: string, file: string): Promise<Buffer | null> {
  const listed = await git(dir, ['ls-files', '--cached', '--', file]);
  if (listed.code !== 0) throw new UsageError(`--staged: ${dir} is not in a git work tree (${listed.stderr.trim()})`);
  if (listed.stdout.length === 0) return null;
  const shown = await git(dir, ['show', `:./${file}`]);
  if (shown.code !== 0) throw new UsageError(`--staged: git show :./${file} failed in ${dir}: ${shown.stderr.trim()}`);
  if (shown.stdout.length > MAX_FILE_BYTES) throw new UsageError(`${file} (staged): larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`);
  return shown.stdout;
}

async function ideaiNamesOnDisk(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(path.join(dir, '.ideai'));
  } catch {
    return [];
  }
}

async function ideaiNamesStaged(dir: string): Promise<string[]> {
  const listed = await git(dir, ['ls-files', '--cached', '-z', '--', '.ideai']);
  return listed.stdout
    .toString('utf8')
    .split('\0')
    .filter((name) => name !== '')
    .map((name) => name.slice('.ideai/'.length))
    .filter((name) => !name.includes('/'));
}

export async function readProject(dir: string, staged: boolean): Promise<ProjectInput> {
  if (!staged) {
    const read = await readCompiledProject(dir);
    const exists = read.policy.status === 'invalid' || read.policy.fileExists;
    return { ...read, policyExists: exists, ideaiNames: await ideaiNamesOnDisk(dir) };
  }
  const [policyBytes, agentsBytes] = [await stagedFile(dir, POLICY_FILE), await stagedFile(dir, '.ideai/agents.json')];
  return {
    policy: policyBytes === null ? builtinPolicy() : await compilePolicy(policyBytes),
    policyText: policyBytes?.toString('utf8') ?? null,
    agents: agentsBytes === null ? NO_AGENTS_FILE : await parseAgents(agentsBytes),
    agentsText: agentsBytes?.toString('utf8') ?? null,
    policyExists: policyBytes !== null,
    ideaiNames: await ideaiNamesStaged(dir),
  };
}

/** The test file's text, or null when there is none; only a regular file of at most 4 MiB is read. */
export async function readTestText(dir: string, staged: boolean): Promise<string | null> {
  if (staged) return (await stagedFile(dir, TEST_FILE))?.toString('utf8') ?? null;
  const file = path.join(dir, TEST_FILE);
  let handle: fs.FileHandle;
  try {
    // Non-blocking: a FIFO or a device named like the test file must not hang the run.
    handle = await fs.open(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === 'ENOENT') return null;
    // ENXIO: a socket, such as the `/dev/stdin` of a process that Node started.
    throw code === 'ENXIO' ? notRegular(file) : error;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw notRegular(file);
    if (stats.size > MAX_FILE_BYTES) throw new Error(`${file}: larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB`);
    // The size just checked, even if the file grows meanwhile.
    const bytes = Buffer.alloc(stats.size);
    let filled = 0;
    for (let read = -1; read !== 0 && filled < bytes.length; filled += read) {
      read = (await handle.read(bytes, filled, bytes.length - filled, filled)).bytesRead;
    }
    return bytes.toString('utf8', 0, filled);
  } finally {
    await handle.close();
  }
}

const notRegular = (file: string): Error =>
  new Error(`${file}: not a regular file (a folder, a device, a pipe or a socket); idea-pdp test reads regular files only`);
