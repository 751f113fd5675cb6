/**
 * Keeps the recent-decisions rings across restarts (docs/api.md#the-recent-decisions-ring-on-disk):
 * one file per project under `<PDP_STATE_DIR>/recent-decisions/`, rewritten whole (temp file, fsync,
 * rename) at most once per flush period and only when the project decided something since, at most
 * {@link RINGS_PER_FLUSH} projects per period, in turn. Off the
 * decision path: a decision only marks its ring dirty; the flush copies the ring (32 KB at 1,000
 * entries) and writes it on the thread pool. A file that cannot be read back is an empty history
 * and a warning, never a failed start.
 */
import { randomUUID } from 'node:crypto';
import fsCallbacks, { promises as fs } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Logger } from 'pino';
import type { RecentDecisions, RingSnapshot } from './recent-decisions.js';

const FOLDER = 'recent-decisions';
const SUFFIX = '.json';
/** One write per project per second at most: what a restart can lose is that second. */
const FLUSH_MS = 1000;
/**
 * Rings saved per flush: 32 of 43 KB is 1.4 MB a second, while saving all 1,000 rings of a busy
 * service every second cost 1,000 projects 12-18% of their decision throughput (bench scale).
 */
const RINGS_PER_FLUSH = 32;
/** 1,000 records (43 KB in base64) and their names; anything much bigger is not one of ours. */
const MAX_FILE_BYTES = 8 * 1024 * 1024;
const FORMAT = 1;

interface SavedRing {
  readonly format: number;
  readonly project: string;
  readonly littleEndian: boolean;
  readonly names: readonly string[];
  /** The records, oldest first, base64 (see recent-decisions.ts for their layout). */
  readonly records: string;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

export interface RecentDecisionsFileOptions {
  readonly stateDir: string;
  readonly recent: RecentDecisions;
  readonly logger: Logger;
  readonly flushMs?: number | undefined;
}

export class RecentDecisionsFile {
  private readonly folder: string;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private failing = false;

  constructor(private readonly options: RecentDecisionsFileOptions) {
    this.folder = path.join(options.stateDir, FOLDER);
  }

  /** Reads back every saved ring, then saves the dirty ones every flush period. Never throws. */
  async start(): Promise<void> {
    const { logger } = this.options;
    try {
      await fs.mkdir(this.folder, { recursive: true, mode: 0o700 });
      const names = await fs.readdir(this.folder);
      // Left by a crash in the middle of a save: the file it was to replace is still whole.
      for (const name of names.filter((one) => one.endsWith('.tmp'))) await fs.rm(path.join(this.folder, name), { force: true });
      for (const name of names.filter((one) => one.endsWith(SUFFIX))) await this.load(name);
    } catch (error) {
      logger.warn({ err: error, folder: this.folder }, 'recent decisions not read back: starting with an empty history');
    }
    this.timer = setInterval(() => void this.flush(), this.options.flushMs ?? FLUSH_MS);
    this.timer.unref();
  }

  private async load(name: string): Promise<void> {
    const file = path.join(this.folder, name);
    let project: string;
    try {
      project = decodeURIComponent(name.slice(0, -SUFFIX.length));
    } catch {
      // Not a name this service writes: skipped, so it cannot keep the other rings from loading.
      this.options.logger.warn({ file }, `${name} is not a saved ring (its name is not a %-encoded project id): not read back`);
      return;
    }
    const problem = await this.restore(file, project);
    if (problem !== undefined) {
      this.options.logger.warn(
        { file, project },
        `recent decisions of project ${project} not read back (${problem}): its history starts empty`,
      );
    }
  }

  /** Puts a saved ring back; why it could not, or undefined. */
  private async restore(file: string, project: string): Promise<string | undefined> {
    let saved: Partial<SavedRing> | null;
    try {
      const stats = await fs.stat(file);
      if (!stats.isFile() || stats.size > MAX_FILE_BYTES) return 'not a file of a sane size';
      saved = JSON.parse(await fs.readFile(file, 'utf8')) as Partial<SavedRing> | null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
    if (
      typeof saved !== 'object' ||
      saved?.format !== FORMAT ||
      saved.project !== project ||
      saved.littleEndian !== LITTLE_ENDIAN ||
      !Array.isArray(saved.names) ||
      typeof saved.records !== 'string'
    ) {
      return 'not a saved ring of this format';
    }
    const restored = this.options.recent.restore(project, { names: saved.names, records: Buffer.from(saved.records, 'base64') });
    return restored ? undefined : 'a record is invalid';
  }

  /** Saves the rings that recorded a decision since their last save (at most `limit` of them); one flush at a time. */
  flush(limit = RINGS_PER_FLUSH): Promise<void> {
    this.flushing ??= this.writeDirty(limit).finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async writeDirty(limit: number): Promise<void> {
    for (const { project, snapshot } of this.options.recent.takeDirty(limit)) {
      try {
        await writeAtomically(this.fileOf(project), savedRingText(project, snapshot));
        this.failing = false;
      } catch (error) {
        // Once per run of failures: a full disk would otherwise log every second.
        if (!this.failing) this.options.logger.warn({ err: error, project }, 'recent decisions not saved');
        this.failing = true;
      }
    }
  }

  /** Forgets the saved history of a project that is gone. */
  async forget(project: string): Promise<void> {
    await fs.rm(this.fileOf(project), { force: true }).catch(() => undefined);
  }

  /** Told of every project change (server/projects/project-changes.ts): a removed project's saved history goes. */
  projectChanged(project: string, change: string): void {
    if (change === 'removed') void this.forget(project);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flushing;
    await this.flush(Infinity);
  }

  private fileOf(project: string): string {
    return path.join(this.folder, `${encodeURIComponent(project)}${SUFFIX}`);
  }
}

/**
 * The text of a {@link SavedRing}, as `JSON.stringify` writes it, but with the base64 records (43 KB
 * for a full ring, no character to escape) put between quotes as they are: `JSON.stringify` scanning
 * them was most of the 3.1-3.7 ms that copying and encoding 32 full rings took (0.25-0.35 ms now).
 */
export function savedRingText(project: string, snapshot: RingSnapshot): string {
  const head: Omit<SavedRing, 'records'> = { format: FORMAT, project, littleEndian: LITTLE_ENDIAN, names: snapshot.names };
  const records = Buffer.from(snapshot.records.buffer, snapshot.records.byteOffset, snapshot.records.byteLength).toString('base64');
  return `${JSON.stringify(head).slice(0, -1)},"records":"${records}"}`;
}

const open = promisify(fsCallbacks.open);
const write = promisify(fsCallbacks.write);
const fsync = promisify(fsCallbacks.fsync);
const close = promisify(fsCallbacks.close);

/**
 * Temp file, fsync, rename. Through file descriptors rather than `FileHandle`: 1.0 against 1.2 ms
 * of CPU per 44 KB file, which a busy service pays 32 times a second.
 */
async function writeAtomically(file: string, text: string): Promise<void> {
  const temp = `${file}.${randomUUID()}.tmp`;
  try {
    const fd = await open(temp, 'w', 0o600);
    try {
      const bytes = Buffer.from(text);
      for (let written = 0; written < bytes.length;) {
        written += (await write(fd, bytes, written, bytes.length - written)).bytesWritten;
      }
      await fsync(fd);
    } finally {
      await close(fd);
    }
    await fs.rename(temp, file);
  } catch (error) {
    await fs.rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}
