/**
 * One project: its files, its current compiled state, and a serial queue through which every
 * reload and every write of the project goes, so a reload can never overwrite a newer write.
 * Decisions read `state` synchronously and never wait on the queue.
 */
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import type { PolicyDocument } from '../../schemas/index.js';
import { AppError } from '../errors.js';
import { NO_AGENTS_FILE, parseAgentsFile, type AgentsFileState } from '../domain/agents-file.js';
import { builtinPolicy, compilePolicyFile, invalidPolicy, revisionOf, type CompiledPolicy, type ValidPolicy } from '../domain/compile.js';
import { serializeDocument } from '../domain/edit.js';
import { WriteOutcomeUnknownError, writeFileAtomic } from './atomic-write.js';

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
      if (next.policy.revision === previous.policy.revision && next.policy.status === previous.policy.status && next.agents === previous.agents) {
        return 'unchanged';
      }
      return next.policy.status === 'ok' ? 'ok' : 'invalid';
    });
  }

  /** Whether the files on disk look different from what was last read (cheap: two stats). */
  async changedOnDisk(): Promise<boolean> {
    return (await this.fingerprint()) !== this.current.fingerprint;
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
        throw new AppError(412, 'revision_mismatch', `The policy changed: revision is ${policy.revision}, not ${expected.join(', ')}.`, {
          revision: policy.revision,
        });
      }
      if (policy.status === 'invalid' && !options.allowInvalid) {
        throw new AppError(409, 'policy_invalid', `The policy file is invalid (${policy.error.message}); replace the whole document to repair it.`, {
          error: policy.error,
        });
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
          throw new AppError(500, 'write_failed', `Could not make the policy file of project ${this.id} durable (${code}), nor take the write back: the service now follows the file as it is (revision ${this.current.policy.revision}).`, {
            outcome: 'unknown',
            revision: this.current.policy.revision,
          });
        }
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        throw new AppError(500, 'write_failed', `Could not write the policy file of project ${this.id} (${code}); nothing was changed.`);
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
    return this.readState().catch(
      (error: unknown): ProjectState => ({
        policy: invalidPolicy(revisionOf(`read-error:${Date.now()}`), { message: `cannot read the file (${(error as Error).message})` }),
        agents: this.current.agents,
        fingerprint: '',
      }),
    );
  }

  private async readState(): Promise<ProjectState> {
    const fingerprint = await this.fingerprint();
    const [policy, agents] = await Promise.all([this.readPolicy(), this.readAgents()]);
    return { policy, agents: sameAgents(this.current?.agents, agents), fingerprint };
  }

  private async readPolicy(): Promise<CompiledPolicy> {
    let bytes: Buffer;
    try {
      bytes = await readRegularFile(this.policyPath);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return builtinPolicy();
      // The file exists but cannot be read (a folder, no permission, a symlink loop): fail closed.
      return invalidPolicy(revisionOf(`unreadable:${code ?? 'error'}`), { message: `cannot read the file (${code ?? 'error'})` });
    }
    return compilePolicyFile(bytes);
  }

  private async readAgents(): Promise<AgentsFileState> {
    try {
      return parseAgentsFile((await readRegularFile(this.agentsPath)).toString('utf8'));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return NO_AGENTS_FILE;
      return { exists: true, agents: [], error: `.ideai/agents.json: cannot read the file (${code ?? 'error'})` };
    }
  }

  private async fingerprint(): Promise<string> {
    const [policy, agents] = await Promise.all([statKey(this.policyPath), statKey(this.agentsPath)]);
    return `${policy}|${agents}`;
  }
}

/** Far above any valid document (10,000 overrides of the 25 tools); a bigger file is invalid. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Reads a file that must be a regular file of a sane size. Opened non-blocking and checked
 * before reading, so a FIFO, a device (`/dev/zero`) or a huge file put in place of a policy file
 * cannot hang this project's queue (and its writes) or exhaust memory: it reads as unreadable.
 */
async function readRegularFile(file: string): Promise<Buffer> {
  const handle = await fs.open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const stats = await handle.stat();
    const problem = stats.isDirectory() ? 'EISDIR' : !stats.isFile() ? 'not a regular file' : stats.size > MAX_FILE_BYTES ? 'larger than 16 MiB' : undefined;
    if (problem !== undefined) throw Object.assign(new Error(`${file}: ${problem}`), { code: problem });
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

async function statKey(file: string): Promise<string> {
  try {
    const stats = await fs.stat(file, { bigint: true });
    return `${stats.ino}:${stats.size}:${stats.mtimeNs}:${stats.ctimeNs}:${stats.mode}`;
  } catch (error) {
    return `-${(error as NodeJS.ErrnoException).code ?? ''}`;
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
