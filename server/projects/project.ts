/**
 * One project: its files, its current compiled state, and a serial queue through which every
 * reload and every write of the project goes, so a reload can never overwrite a newer write.
 * Decisions read `state` synchronously and never wait on the queue.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { LastValid, PolicyDocument, ServersDocument } from '../../schemas/index.js';
import { NO_AGENTS_FILE, type AgentsFileState } from '../domain/agents-file.js';
import { builtinPolicy, invalidPolicy, revisionOf, type CompiledPolicy, type ValidPolicy } from '../domain/compile.js';
import { serializeDocument } from '../domain/edit.js';
import { TargetChangedError, WriteOutcomeUnknownError, writeFileAtomic, type WrittenFile } from './atomic-write.js';
import { ApiError } from '../errors.js';
import {
  OUTSIDE_LINK,
  READ_AGAIN,
  UNHEARD_IDEAI_LINK,
  isAbsence,
  keyOf,
  readProjectFiles,
  statKey,
  type FileRead,
  type ProjectFiles,
} from './file-read.js';
import { serializedOn, writeFolderKey } from './folder-lock.js';
import { HardLinkMemory } from './hard-links.js';
import { agentsOf, policyOf, policyWithServers, serversOf } from './compiled-files.js';
import { NO_SERVERS_FILE, compileServersFile, type CompiledServers } from '../domain/servers-file.js';
import { EMPTY_SERVERS_DOCUMENT, serializeServers } from '../domain/servers-edit.js';
import { SERVERS_FILE_NAME } from './file-read.js';
import { ServersHardLinkMemory } from './hard-links.js';
import { compilePolicy } from './parse.js';
import { removeStaleTemps, restoreMovedAside } from './recovery.js';
import { insideProject, matchesSnapshot, snapshotOf } from './write-guard.js';

export interface ProjectState {
  /** What decisions use: the policy compiled against the project's catalog, or invalid when either file is. */
  readonly policy: CompiledPolicy;
  readonly agents: AgentsFileState;
  /** `.ideai/mcp-servers.json` as read (docs/api.md#other-mcp-servers-tools). */
  readonly servers: CompiledServers;
  /** stat fingerprint of the three files when they were read; the rescan compares it. */
  readonly fingerprint: string;
}

export interface WriteOptions {
  /** The revisions of the client's `If-Match`, if it sent one (`*` matches any). */
  readonly ifMatch?: readonly string[] | undefined;
  /** The whole-document PUT may repair an invalid file; every other write refuses it. */
  readonly allowInvalid?: boolean;
}

/** What a reload or a write did to the state decisions see (`written`: an API write). */
export type ProjectChange = 'unchanged' | 'ok' | 'invalid' | 'written';

/** Told after every change of the state, once decisions see it. */
export type ProjectListener = (change: Exclude<ProjectChange, 'unchanged'>) => void;

/**
 * How long a policy file that disappeared denies every call before the built-in defaults apply:
 * `git checkout` deletes a file and then writes the other branch's version (docs/design.md).
 */
export const VANISHED_GRACE_MS = 150;

/** Attempts of a write whose file keeps changing under it before it is refused (`write_conflict`). */
const MAX_WRITE_ATTEMPTS = 3;

