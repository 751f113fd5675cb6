/**
 * One project: its files, its current compiled state, and a serial queue through which every
 * reload and every write of the project goes, so a reload can never overwrite a newer write.
 * Decisions read `state` synchronously and never wait on the queue.
 */
import { closeSync, constants, fstatSync, openSync, promises as fs, readSync, statSync, type BigIntStats } from 'node:fs';
import path from 'node:path';
import type { PolicyDocument } from '../../schemas/index.js';
import { NO_AGENTS_FILE, parseAgentsFile, type AgentsFileState } from '../domain/agents-file.js';
import { builtinPolicy, compilePolicyFile, invalidPolicy, revisionOf, type CompiledPolicy, type ValidPolicy } from '../domain/compile.js';
import { serializeDocument } from '../domain/edit.js';
import { WriteOutcomeUnknownError, writeFileAtomic } from './atomic-write.js';
import { ProjectWriteError } from './errors.js';

export interface ProjectState {
  readonly policy: CompiledPolicy;
  readonly agents: AgentsFileState;
  /** stat fingerprint of both files when they were read; the rescan compares it. */
  readonly fingerprint: string;
}

export interface WriteOptions {
  /** The revisions of the client's `If-Match`, if it sent one (`*` matches any). */
  readonly ifMatch?: readonly string[] | undefined;
  /** The whole-document PUT may repair an invalid file; every other write refuses it. */
  readonly allowInvalid?: boolean;
}

export type ReloadOutcome = 'unchanged' | 'ok' | 'invalid';

export class Project {
  readonly policyPath: string;
  readonly agentsPath: string;
  private current: ProjectState;
  private queue: Promise<unknown> = Promise.resolve();
  private reloadQueued = false;

  private constructor(
    readonly id: string,
    readonly root: string,
    initial: ProjectState,
  ) {
    this.policyPath = path.join(root, '.ideai', 'mcp-tool-permissions.json');
    this.agentsPath = path.join(root, '.ideai', 'agents.json');
    this.current = initial;
  }

  static async open(id: string, root: string): Promise<Project> {
    const project = new Project(id, root, { policy: builtinPolicy(), agents: NO_AGENTS_FILE, fingerprint: '' });
    project.current = await project.readState();
    return project;
  }

  /**
   * {@link open} with synchronous reads, for the start of the service only: nothing is served
   * until every project is loaded, and on this kind of machine each asynchronous file operation
   * costs the main thread tens of µs (a hop to the libuv pool and back): 1,000 projects loaded in
   * ~0.56 s of a cold process asynchronously, ~0.19 s synchronously. At run time a reload stays
   * asynchronous, so a file system that hangs blocks its project's queue, not every decision.
   */
  static openSync(id: string, root: string): Project {
    const project = new Project(id, root, { policy: builtinPolicy(), agents: NO_AGENTS_FILE, fingerprint: '' });
    try {
      project.current = project.stateFrom(readFileSynchronously(project.policyPath), readFileSynchronously(project.agentsPath));
    } catch (error) {
      project.current = project.unreadableState(error);
    }
    return project;
  }

  get state(): ProjectState {
    return this.current;
  }

  /** Re-reads the files (coalesced: one queued reload covers every event that came before it ran). */
  reload(): Promise<ReloadOutcome> {
    if (this.reloadQueued) return this.queue.then(() => 'unchanged' as const);
    this.reloadQueued = true;
    return this.enqueue(async () => {
      this.reloadQueued = false;
      // Whatever goes wrong while reading, never keep serving the last good state (fail closed).
      const next = await this.readStateOrInvalid();
      const previous = this.current;
      this.current = next;
      if (
        next.policy.revision === previous.policy.revision &&
        next.policy.status === previous.policy.status &&
        next.agents === previous.agents
      ) {
        return 'unchanged';
      }
      return next.policy.status === 'ok' ? 'ok' : 'invalid';
    });
  }

  /** Whether the files on disk look different from what was last read (cheap: two stats). */
  async changedOnDisk(): Promise<boolean> {
    return (await this.fingerprint()) !== this.current.fingerprint;
  }

  /** {@link changedOnDisk} with synchronous stats, for the start of the service (see {@link openSync}). */
  changedOnDiskSync(): boolean {
    return `${statKeySync(this.policyPath)}|${statKeySync(this.agentsPath)}` !== this.current.fingerprint;
  }

