/**
 * The one file under the state folder that keeps temporary grants and armed `once` approvals across
 * restarts (docs/api.md#approvals-and-temporary-grants). Pending requests are not kept: a restart forgets them, and the agent's
 * next call simply opens a new one.
 *
 * Writes are synchronous: they only follow a human's answer, a grant change or the consumption of a
 * `once`, and being synchronous they can never interleave, so the file always holds the state of the
 * last change, and a `once` is gone from disk before the call it allows runs.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { checkStrictJson, lineColumn } from '../domain/strict-json.js';

export const STATE_FILE_NAME = 'approvals.json';
/** Where a file that could not be loaded is moved, so that it can still be looked at. */
export const CORRUPT_FILE_NAME = `${STATE_FILE_NAME}.corrupt`;
/** Larger than any state the limits allow in practice; a bigger file is not read (it grants nothing). */
const MAX_STATE_BYTES = 64 * 1024 * 1024;
/** The file nests 8 deep (state, grants, grant, conditions, tool, argument, condition, values): anything deeper is not a state file. */
const MAX_STATE_DEPTH = 8;

const PersistedGrantSchema = Type.Object(
  {
    project: Type.String(),
    id: Type.String(),
    requester: Type.String(),
    tools: Type.Array(Type.String()),
    createdAt: Type.String(),
    expiresAt: Type.String(),
    /** The identity of the project folder it was made for (server/projects/folder-identity.ts). */
    folder: Type.Optional(Type.String()),
    /** Its end on the boot clock of the file's `bootId` (server/clock.ts), in ms since that boot. */
    expiresAtBootMs: Type.Optional(Type.Number()),
    /** The conditions it keeps, by tool (absent in files of the previous version: none); checked grant by grant on restore. */
    conditions: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false },
);
export type PersistedGrant = Static<typeof PersistedGrantSchema>;

const PersistedOnceSchema = Type.Object(
  {
    project: Type.String(),
    approvalId: Type.String(),
    requester: Type.String(),
    tool: Type.String(),
    issueRef: Type.Optional(Type.String()),
    armedAt: Type.String(),
    expiresAt: Type.String(),
    folder: Type.Optional(Type.String()),
    expiresAtBootMs: Type.Optional(Type.Number()),
  },
  { additionalProperties: false },
);
export type PersistedOnce = Static<typeof PersistedOnceSchema>;

const StateFileSchema = Type.Object(
  {
    version: Type.Literal(1),
    /** The boot the file was written in (server/clock.ts). */
    bootId: Type.Optional(Type.String()),
    /** The latest wall time the service had seen when it wrote the file. */
    seenAt: Type.Optional(Type.String()),
    grants: Type.Array(PersistedGrantSchema),
    onces: Type.Array(PersistedOnceSchema),
  },
  { additionalProperties: false },
);

export interface ApprovalsState {
  readonly bootId?: string | undefined;
  readonly seenAt?: string | undefined;
  readonly grants: readonly PersistedGrant[];
  readonly onces: readonly PersistedOnce[];
}

export interface LoadedState extends ApprovalsState {
  /** Why nothing was loaded, for the caller to log; absent when the file was read or did not exist. */
  readonly warning?: string;
}

const EMPTY: ApprovalsState = { grants: [], onces: [] };

export class ApprovalsStateFile {
  readonly file: string;
  /** Set when the folder cannot be trusted or made: nothing is read from it and every write fails. */
  private unusable: string | undefined;

  constructor(readonly directory: string) {
    this.file = path.join(directory, STATE_FILE_NAME);
  }