export class Project {
  readonly policyPath: string;
  readonly agentsPath: string;
  readonly serversPath: string;
  private current: ProjectState = { policy: builtinPolicy(), agents: NO_AGENTS_FILE, servers: NO_SERVERS_FILE, fingerprint: '' };
  /** What the servers file refused for its hard links, as `hardLinks` for the policy file. */
  private readonly serversHardLinks = new ServersHardLinkMemory();
  private lastValidDocument: LastValid | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private reloadQueued = false;
  /** When the policy file was first seen missing after it had existed, or the folder last changed since (see VANISHED_GRACE_MS). */
  private vanishedAt: number | undefined;
  private graceTimer: NodeJS.Timeout | undefined;
  private staleTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly id: string,
    readonly root: string,
    private readonly listener: ProjectListener,
    private readonly hardLinks: HardLinkMemory,
  ) {
    this.policyPath = path.join(root, '.ideai', 'mcp-tool-permissions.json');
    this.agentsPath = path.join(root, '.ideai', 'agents.json');
    this.serversPath = path.join(root, '.ideai', SERVERS_FILE_NAME);
  }

  /**
   * Reads the project's files; never throws (an unreadable project is an invalid one). `hardLinks`
   * is what an earlier Project of this id refused (registry.ts keeps it while the id comes and goes).
   */
  static async open(
    id: string,
    root: string,
    listener: ProjectListener = () => undefined,
    hardLinks: HardLinkMemory = new HardLinkMemory(),
  ): Promise<Project> {
    const project = new Project(id, root, listener, hardLinks);
    project.current = (await project.readState()).state;
    project.noteIfValid(project.current);
    await project.removeStaleTemps();
    return project;
  }

  get state(): ProjectState {
    return this.current;
  }

  /** The last valid document this project held, shown beside an invalid one (docs/api.md#http-api); never decided with. */
  get lastValid(): LastValid | null {
    return this.lastValidDocument;
  }

  /**
   * A change was heard in the project's folder: a vanished file's grace starts again, because a
   * checkout that deletes and rewrites the file every few ms must never reach the built-in set
   * through reads that all happened to land in the gaps (seen under load with 80 swaps). A read
   * begun before this moment cannot end the grace (see adopt).
   */
  heardChange(): void {
    if (this.vanishedAt !== undefined) this.vanishedAt = performance.now();
  }

  /**
   * Re-reads the files (coalesced: one queued reload covers every event that came before it ran).
   * It waits for the folder's write lock, so it never reads the microseconds in which a write of
   * another project id on the same folder has moved the file aside (atomic-write.ts).
   */
  reload(): Promise<ProjectChange> {
    if (this.reloadQueued) return this.queue.then(() => 'unchanged' as const);
    this.reloadQueued = true;
    return this.enqueue(async () => {
      this.reloadQueued = false;
      const { state, readAt } = await serializedOn(await writeFolderKey(this.root), () => this.readState());
      return this.adopt(state, readAt);
    });
  }

  /**
   * Reads the files again under the folder's write lock, makes them what decisions see, and runs
   * `task` at once on that state, before any other write or reload of the folder starts: what
   * `task` decides is judged on the disk as it is now (an approval answer racing an editor's save).
   */
  freshly<T>(task: () => T): Promise<T> {
    return this.enqueue(async () =>
      serializedOn(await writeFolderKey(this.root), async () => {
        const { state, readAt } = await this.readState();
        this.adopt(state, readAt);
        return task();
      }),
    );
  }

  /** Whether the files on disk look different from what was last read (cheap: two stats). */
  async changedOnDisk(): Promise<boolean> {
    const [policy, agents, servers] = await Promise.all([statKey(this.policyPath), statKey(this.agentsPath), statKey(this.serversPath)]);
    return `${policy}|${agents}|${servers}` !== this.current.fingerprint;
  }

  /**
   * Applies `edit` to the document on disk and makes the result durable, then visible to
   * decisions, before resolving. The file is read afresh first, and replaced only if it is still
   * what was read (else the edit is applied again to what is there now): no external edit is lost.
   */
  write(edit: (policy: ValidPolicy) => PolicyDocument, options: WriteOptions = {}): Promise<ProjectState> {
    return this.enqueue(async () => serializedOn(await writeFolderKey(this.root), () => this.writeNow(this.policyWrite(edit), options)));
  }

  /**
   * Denies every call until a reload succeeds: after a reload that failed in a way nobody foresaw,
   * what the project allows is unknown, and unknown must not allow. The empty fingerprint makes the
   * next check (an event, the rescan) read the files again.
   */
  failClosed(why: string): void {
    clearTimeout(this.graceTimer);
    this.vanishedAt = undefined;
    const policy = invalidPolicy(revisionOf(`reload-failed:${why}`), {
      message: `the policy could not be reloaded (${why}); every call is denied until a reload succeeds`,
    });
    this.publish({ policy, agents: this.current.agents, servers: this.current.servers, fingerprint: READ_AGAIN });
  }

  /** Stops the pending re-check of a vanished file (the project is no longer served). */
  close(): void {
    clearTimeout(this.graceTimer);
    clearTimeout(this.staleTimer);
  }

  /** Removes the temp files of writes killed half-way (recovery.ts), and checks again when young ones become old. */
  private async removeStaleTemps(): Promise<void> {
    clearTimeout(this.staleTimer);
    const folder = path.dirname(this.policyPath);
    const checks = await Promise.all([this.policyPath, this.serversPath].map((file) => removeStaleTemps(folder, path.basename(file))));
    const waits = checks.flatMap(({ nextCheckMs }) => (nextCheckMs === undefined ? [] : [nextCheckMs]));
    if (waits.length === 0) return;
    const nextCheckMs = Math.min(...waits);
    this.staleTimer = setTimeout(() => void this.removeStaleTemps(), nextCheckMs);
    this.staleTimer.unref();
  }

  /**
   * Applies `edit` to `.ideai/mcp-servers.json` (docs/api.md#declaring-a-tool) through the same
   * queue, lock, compare-and-swap and link rules as a policy write; `ifMatch` names the servers
   * file's revision (the project catalog's `version`). An invalid servers file is not written over.
   */
  writeServers(edit: (document: ServersDocument) => ServersDocument, options: WriteOptions = {}): Promise<ProjectState> {
    return this.enqueue(async () => serializedOn(await writeFolderKey(this.root), () => this.writeNow(this.serversWrite(edit), options)));
  }

  private policyWrite(edit: (policy: ValidPolicy) => PolicyDocument): FileWrite {
    return {
      kind: 'policy',
      path: this.policyPath,
      name: 'policy file',
      changed: 'The policy changed',
      file: (files) => files.policy,
      revision: (state) => state.policy.revision,
      invalid: (state, options) =>
        state.policy.status === 'invalid' && !options.allowInvalid
          ? new ApiError(
              'policy_invalid',
              `The policy file is invalid (${state.policy.error.message}); replace the whole document to repair it.`,
              {
                error: state.policy.error,
              },
            )
          : undefined,
      bytes: (state) => serializeDocument(edit(state.policy.status === 'ok' ? state.policy : builtinPolicy())),
      compiled: async (state, _files, bytes) => ({
        policy: await policyWithServers(state.servers, (catalog) => compilePolicy(Buffer.from(bytes, 'utf8'), catalog)),
        servers: state.servers,
      }),
    };
  }

  private serversWrite(edit: (document: ServersDocument) => ServersDocument): FileWrite {
    return {
      kind: 'servers',
      path: this.serversPath,
      name: 'servers file',
      changed: 'The servers file changed',
      file: (files) => files.servers,
      revision: (state) => state.servers.revision,
      invalid: ({ servers }) =>
        servers.status === 'invalid'
          ? new ApiError('policy_invalid', `The servers file is invalid (${servers.error.message}); fix .ideai/mcp-servers.json first.`, {
              error: servers.error,
            })
          : undefined,
      bytes: ({ servers }) =>
        serializeServers(edit(servers.status === 'ok' ? (servers.document ?? EMPTY_SERVERS_DOCUMENT) : EMPTY_SERVERS_DOCUMENT)),
      compiled: async (_state, files, bytes) => {
        const servers = compileServersFile(Buffer.from(bytes, 'utf8'));
        const policy = await policyWithServers(servers, async (catalog) =>
          this.hardLinks.judge(files.policy, await policyOf(files.policy, catalog)),
        );
        return { policy, servers };
      },
    };
  }

  private async writeNow(target: FileWrite, options: WriteOptions): Promise<ProjectState> {
    for (let attempt = 1; ; attempt++) {
      const { state, files, readAt } = await this.readState();
      // Memory follows the disk, whatever happens next.
      this.adopt(state, readAt);
      const revision = target.revision(state);
      const expected = options.ifMatch;
      if (expected !== undefined && !expected.includes('*') && !expected.includes(revision)) {
        throw new ApiError('revision_mismatch', `${target.changed}: revision is ${revision}, not ${expected.join(', ')}.`, { revision });
      }
      if (files === undefined) {
        const reason = state.policy.status === 'invalid' ? state.policy.error.message : 'unknown error';
        throw new ApiError('write_failed', `Could not read the ${target.name} of project ${this.id} (${reason}); nothing was changed.`);
      }
      const refused = target.invalid(state, options);
      if (refused !== undefined) throw refused;
      const read = target.file(files);
      if (!read.ok && read.code === OUTSIDE_LINK) throw outsideFailure(this.id, target.name);
      if (!read.ok && read.code.startsWith(UNHEARD_IDEAI_LINK)) {
        throw new ApiError('policy_invalid', `The ${target.name} of project ${this.id} cannot be used: ${read.code}.`, {
          error: { message: read.code },
        });
      }
      const bytes = target.bytes(state);
      let written: WrittenFile;
      let outside = false;
      try {
        const snapshot = await snapshotOf(target.path, read);
        written = await writeFileAtomic(target.path, bytes, {
          replaceOnlyIf: (realTarget) => {
            outside = !insideProject(this.root, realTarget);
            return !outside;
          },
          expect: (movedAside) => matchesSnapshot(movedAside, snapshot),
        });
      } catch (error) {
        // A link that leads outside is refused whatever changed; a changed file is read again.
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by the callback, which TypeScript does not follow
        if (outside) throw outsideFailure(this.id, target.name);
        if (error instanceof TargetChangedError && attempt < MAX_WRITE_ATTEMPTS) continue;
        throw await this.writeFailure(error, target.name);
      }
      const { policy, servers } = await target.compiled(state, files, bytes);
      const stats = await fs.stat(target.path, { bigint: true }).catch(() => undefined);
      // A file that replaced ours since the rename is read at the next check (its key differs from any stat).
      const writtenKey = stats?.dev === written.dev && stats.ino === written.ino ? keyOf(stats) : READ_AGAIN;
      const policyKey = target.kind === 'policy' ? writtenKey : files.policy.key;
      const serversKey = target.kind === 'servers' ? writtenKey : files.servers.key;
      const fingerprint = `${policyKey}|${files.agents.key}|${serversKey}`;
      if (target.kind === 'policy') {
        clearTimeout(this.graceTimer);
        this.vanishedAt = undefined;
      }
      // A policy file that vanished keeps denying through its grace, whatever else was written.
      const shown = this.vanishedAt === undefined ? policy : VANISHED_POLICY;
      this.publish({ policy: shown, agents: state.agents, servers, fingerprint }, 'written');
      return this.current;
    }
  }

  /** The error a failed write answers with; memory follows the file when the write may have taken effect. */
  private async writeFailure(error: unknown, name: string): Promise<Error> {
    if (error instanceof ApiError) return error;
    if (error instanceof TargetChangedError) {
      return new ApiError(
        'write_conflict',
        `The ${name} of project ${this.id} kept changing while it was being written (${MAX_WRITE_ATTEMPTS} attempts); nothing was written.`,
      );
    }
    if (error instanceof WriteOutcomeUnknownError) {
      const { state, readAt } = await this.readState();
      this.adopt(state, readAt);
      const code = (error.failure as NodeJS.ErrnoException).code ?? 'error';
      return new ApiError(
        'write_failed',
        `Could not make the ${name} of project ${this.id} durable (${code}), nor take the write back: the service now follows the file as it is (revision ${this.current.policy.revision}).`,
        { outcome: 'unknown', revision: this.current.policy.revision },
      );
    }
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return new ApiError('write_failed', `Could not write the ${name} of project ${this.id} (${code}); nothing was changed.`);
  }

  private enqueue<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Makes a fresh read the state decisions see, except that a policy file that existed and is now
   * missing denies every call until it has been missing for VANISHED_GRACE_MS. `readAt` is when the
   * read began: a miss proves the file absent at that moment only, so only a read begun once the
   * grace is over (counted from the first miss or the last change heard) ends it. A read that
   * took 180 ms under load, begun 11 ms after the file was seen again, ended the grace on its
   * return while the file was back (1 of 24 loaded runs of the 80-swaps test).
   */
  private adopt(read: ProjectState, readAt: number): ProjectChange {
    clearTimeout(this.graceTimer);
    const missing = read.policy.status === 'ok' && !read.policy.fileExists;
    if (!missing) {
      this.vanishedAt = undefined;
      return this.publish(read);
    }
    if (!this.current.policy.fileExists) return this.publish(read);
    // A monotonic time: a wall clock set back during the grace would otherwise deny everything for as long as the step.
    const now = performance.now();
    if (this.vanishedAt === undefined) this.vanishedAt = now;
    else if (readAt - this.vanishedAt >= VANISHED_GRACE_MS) {
      this.vanishedAt = undefined;
      return this.publish(read);
    }
    // The read that can end the grace starts once it is over.
    this.graceTimer = setTimeout(() => void this.reload(), Math.max(0, this.vanishedAt + VANISHED_GRACE_MS - now));
    this.graceTimer.unref();
    return this.publish({ ...read, policy: VANISHED_POLICY });
  }

  /** Sets the state; the listener is told after it is visible, and only of a real change. */
  private publish(next: ProjectState, change?: 'written'): ProjectChange {
    const previous = this.current;
    this.current = next;
    this.noteIfValid(next);
    if (
      next.policy.revision === previous.policy.revision &&
      next.policy.status === previous.policy.status &&
      next.agents === previous.agents &&
      next.servers.revision === previous.servers.revision &&
      next.servers.status === previous.servers.status
    ) {
      return change ?? 'unchanged';
    }
    const outcome = change ?? (next.policy.status === 'ok' ? 'ok' : 'invalid');
    this.listener(outcome);
    return outcome;
  }

  private noteIfValid(state: ProjectState): void {
    const { policy } = state;
    if (policy.status === 'ok' && policy.document !== null)
      this.lastValidDocument = { revision: policy.revision, document: policy.document };
  }

  /**
   * The files' state and what was read. If reading fails in a way the readers did not foresee, an
   * invalid policy (every call denied) rather than the last good state; the empty fingerprint
   * makes the next check read again.
   */
  private async readState(): Promise<{ state: ProjectState; files?: ProjectFiles; readAt: number }> {
    // A monotonic time, like the grace it is compared with.
    const readAt = performance.now();
    try {
      let files = await readProjectFiles(this.root);
      // A write killed while its file was moved aside: the file is put back, never read as missing.
      if (!files.policy.ok && isAbsence(files.policy.code) && (await restoreMovedAside(this.policyPath))) {
        files = await readProjectFiles(this.root);
      }
      if (!files.servers.ok && isAbsence(files.servers.code) && (await restoreMovedAside(this.serversPath))) {
        files = await readProjectFiles(this.root);
      }
      const servers = this.serversHardLinks.judge(files.servers, serversOf(files.servers));
      const [compiled, agents] = await Promise.all([
        policyWithServers(servers, async (catalog) => this.hardLinks.judge(files.policy, await policyOf(files.policy, catalog))),
        agentsOf(files.agents),
      ]);
      return {
        state: {
          policy: compiled,
          agents: sameAgents(this.current.agents, agents),
          servers,
          fingerprint: `${files.policy.key}|${files.agents.key}|${files.servers.key}`,
        },
        files,
        readAt,
      };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // The same failure again is the same revision: an unchanged reload, not a log line every rescan.
      const policy = invalidPolicy(revisionOf(`read-error:${message}`), { message: `cannot read the file (${message})` });
      return { state: { policy, agents: this.current.agents, servers: this.current.servers, fingerprint: READ_AGAIN }, readAt };
    }
  }
}

