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
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxFiles = options.maxFiles ?? DEFAULT_MAX_FILES;
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
  if (!(Number.isInteger(maxBytes) && maxBytes > 0)) throw new RangeError('maxBytes must be a positive integer');
  if (!(Number.isInteger(maxFiles) && maxFiles >= 1)) throw new RangeError('maxFiles must be an integer >= 1');
  if (!(maxBufferedBytes > 0)) throw new RangeError('maxBufferedBytes must be positive');
  const report = (error: unknown): void => {
    try {
      options.onError?.(toError(error));
    } catch {
      // A throwing error handler must not reach the decision path either.
    }
  };

  const stats: AuditFileStats = { written: 0, dropped: 0, rotations: 0 };
  let stream: WriteStream | undefined;
  /** Bytes in the current file, including what is queued in the stream. */
  let fileBytes = 0;
  /** Lines written while a rotation is in progress. */
  let pending: string[] = [];
  let pendingBytes = 0;
  /** Set while the files are being renamed; cleared synchronously when the new file is open. */
  let rotating: Promise<void> | undefined;
  let brokenSince: number | undefined;
  let closed = false;

  const open = (): void => {
    try {
      mkdirSync(dirname(path), { recursive: true });
      try {
        fileBytes = statSync(path).size;
      } catch (error) {
        if (!isMissing(error)) throw error;
        fileBytes = 0;
      }
      const opened = createWriteStream(path, { flags: 'a', mode: 0o600 });
      opened.on('error', (error) => {
        report(error);
        if (stream === opened) {
          stream = undefined;
          brokenSince = Date.now();
        }
        opened.destroy();
      });
      stream = opened;
      brokenSince = undefined;
    } catch (error) {
      report(error);
      stream = undefined;
      brokenSince = Date.now();
    }
  };

  const endStream = (ending: WriteStream): Promise<void> =>
    new Promise((resolve) => {
      if (ending.destroyed) {
        resolve();
        return;
      }
      ending.once('close', () => {
        resolve();
      });
      ending.end();
    });

  /** Ends the current file and shifts `<path>` → `<path>.1` → … (the oldest beyond maxFiles is overwritten). */
  const shiftFiles = async (): Promise<boolean> => {
    const ending = stream;
    stream = undefined;
    if (ending !== undefined) await endStream(ending);
    try {
      for (let index = maxFiles - 1; index >= 1; index--) {
        try {
          await rename(`${path}.${index}`, `${path}.${index + 1}`);
        } catch (error) {
          if (!isMissing(error)) throw error;
        }
      }
      await rename(path, `${path}.1`);
      stats.rotations++;
    } catch (error) {
      if (!isMissing(error)) {
        report(error);
        open();
        return false;
      }
    }
    open();
    return true;
  };

  /** Rotates, then appends the lines queued meanwhile, rotating again whenever a file is full. */
  const rotate = async (): Promise<void> => {
    let next = 0;
    for (;;) {
      // When the files cannot be renamed, keep appending to the same file rather than losing records.
      const rotated = await shiftFiles();
      while (next < pending.length && stream !== undefined) {
        const line = pending[next] ?? '';
        if (rotated && fileBytes > 0 && fileBytes + Buffer.byteLength(line) > maxBytes) break;
        append(line);
        next++;
      }
      if (next >= pending.length || stream === undefined) break;
    }
    stats.dropped += pending.length - next;
    pending = [];
    pendingBytes = 0;
    rotating = undefined;
  };

  const append = (line: string): void => {
    if (stream === undefined) {
      stats.dropped++;
      return;
    }
    fileBytes += Buffer.byteLength(line);
    stats.written++;
    stream.write(line);
  };

  open();

  return {
    path,
    write(record) {
      if (closed) {
        stats.dropped++;
        return;
      }
      let line: string;
      try {
        line = toLine(record);
      } catch (error) {
        report(error);
        stats.dropped++;
        return;
      }
      const bytes = Buffer.byteLength(line);
      if (rotating !== undefined) {
        if (pendingBytes + bytes > maxBufferedBytes) {
          stats.dropped++;
          return;
        }
        pending.push(line);
        pendingBytes += bytes;
        return;
      }
      if (stream === undefined && brokenSince !== undefined && Date.now() - brokenSince >= REOPEN_DELAY_MS) open();
      if (stream === undefined || stream.writableLength + bytes > maxBufferedBytes) {
        stats.dropped++;
        return;
      }
      if (fileBytes > 0 && fileBytes + bytes > maxBytes) {
        pending.push(line);
        pendingBytes = bytes;
        rotating = rotate().catch((error: unknown) => {
          rotating = undefined;
          report(error);
        });
        return;
      }
      append(line);
    },
    stats: () => ({ ...stats }),
    async close() {
      if (closed) return;
      closed = true;
      try {
        while (rotating !== undefined) await rotating;
        if (stream !== undefined) {
          const ending = stream;
          stream = undefined;
          await endStream(ending);
        }
      } catch (error) {
        report(error);
      }
    },
  };
}
