/**
 * Keeps the counts of usage limits across restarts (docs/design.md#usage-limits): one file,
 * `<PDP_STATE_DIR>/usage-counts.json`, rewritten whole (temp file, fsync, rename, mode 0600) at most
 * once per flush period when a count changed, and at shutdown. Off the decision path: a decision only
 * marks the counts changed. Timed like grants (server/clock.ts): each call is saved as
 * its age when the file was written, with the boot id and the boot clock of that moment; at start,
 * the time that passed since is read on the boot clock within the same boot, else on the wall clock
 * (never less than 0), so neither a wall clock stepped back or forward nor a restart empties a window
 * early. A file that cannot be read restores nothing and is reported.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { SYSTEM_CLOCK, bootTimeOf, type BootTime, type ServiceClock } from '../clock.js';
import { MAX_LIMIT_CALLS, MAX_LIMIT_WINDOW_SECONDS } from '../../schemas/limits.js';
import type { UsageCounts } from './usage-counts.js';

export const USAGE_COUNTS_FILE = 'usage-counts.json';
/** One write a second at most: a crash (not a stop) loses at most the calls of that second. */
const FLUSH_MS = 1000;
const FORMAT = 1;

/** One requester × tool of a project, as saved. */
interface SavedPair {
  readonly project: string;
  readonly folder: string;
  readonly requester: string;
  readonly tool: string;
  readonly windowMs: number;
  /** Ages of the kept calls when the file was written, in ms, oldest first, as little-endian uint32 in base64. */
  readonly ages: string;
}

interface SavedCounts {
  readonly format: number;
  /** The boot the file was written in, and its boot clock then (ms). */
  readonly bootId?: string | undefined;
  readonly uptimeMs?: number | undefined;
  /** The wall time of the write (epoch ms). */
  readonly writtenAt: number;
  readonly pairs: readonly SavedPair[];
}

export interface UsageCountsFileOptions {
  readonly stateDir: string;
  readonly counts: UsageCounts;
  readonly logger: Logger;
  /** Its monotonic and wall times, and its boot reading, judge what a restart restores. */
  readonly clock?: ServiceClock | undefined;
  readonly flushMs?: number | undefined;
}

/**
 * Milliseconds that passed between the write of a file and now, by the clocks a wall clock step does
 * not fool: within one boot the boot clock; after a reboot the wall clock, never less than 0.
 */
export function elapsedSinceWrite(
  saved: Pick<SavedCounts, 'bootId' | 'uptimeMs' | 'writtenAt'>,
  boot: BootTime | undefined,
  wallNow: number,
): number {
  if (boot !== undefined && saved.bootId === boot.id && saved.uptimeMs !== undefined) return Math.max(0, boot.uptimeMs - saved.uptimeMs);
  return Math.max(0, wallNow - saved.writtenAt);
}

export class UsageCountsFile {
  readonly file: string;
  private timer: NodeJS.Timeout | undefined;
  private dirty = false;
  private writing: Promise<void> | undefined;
  private readonly clock: ServiceClock;

  constructor(private readonly options: UsageCountsFileOptions) {
    this.file = path.join(options.stateDir, USAGE_COUNTS_FILE);
    this.clock = options.clock ?? SYSTEM_CLOCK;
    options.counts.listen(this);
  }

  /** Told by the counts that one changed: saved at the next flush. */
  changed(): void {
    this.dirty = true;
  }

  /** Reads the saved counts back, then saves the changed ones every flush period. Never throws. */
  async start(): Promise<void> {
    try {
      this.restore(JSON.parse(await fs.readFile(this.file, 'utf8')) as unknown);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        this.options.logger.warn({ err: error, file: this.file }, 'usage counts not read back: every window starts empty');
      }
    }
    this.timer = setInterval(() => void this.flush(), this.options.flushMs ?? FLUSH_MS);
    this.timer.unref();
  }

  /** Saves the counts if they changed since the last save; a failure is logged and retried at the next period. */
  async flush(): Promise<void> {
    if (this.writing !== undefined) return this.writing;
    if (!this.dirty) return;
    this.dirty = false;
    this.writing = this.write()
      .catch((error: unknown) => {
        this.dirty = true;
        this.options.logger.error({ err: error, file: this.file }, 'usage counts not saved');
      })
      .finally(() => {
        this.writing = undefined;
      });
    return this.writing;
  }

  /** Stops the periodic save and saves what changed. */
  async close(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    await this.writing;
    await this.flush();
  }

  private snapshot(): SavedCounts {
    const { counts } = this.options;
    const now = this.clock.monotonic();
    const boot = bootTimeOf(this.clock);
    const pairs: SavedPair[] = [];
    for (const project of counts.projectIds()) {
      const saved = counts.countsOf(project);
      if (saved === undefined) continue;
      for (const [requester, byTool] of saved.byRequester) {
        for (const [tool, calls] of byTool) {
          const ages: number[] = [];
          for (let index = 0; index < calls.length; index++) {
            const age = now - calls.at(index);
            if (age < calls.windowMs) ages.push(Math.max(0, Math.floor(age)));
          }
          if (ages.length === 0) continue;
          const bytes = Buffer.alloc(ages.length * 4);
          ages.forEach((age, index) => bytes.writeUInt32LE(age, index * 4));
          pairs.push({ project, folder: saved.folder, requester, tool, windowMs: calls.windowMs, ages: bytes.toString('base64') });
        }
      }
    }
    return { format: FORMAT, bootId: boot?.id, uptimeMs: boot?.uptimeMs, writtenAt: this.clock.wall(), pairs };
  }

  private async write(): Promise<void> {
    const text = JSON.stringify(this.snapshot());
    await fs.mkdir(this.options.stateDir, { recursive: true, mode: 0o700 });
    const temp = path.join(this.options.stateDir, `.${USAGE_COUNTS_FILE}.${randomUUID()}.tmp`);
    const handle = await fs.open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(text);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await fs.rename(temp, this.file);
    } catch (error) {
      await fs.rm(temp, { force: true });
      throw error;
    }
  }

  /** Takes back what a file saved, keeping only what the counts could have made. */
  private restore(value: unknown): void {
    if (!isSaved(value)) throw new Error('not a usage counts file of this version');
    const now = this.clock.monotonic();
    const elapsed = elapsedSinceWrite(value, bootTimeOf(this.clock), this.clock.wall());
    for (const pair of value.pairs) {
      if (!isPair(pair)) continue;
      const bytes = Buffer.from(pair.ages, 'base64');
      const times: number[] = [];
      for (let offset = 0; offset + 4 <= bytes.length && times.length < MAX_LIMIT_CALLS; offset += 4) {
        const age = bytes.readUInt32LE(offset) + elapsed;
        if (age < pair.windowMs) times.push(now - age);
      }
      if (times.length > 0) this.options.counts.restore(pair.project, pair.folder, pair.requester, pair.tool, pair.windowMs, times);
    }
  }
}

function isSaved(value: unknown): value is SavedCounts {
  if (typeof value !== 'object' || value === null) return false;
  const saved = value as Record<string, unknown>;
  return saved.format === FORMAT && typeof saved.writtenAt === 'number' && Array.isArray(saved.pairs);
}

function isPair(value: unknown): value is SavedPair {
  if (typeof value !== 'object' || value === null) return false;
  const pair = value as Record<string, unknown>;
  return (
    ['project', 'folder', 'requester', 'tool', 'ages'].every((key) => typeof pair[key] === 'string') &&
    typeof pair.windowMs === 'number' &&
    pair.windowMs > 0 &&
    pair.windowMs <= MAX_LIMIT_WINDOW_SECONDS * 1000
  );
}