const outsideFailure = (id: string, name: string): ApiError =>
  new ApiError('write_failed', `The ${name} of project ${id} (or its .ideai folder) is ${OUTSIDE_LINK}; nothing was written.`);

/** One file an API write replaces, under the same rules whichever it is: what it reads, compares, writes and compiles. */
interface FileWrite {
  readonly kind: 'policy' | 'servers';
  readonly path: string;
  /** In messages: "policy file", "servers file". */
  readonly name: string;
  /** The start of the `revision_mismatch` message. */
  readonly changed: string;
  readonly file: (files: ProjectFiles) => FileRead;
  /** The revision `If-Match` is compared with. */
  readonly revision: (state: ProjectState) => string;
  /** Why the file as read must not be written over, if it must not. */
  readonly invalid: (state: ProjectState, options: WriteOptions) => ApiError | undefined;
  readonly bytes: (state: ProjectState) => string;
  /** What decisions see once the bytes are in place. */
  readonly compiled: (state: ProjectState, files: ProjectFiles, bytes: string) => Promise<Pick<ProjectState, 'policy' | 'servers'>>;
}

/** What a policy file that just disappeared reads as during VANISHED_GRACE_MS. */
const VANISHED_POLICY = invalidPolicy(revisionOf('vanished'), {
  message: `the file disappeared; every call is denied until it is back or has been missing for ${VANISHED_GRACE_MS} ms`,
});

/** Keeps the previous object when the agents file did not change, so views can compare by identity. */
function sameAgents(previous: AgentsFileState, next: AgentsFileState): AgentsFileState {
  const same =
    previous.exists === next.exists &&
    previous.error === next.error &&
    previous.agents.length === next.agents.length &&
    previous.agents.every((agent, index) => agent.id === next.agents[index]?.id && agent.name === next.agents[index].name);
  return same ? previous : next;
}
