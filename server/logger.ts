/**
 * The service's pino logger and where its lines go.
 *
 * Every denial is logged at info (the default audit trail), so a flood of denied calls is a flood of
 * log lines. pino's default stdout destination writes asynchronously, one chunk of at most 16 KiB
 * per completed write, and queues the rest in memory: when the service produces more than that
 * per turn of the event loop (measured with `/decide/batch` at 1,000 projects: 31 MB of queued log
 * text live after 4,000 batches, RSS 474 MB), the queue grows without bound for as long as the load
 * lasts. This destination writes each line synchronously instead (~3 µs a line here): nothing is
 * queued, a line is on stdout when the call that logged it returns, and a slow reader of stdout
 * slows the service down rather than filling its memory.
 */
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** Fields never logged, wherever they appear. */
export const REDACT = ['req.headers.authorization', 'headers.authorization', 'authorization', 'adminToken', 'decideToken', 'token'];

/** A synchronous destination on a file descriptor: every line is written before `log()` returns. */
export function synchronousDestination(fd: number): DestinationStream {
  return pino.destination({ dest: fd, sync: true });
}

let stdout: DestinationStream | undefined;

/** One synchronous destination on stdout per process, shared by every logger. */
export function stdoutDestination(): DestinationStream {
  stdout ??= synchronousDestination(1);
  return stdout;
}

/** The service's logger: JSON lines at `PDP_LOG_LEVEL` (default info), secrets redacted, on stdout. */
export function createLogger(options: LoggerOptions = {}, destination: DestinationStream = stdoutDestination()): Logger {
  return pino({ level: process.env['PDP_LOG_LEVEL'] ?? 'info', redact: REDACT, ...options }, destination);
}
