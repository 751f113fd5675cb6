/**
 * Optional NDJSON audit trail of decisions (`PDP_AUDIT_FILE`): one JSON object per line,
 * appended through a buffered stream and rotated by size to `<path>.1` … `<path>.<maxFiles>`.
 *
 * The decision path must never wait for or fail because of the audit trail: {@link AuditFile.write}
 * only serializes and queues; I/O errors go to `onError`, and when the disk cannot keep up the
 * records beyond `maxBufferedBytes` are dropped and counted rather than held in memory without bound.
 *
 * Only the fields of {@link AuditRecord} are written, picked one by one: a caller that passes a
 * bigger object (a request, headers, a token) cannot leak it into the file. Every text field is cut
 * at {@link MAX_AUDITED_LENGTH} characters (and named in `truncated`), so forged calls with long
 * names cannot rotate the real lines out faster than their count does.
 */
import { createWriteStream, mkdirSync, statSync, type WriteStream } from 'node:fs';
import { rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Decision } from '../../schemas/api.js';

/** One line of the audit trail. */
export interface AuditRecord {
  /** ISO 8601 time of the decision. */
  at: string;
  decisionId: string;
  project: string;
  /** The requester as it was asked (`""`, `"mcp"`, an agent id, `ticket-assistant:…`). */
  requester: string;
  requesterKind: Decision['requester']['kind'];
  tool: string;
  access: Decision['tool']['access'];
  allow: boolean;
  reason: Decision['reason'];
  source: Decision['source'];
  revision: string;
}

/** Longest text kept in one field of an audit line; a longer one is cut, ends with `…` and is named in the line's `truncated`. */
const MAX_AUDITED_LENGTH = 256;

/** Options of {@link createAuditFile}. */
export interface AuditFileOptions {
  /** Rotate before the current file would exceed this size (default 10 MiB). */
  maxBytes?: number;
  /** Rotated files kept: `<path>.1` (newest) to `<path>.<maxFiles>` (default 5). */
  maxFiles?: number;
  /** Records are dropped while this many bytes are already queued (default 8 MiB). */
  maxBufferedBytes?: number;
  /** Receives every I/O error; the audit trail keeps going (reopens) after it. */
  onError?: (error: Error) => void;
}

/** Counters of an {@link AuditFile}, for diagnostics and tests. */
export interface AuditFileStats {
  /** Records handed to the file stream. */
  written: number;
  /** Records dropped (queue full, file unavailable, or written after close). */
  dropped: number;
  /** Rotations completed. */
  rotations: number;
}

/** An append-only NDJSON audit trail. */
export interface AuditFile {
  /** The file being appended to. */
  readonly path: string;
  /** Queues one record; never throws and never waits for the disk. */
  write(record: AuditRecord): void;
  /** Counters since creation. */
  stats(): AuditFileStats;
  /** Flushes what is queued and closes the file; later writes are dropped. Never rejects. */
  close(): Promise<void>;
}

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_MAX_FILES = 5;
const DEFAULT_MAX_BUFFERED_BYTES = 8 * 1024 * 1024;
/** After an I/O error, the file is reopened on the first write at least this long after it. */
const REOPEN_DELAY_MS = 1_000;

/** The audit record of a decision answered at `at`. */
export function auditRecordOf(decision: Decision, requester: string, at: Date = new Date()): AuditRecord {
  return {
    at: at.toISOString(),
    decisionId: decision.decisionId,
    project: decision.project,
    requester,
    requesterKind: decision.requester.kind,
    tool: decision.tool.name,
    access: decision.tool.access,
    allow: decision.allow,
    reason: decision.reason,
    source: decision.source,
    revision: decision.revision,
  };
}