  /** Reads the file; never throws: a missing file is an empty state, an unreadable or corrupt one is an empty state and a warning. */
  load(): LoadedState {
    this.unusable = checkFolder(this.directory);
    if (this.unusable !== undefined)
      return { ...EMPTY, warning: `Approvals state not loaded: ${this.unusable}; no grant or approval is active.` };
    removeDeadTemps(this.directory);
    let text: string;
    try {
      text = readOwnFile(this.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return EMPTY;
      return { ...EMPTY, warning: this.setAside(`cannot be read (${(error as Error).message})`) };
    }
    // Strict first: of a key given twice, JSON.parse keeps the last value while a reader sees the first.
    const strict = checkStrictJson(text, MAX_STATE_DEPTH);
    if (strict !== null && strict.kind !== 'syntax') {
      const { line, column } = lineColumn(text, strict.offset);
      const problem =
        strict.kind === 'duplicate'
          ? `has a duplicate key ${JSON.stringify(strict.key.slice(0, 80))} at line ${line}, column ${column}`
          : `is nested deeper than ${MAX_STATE_DEPTH} levels at line ${line}, column ${column}`;
      return { ...EMPTY, warning: this.setAside(problem) };
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
      // Unreachable unless the two parsers disagree: the stricter one wins.
      if (strict !== null) throw new SyntaxError(`unexpected character at offset ${strict.offset}`);
    } catch (error) {
      return { ...EMPTY, warning: this.setAside(`is not valid JSON (${(error as Error).message})`) };
    }
    if (!Value.Check(StateFileSchema, parsed)) {
      const first = Value.Errors(StateFileSchema, parsed).First();
      return {
        ...EMPTY,
        warning: this.setAside(`does not have the expected shape (${first?.path || '/'}: ${first?.message ?? 'invalid'})`),
      };
    }
    return { bootId: parsed.bootId, seenAt: parsed.seenAt, grants: parsed.grants, onces: parsed.onces };
  }

  /**
   * Replaces the file atomically and durably: a new file created with O_EXCL | O_NOFOLLOW, mode 0600,
   * in the same folder, fsynced, renamed over the old one, then the folder fsynced. Throws on failure.
   */
  write(state: ApprovalsState): void {
    if (this.unusable !== undefined) throw new Error(`approvals state folder ${this.unusable}`);
    const text = `${JSON.stringify({ version: 1, bootId: state.bootId, seenAt: state.seenAt, grants: state.grants, onces: state.onces }, null, 2)}\n`;
    const temp = path.join(this.directory, `.${STATE_FILE_NAME}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    const fd = openSync(temp, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
    try {
      try {
        writeFileSync(fd, text);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, this.file);
    } catch (error) {
      rmSync(temp, { force: true });
      throw error;
    }
    syncFolder(this.directory);
  }

  /** Moves an unloadable file aside (best effort) and words the warning the caller logs. */
  private setAside(problem: string): string {
    const corrupt = path.join(this.directory, CORRUPT_FILE_NAME);
    let kept: string;
    try {
      renameSync(this.file, corrupt);
      kept = `it was moved to ${corrupt}`;
    } catch (error) {
      kept = `it could not be moved aside (${(error as Error).message}) and the next change replaces it`;
    }
    return `Approvals state file ${this.file} ${problem}: no grant or approval from it is active; ${kept}.`;
  }
}

/** The temp file of a write (see {@link ApprovalsStateFile.write}): the writer's pid, then 12 hex digits. */
const TEMP_FILE = new RegExp(`^\\.${STATE_FILE_NAME.replaceAll('.', '\\.')}\\.(\\d+)\\.[0-9a-f]{12}\\.tmp$`);
/** A write takes milliseconds: a temp file this old belongs to no write under way, whatever its pid. */
const DEAD_TEMP_MS = 60_000;

/** Removes the temp files of writes killed half-way (a crash before the rename): those of a process that is gone, or old. Best effort. */
function removeDeadTemps(directory: string): void {
  try {
    for (const name of readdirSync(directory)) {
      const pid = Number(TEMP_FILE.exec(name)?.[1] ?? Number.NaN);
      if (Number.isNaN(pid) || pid === process.pid) continue;
      const file = path.join(directory, name);
      const stats = lstatSync(file);
      if (stats.isFile() && (!processAlive(pid) || Date.now() - stats.mtimeMs > DEAD_TEMP_MS)) rmSync(file, { force: true });
    }
  } catch {
    // What cannot be removed now takes a little room, and grants nothing: it is never read.
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Makes the folder if needed (mode 0700) and checks it is a real folder of this user that nobody
 * else may write to, since whatever the file says is granted; returns the problem, if any.
 */
function checkFolder(directory: string): string | undefined {
  try {
    mkdirSync(directory, { recursive: true, mode: 0o700 });
    const stats = lstatSync(directory);
    if (stats.isSymbolicLink()) return `${directory} is a symbolic link`;
    if (!stats.isDirectory()) return `${directory} is not a folder`;
    if (process.getuid !== undefined && stats.uid !== process.getuid()) return `${directory} belongs to another user`;
    if ((stats.mode & 0o022) !== 0) return `${directory} is writable by group or others`;
    return undefined;
  } catch (error) {
    return `${directory} cannot be used (${(error as Error).message})`;
  }
}

/** Reads a regular file of this user that only this user may write, never through a link and never blocking on a FIFO. */
function readOwnFile(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new Error('not a regular file');
    if (process.getuid !== undefined && stats.uid !== process.getuid()) throw new Error('it belongs to another user');
    if ((stats.mode & 0o022) !== 0) throw new Error('it is writable by group or others');
    if (stats.size > MAX_STATE_BYTES) throw new Error(`larger than ${MAX_STATE_BYTES} bytes`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function syncFolder(directory: string): void {
  const fd = openSync(directory, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