  /**
   * Applies `edit` to the document on disk and makes the result durable, then visible to
   * decisions, before resolving. Reads the file afresh first so an external edit is never lost.
   */
  write(edit: (policy: ValidPolicy) => PolicyDocument, options: WriteOptions = {}): Promise<ProjectState> {
    return this.enqueue(async () => {
      const fresh = await this.readStateOrInvalid();
      this.current = fresh;
      const { policy } = fresh;
      const expected = options.ifMatch;
      if (expected !== undefined && !expected.includes('*') && !expected.includes(policy.revision)) {
        throw new ProjectWriteError(
          'revision_mismatch',
          `The policy changed: revision is ${policy.revision}, not ${expected.join(', ')}.`,
          {
            revision: policy.revision,
          },
        );
      }
      if (policy.status === 'invalid' && !options.allowInvalid) {
        throw new ProjectWriteError(
          'policy_invalid',
          `The policy file is invalid (${policy.error.message}); replace the whole document to repair it.`,
          {
            error: policy.error,
          },
        );
      }
      const base: ValidPolicy = policy.status === 'ok' ? policy : builtinPolicy();
      const bytes = serializeDocument(edit(base));
      try {
        await writeFileAtomic(this.policyPath, bytes);
      } catch (error) {
        if (error instanceof WriteOutcomeUnknownError) {
          // Memory follows the disk, whatever it holds now (fail closed if it cannot be read).
          this.current = await this.readStateOrInvalid();
          const code = (error.failure as NodeJS.ErrnoException).code ?? 'error';
          throw new ProjectWriteError(
            'write_failed',
            `Could not make the policy file of project ${this.id} durable (${code}), nor take the write back: the service now follows the file as it is (revision ${this.current.policy.revision}).`,
            {
              outcome: 'unknown',
              revision: this.current.policy.revision,
            },
          );
        }
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw new ProjectWriteError(
          'write_failed',
          `Could not write the policy file of project ${this.id} (${code}); nothing was changed.`,
        );
      }
      const compiled = compilePolicyFile(Buffer.from(bytes, 'utf8'));
      this.current = { policy: compiled, agents: fresh.agents, fingerprint: await this.fingerprint() };
      return this.current;
    });
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * The files' state; if reading fails in a way the readers did not foresee, an invalid policy
   * (every call denied) rather than the last good state. The empty fingerprint makes the next
   * rescan read again.
   */
  private readStateOrInvalid(): Promise<ProjectState> {
    return this.readState().catch((error: unknown) => this.unreadableState(error));
  }

  private unreadableState(error: unknown): ProjectState {
    const message = error instanceof Error ? error.message : String(error);
    return {
      // The same failure again is the same revision: an unchanged reload, not a log line every rescan.
      policy: invalidPolicy(revisionOf(`read-error:${message}`), { message: `cannot read the file (${message})` }),
      agents: this.current.agents,
      fingerprint: '',
    };
  }

  private async readState(): Promise<ProjectState> {
    const [policy, agents] = await Promise.all([readFile(this.policyPath), readFile(this.agentsPath)]);
    return this.stateFrom(policy, agents);
  }

  /** The state of what was read; its fingerprint is the stat of the very files read (their fstat). */
  private stateFrom(policyFile: FileRead, agentsFile: FileRead): ProjectState {
    return {
      policy: policyOf(policyFile),
      agents: sameAgents(this.current?.agents, agentsOf(agentsFile)),
      fingerprint: `${policyFile.key}|${agentsFile.key}`,
    };
  }

  private async fingerprint(): Promise<string> {
    const [policy, agents] = await Promise.all([statKey(this.policyPath), statKey(this.agentsPath)]);
    return `${policy}|${agents}`;
  }
}

/** Far above any valid document (10,000 overrides of the 25 tools); a bigger file is invalid. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * One file as read: its bytes, or why it could not be read (an errno code, or a problem of ours).
 * `key` is its stat fingerprint (see {@link keyOf}), taken from the opened file before reading it:
 * a change made after it shows as a different key at the next check.
 */
type FileRead =
  { readonly ok: true; readonly bytes: Buffer; readonly key: string } | { readonly ok: false; readonly code: string; readonly key: string };

/** Missing file or folder: the project simply has no such file. */
const isAbsence = (code: string): boolean => code === 'ENOENT' || code === 'ENOTDIR';

function policyOf(file: FileRead): CompiledPolicy {
  if (file.ok) return compilePolicyFile(file.bytes);
  if (isAbsence(file.code)) return builtinPolicy();
  // The file exists but cannot be read (a folder, no permission, a symlink loop): fail closed.
  return invalidPolicy(revisionOf(`unreadable:${file.code}`), { message: `cannot read the file (${file.code})` });
}

function agentsOf(file: FileRead): AgentsFileState {
  if (file.ok) return parseAgentsFile(file.bytes.toString('utf8'));
  if (isAbsence(file.code)) return NO_AGENTS_FILE;
  return { exists: true, agents: [], error: `.ideai/agents.json: cannot read the file (${file.code})` };
}

const codeOf = (error: unknown): string => (error as NodeJS.ErrnoException).code ?? 'error';

/** The same fingerprint as a `stat` of the path gives (it follows links, as `open` does). */
function keyOf(stats: BigIntStats): string {
  return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.mode}`;
}

/**
 * Why an opened file is not read: only a regular file of a sane size is. So a FIFO, a device
 * (`/dev/zero`) or a huge file put in place of a policy file cannot hang this project's queue (and
 * its writes) or exhaust memory (files are opened non-blocking): it reads as unreadable.
 */
function problemOf(stats: BigIntStats): string | undefined {
  if (stats.isDirectory()) return 'EISDIR';
  if (!stats.isFile()) return 'not a regular file';
  return stats.size > BigInt(MAX_FILE_BYTES) ? 'larger than 16 MiB' : undefined;
}

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/**
 * The key of a file that could not be read for a reason that may pass (no permission yet, too many
 * open files, an I/O error): no stat gives it, so the next check (an event, the rescan) reads again.
 */
const READ_AGAIN = '';

/** A file that could not be opened: absent, or to be read again at the next check. */
function openFailure(error: unknown): FileRead {
  const code = codeOf(error);
  return { ok: false, code, key: isAbsence(code) ? `-${code}` : READ_AGAIN };
}

/**
 * From an opened file's fstat: why it is not read, or the buffer to read it into. The buffer has
 * the size just checked, even if the file grows meanwhile (a later event then reads it again).
 */
function readPlan(stats: BigIntStats): { readonly refusal: FileRead } | { readonly key: string; readonly bytes: Buffer } {
  const key = keyOf(stats);
  const problem = problemOf(stats);
  return problem === undefined ? { key, bytes: Buffer.alloc(Number(stats.size)) } : { refusal: { ok: false, code: problem, key } };
}

async function readFile(file: string): Promise<FileRead> {
  let handle;
  try {
    handle = await fs.open(file, OPEN_FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  try {
    const plan = readPlan(await handle.stat({ bigint: true }));
    if ('refusal' in plan) return plan.refusal;
    let filled = 0;
    for (let read = -1; read !== 0 && filled < plan.bytes.length; filled += read) {
      read = (await handle.read(plan.bytes, filled, plan.bytes.length - filled, filled)).bytesRead;
    }
    return { ok: true, bytes: plan.bytes.subarray(0, filled), key: plan.key };
  } catch (error) {
    return { ok: false, code: codeOf(error), key: READ_AGAIN };
  } finally {
    // What was read stands whether or not the descriptor closes cleanly.
    await handle.close().catch(() => undefined);
  }
}

/** {@link readFile} with synchronous calls (see {@link Project.openSync}). */
function readFileSynchronously(file: string): FileRead {
  let fd;
  try {
    fd = openSync(file, OPEN_FLAGS);
  } catch (error) {
    return openFailure(error);
  }
  try {
    const plan = readPlan(fstatSync(fd, { bigint: true }));
    if ('refusal' in plan) return plan.refusal;
    let filled = 0;
    for (let read = -1; read !== 0 && filled < plan.bytes.length; filled += read) {
      read = readSync(fd, plan.bytes, filled, plan.bytes.length - filled, filled);
    }
    return { ok: true, bytes: plan.bytes.subarray(0, filled), key: plan.key };
  } catch (error) {
    return { ok: false, code: codeOf(error), key: READ_AGAIN };
  } finally {
    try {
      closeSync(fd);
    } catch {
      // As above: what was read stands.
    }
  }
}

async function statKey(file: string): Promise<string> {
  try {
    return keyOf(await fs.stat(file, { bigint: true }));
  } catch (error) {
    return `-${codeOf(error)}`;
  }
}

function statKeySync(file: string): string {
  try {
    return keyOf(statSync(file, { bigint: true }));
  } catch (error) {
    return `-${codeOf(error)}`;
  }
}

/** Keeps the previous object when the agents file did not change, so views can compare by identity. */
function sameAgents(previous: AgentsFileState | undefined, next: AgentsFileState): AgentsFileState {
  if (!previous) return next;
  const same =
    previous.exists === next.exists &&
    previous.error === next.error &&
    previous.agents.length === next.agents.length &&
    previous.agents.every((agent, index) => agent.id === next.agents[index]?.id && agent.name === next.agents[index]?.name);
  return same ? previous : next;
}