/** Serializes exactly the fields of {@link AuditRecord}, in a stable order, each free text bounded. */
function toLine(record: AuditRecord): string {
  const truncated: string[] = [];
  const bounded = (field: string, text: string): string => {
    if (text.length <= MAX_AUDITED_LENGTH) return text;
    truncated.push(field);
    return `${text.slice(0, MAX_AUDITED_LENGTH - 1)}…`;
  };
  return `${JSON.stringify({
    at: record.at,
    decisionId: bounded('decisionId', record.decisionId),
    project: bounded('project', record.project),
    requester: bounded('requester', record.requester),
    requesterKind: record.requesterKind,
    tool: bounded('tool', record.tool),
    access: record.access,
    allow: record.allow,
    reason: record.reason,
    source: record.source,
    revision: bounded('revision', record.revision),
    truncated: truncated.length > 0 ? truncated : undefined,
  })}\n`;
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * Opens (creating folders as needed) the audit trail at `path`. Throws only for invalid options;
 * a file that cannot be opened is reported through `onError` and retried on later writes.
 */
export function createAuditFile(path: string, options: AuditFileOptions = {}): AuditFile {
  return new RotatingAuditFile(path, options);
}

/** Only this class touches the stream; rotation queues lines in `pending` until the new file is open. */
class RotatingAuditFile implements AuditFile {
  private readonly maxBytes: number;
  private readonly maxFiles: number;
  private readonly maxBufferedBytes: number;
  private readonly counters: AuditFileStats = { written: 0, dropped: 0, rotations: 0 };
  private stream: WriteStream | undefined;
  /** Bytes in the current file, including what is queued in the stream. */
  private fileBytes = 0;
  /** Lines written while a rotation is in progress. */
  private pending: string[] = [];
  private pendingBytes = 0;
  /** Set while the files are being renamed; cleared synchronously when the new file is open. */
  private rotating: Promise<void> | undefined;
  private brokenSince: number | undefined;
  private closed = false;

  constructor(
    readonly path: string,
    private readonly options: AuditFileOptions,
  ) {
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    if (!(Number.isInteger(this.maxBytes) && this.maxBytes > 0)) throw new RangeError('maxBytes must be a positive integer');
    if (!(Number.isInteger(this.maxFiles) && this.maxFiles >= 1)) throw new RangeError('maxFiles must be an integer >= 1');
    if (!(this.maxBufferedBytes > 0)) throw new RangeError('maxBufferedBytes must be positive');
    this.open();
  }

  write(record: AuditRecord): void {
    if (this.closed) {
      this.counters.dropped++;
      return;
    }
    let line: string;
    try {
      line = toLine(record);
    } catch (error) {
      this.report(error);
      this.counters.dropped++;
      return;
    }
    const bytes = Buffer.byteLength(line);
    if (this.rotating !== undefined) {
      this.queue(line, bytes);
      return;
    }
    if (this.stream === undefined && this.brokenSince !== undefined && Date.now() - this.brokenSince >= REOPEN_DELAY_MS) this.open();
    if (this.stream === undefined || this.stream.writableLength + bytes > this.maxBufferedBytes) {
      this.counters.dropped++;
      return;
    }
    if (this.fileBytes > 0 && this.fileBytes + bytes > this.maxBytes) {
      this.pending.push(line);
      this.pendingBytes = bytes;
      this.rotating = this.rotate().catch((error: unknown) => {
        this.rotating = undefined;
        this.report(error);
      });
      return;
    }
    this.append(line);
  }

  stats(): AuditFileStats {
    return { ...this.counters };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      while (this.rotating !== undefined) await this.rotating;
      if (this.stream !== undefined) {
        const ending = this.stream;
        this.stream = undefined;
        await endStream(ending);
      }
    } catch (error) {
      this.report(error);
    }
  }

  private queue(line: string, bytes: number): void {
    if (this.pendingBytes + bytes > this.maxBufferedBytes) {
      this.counters.dropped++;
      return;
    }
    this.pending.push(line);
    this.pendingBytes += bytes;
  }

  private report(error: unknown): void {
    try {
      this.options.onError?.(toError(error));
    } catch {
      // A throwing error handler must not reach the decision path either.
    }
  }

  private open(): void {
    try {
      mkdirSync(dirname(this.path), { recursive: true });
      try {
        this.fileBytes = statSync(this.path).size;
      } catch (error) {
        if (!isMissing(error)) throw error;
        this.fileBytes = 0;
      }
      const opened = createWriteStream(this.path, { flags: 'a', mode: 0o600 });
      opened.on('error', (error) => {
        this.report(error);
        if (this.stream === opened) {
          this.stream = undefined;
          this.brokenSince = Date.now();
        }
        opened.destroy();
      });
      this.stream = opened;
      this.brokenSince = undefined;
    } catch (error) {
      this.report(error);
      this.stream = undefined;
      this.brokenSince = Date.now();
    }
  }

  /** Ends the current file and shifts `<path>` → `<path>.1` → … (the oldest beyond maxFiles is overwritten). */
  private async shiftFiles(): Promise<boolean> {
    const ending = this.stream;
    this.stream = undefined;
    if (ending !== undefined) await endStream(ending);
    try {
      for (let index = this.maxFiles - 1; index >= 1; index--) {
        try {
          await rename(`${this.path}.${String(index)}`, `${this.path}.${String(index + 1)}`);
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
      await rename(this.path, `${this.path}.1`);
      this.counters.rotations++;
    } catch (error) {
      if (!isMissing(error)) {
        this.report(error);
        this.open();
        return false;
      }
    }
    this.open();
    return true;
  }

  /** Rotates, then appends the lines queued meanwhile, rotating again whenever a file is full. */
  private async rotate(): Promise<void> {
    let next = 0;
    for (;;) {
      // When the files cannot be renamed, keep appending to the same file rather than losing records.
      const rotated = await this.shiftFiles();
      while (next < this.pending.length && this.stream !== undefined) {
        const line = this.pending[next] ?? '';
        if (rotated && this.fileBytes > 0 && this.fileBytes + Buffer.byteLength(line) > this.maxBytes) break;
        this.append(line);
        next++;
      }
      if (next >= this.pending.length || this.stream === undefined) break;
    }
    this.counters.dropped += this.pending.length - next;
    this.pending = [];
    this.pendingBytes = 0;
    this.rotating = undefined;
  }

  private append(line: string): void {
    if (this.stream === undefined) {
      this.counters.dropped++;
      return;
    }
    this.fileBytes += Buffer.byteLength(line);
    this.counters.written++;
    this.stream.write(line);
  }
}

function endStream(ending: WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (ending.destroyed) {
      resolve();
      return;
    }
    ending.once('close', () => {
      resolve();
    });
    ending.end();
  });
}
