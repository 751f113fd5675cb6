/**
 * What `idea-pdp` reads of a project folder: its files as the service reads them from the working
 * tree, or with `--staged` as git's index holds them (staged-input.ts). Also the names in
 * `.ideai/`, for files named almost like the policy's.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { PolicyProblem } from '../../schemas/index.js';
import { NO_AGENTS_FILE, type AgentsFileState } from '../domain/agents-file.js';
import { builtinPolicy, invalidPolicy, revisionOf, type CompiledPolicy } from '../domain/compile.js';
import { AGENTS_FILE, POLICY_FILE, TEST_FILE } from '../domain/policy-check.js';
import { IDEA_CATALOG, INVALID_SERVERS_CATALOG, type ProjectCatalog } from '../domain/project-catalog.js';
import { NO_SERVERS_FILE, SERVERS_FILE, compileServersFile, invalidServers, type CompiledServers } from '../domain/servers-file.js';
import { policyWithServers, readCompiledProject } from '../projects/compiled-files.js';
import { MAX_FILE_BYTES } from '../projects/file-read.js';
import { compilePolicy, parseAgents } from '../projects/parse.js';
import { problemAt, shown } from './commands.js';
import { MISSING, StagedIndex, type StagedFile } from './staged-input.js';

export interface ProjectInput {
  /** What the service decides with: invalid when the policy file or the servers file is. */
  readonly policy: CompiledPolicy;
  /** The policy file alone, compiled under {@link catalog}, for its own problems. */
  readonly ownPolicy: CompiledPolicy;
  readonly policyText: string | null;
  /** `.ideai/mcp-servers.json` as the service reads it (docs/api.md#other-mcp-servers-tools). */
  readonly servers: CompiledServers;
  readonly serversText: string | null;
  /** The tools the project knows, for checks: IdeA's and the declared ones (INVALID_SERVERS_CATALOG when the servers file is invalid). */
  readonly catalog: ProjectCatalog;
  readonly agents: AgentsFileState;
  readonly agentsText: string | null;
  /** Whether the policy file is there (a missing one is the canonical defaults). */
  readonly policyExists: boolean;
  /** The names of the entries of `.ideai/` (none when there is no such folder). */
  readonly ideaiNames: readonly string[];
  /** Errors of the files beside the policy (with `--staged`: an agents file that is not a file). */
  readonly problems: readonly PolicyProblem[];
}

async function ideaiNamesOnDisk(dir: string): Promise<string[]> {
  try {
    return await fs.readdir(path.join(dir, '.ideai'));
  } catch {
    return [];
  }
}

export async function readProject(dir: string, staged: boolean): Promise<ProjectInput> {
  if (!staged) {
    const read = await readCompiledProject(dir);
    const exists = read.ownPolicy.status === 'invalid' || read.ownPolicy.fileExists;
    return { ...read, catalog: catalogOf(read.servers), policyExists: exists, ideaiNames: await ideaiNamesOnDisk(dir), problems: [] };
  }
  const index = await StagedIndex.read(dir);
  const [policyFile, agentsFile] = [await index.file(POLICY_FILE), await index.file(AGENTS_FILE)];
  // With `.ideai` itself refused, the policy's refusal says it once (every call is denied by it).
  const serversFile = index.ideaiRefusal === undefined ? await index.file(SERVERS_FILE) : MISSING;
  const servers = stagedServers(serversFile);
  const catalog = catalogOf(servers);
  const ownPolicy = await stagedPolicy(policyFile, servers.status === 'ok' ? servers.catalog : IDEA_CATALOG);
  return {
    policy: await policyWithServers(servers, () => Promise.resolve(ownPolicy)),
    ownPolicy,
    policyText: policyFile.kind === 'file' ? policyFile.bytes.toString('utf8') : null,
    servers,
    serversText: serversFile.kind === 'file' ? serversFile.bytes.toString('utf8') : null,
    catalog,
    agents: agentsFile.kind === 'file' ? await parseAgents(agentsFile.bytes) : NO_AGENTS_FILE,
    agentsText: agentsFile.kind === 'file' ? agentsFile.bytes.toString('utf8') : null,
    policyExists: policyFile.kind !== 'missing',
    ideaiNames: index.names(),
    // The policy's refusal is the policy's own error; the agents file's is listed here (the service never decides with it).
    problems: agentsFile.kind === 'refused' && index.ideaiRefusal === undefined ? [refusedProblem(dir, AGENTS_FILE, agentsFile)] : [],
  };
}

const catalogOf = (servers: CompiledServers): ProjectCatalog => (servers.status === 'ok' ? servers.catalog : INVALID_SERVERS_CATALOG);

/** A file `--staged` refuses, as the policy the service would deny every call with. */
async function stagedPolicy(file: StagedFile, catalog: ProjectCatalog): Promise<CompiledPolicy> {
  if (file.kind === 'missing') return builtinPolicy(catalog);
  if (file.kind === 'file') return compilePolicy(file.bytes, catalog);
  return invalidPolicy(revisionOf(`staged:${file.message}`), { message: file.message }, file.code);
}

/** The servers file as the index holds it; a refused one is an invalid catalog, which the service would deny every call with. */
function stagedServers(file: StagedFile): CompiledServers {
  if (file.kind === 'missing') return NO_SERVERS_FILE;
  if (file.kind === 'file') return compileServersFile(file.bytes);
  return invalidServers(revisionOf(`staged:${file.message}`), { message: file.message }, file.code);
}

const refusedProblem = (dir: string, file: string, refused: StagedFile & { kind: 'refused' }): PolicyProblem =>
  problemAt(shown(dir, file), 'error', refused.code, refused.message);

/**
 * The test file's text, or null when there is none, or (with `--staged`) why it is refused; only a
 * regular file of at most 4 MiB is read.
 */
export async function readTestText(dir: string, staged: boolean): Promise<string | null | PolicyProblem> {
  if (staged) {
    const file = await (await StagedIndex.read(dir)).file(TEST_FILE);
    if (file.kind === 'refused') return refusedProblem(dir, TEST_FILE, file);
    return file.kind === 'file' ? file.bytes.toString('utf8') : null;
  }
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
