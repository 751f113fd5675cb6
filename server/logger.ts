/**
 * The service's pino logger and where its lines go.
 *
 * Every denial is logged at info (the default audit trail), so a flood of denied calls is a flood of
 * log lines. pino's default stdout destination writes asynchronously, one chunk of at most 16 KiB
 * per completed write, and queues the rest in memory: when the service produces more than that
 * per turn of the event loop (measured with `/decide/batch` at 1,000 projects: 31 MB of queued log
 * text live after 4,000 batches, RSS 474 MB), the queue grows without bound for as long as the load
 * lasts. This destination writes synchronously instead, in chunks of at least
 * {@link LOG_CHUNK_BYTES}: what is queued is bounded by one chunk plus one line, a slow reader of
 * stdout slows the service down rather than filling its memory, and a quiet service still shows its
 * lines within {@link LOG_FLUSH_MS}. What is still queued is written when the process exits.
 */
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** Fields never logged, wherever they appear. */
export const REDACT = ['req.headers.authorization', 'headers.authorization', 'authorization', 'adminToken', 'decideToken', 'token'];

/** Lines are written once this many bytes are queued (one write per ~15 denial lines). */
export const LOG_CHUNK_BYTES = 4096;
/** ...or at the latest after this many milliseconds. */
export const LOG_FLUSH_MS = 200;

/** A synchronous, chunked destination on a file descriptor, flushed at exit. */
export function boundedDestination(fd: number): DestinationStream {
  const destination = pino.destination({ dest: fd, sync: true, minLength: LOG_CHUNK_BYTES, periodicFlush: LOG_FLUSH_MS });
  // `process.exit()` (the graceful shutdown) and an uncaught error both run 'exit' listeners.
  process.on('exit', () => {
    try {
      destination.flushSync();
    } catch {
      // stdout already closed: nothing left to write to.
    }
  });
  return destination;
}

let stdout: DestinationStream | undefined;

/** One bounded destination on stdout per process, shared by every logger (one exit listener). */
export function stdoutDestination(): DestinationStream {
  stdout ??= boundedDestination(1);
  return stdout;
}

/** The service's logger: JSON lines at `PDP_LOG_LEVEL` (default info), secrets redacted, on stdout. */
export function createLogger(options: LoggerOptions = {}, destination: DestinationStream = stdoutDestination()): Logger {
  return pino({ level: process.env['PDP_LOG_LEVEL'] ?? 'info', redact: REDACT, ...options }, destination);
}
