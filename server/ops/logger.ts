/**
 * The service's pino logger and where its lines go.
 *
 * Every denial is logged at info (the default audit trail), so a flood of denied calls is a flood of
 * log lines. pino's default stdout destination writes asynchronously, at most 16 KiB per completed
 * write, and queues the rest without limit: when the service logs more than that per turn of the
 * event loop (measured with `/decide/batch` at 1,000 projects: 31 MB of queued log text live after
 * 4,000 batches, RSS 474 MB) the queue grows for as long as the flood lasts, and while it is
 * backlogged every line re-copies the chunk being filled (~3 µs and 16 KiB of garbage a line; a
 * bounded asynchronous queue still peaked at 305-313 MB RSS on the same flood).
 *
 * So each line is written synchronously (~3 µs): nothing is queued, a line is on stdout when the
 * call that logged it returns, and memory stays flat (peak 230-233 MB on the same flood). The price
 * is Node's own for `process.stdout` on Linux pipes and files: a reader that stops reading stdout
 * stops the service until it reads again (clients time out and deny meanwhile). If writing fails
 * (a full disk behind a redirect), lines wait up to {@link LOG_MAX_QUEUED_BYTES} and are tried
 * again with the next line; beyond that they are dropped and counted
 * (`pdp_log_lines_dropped_total`, `pdp_log_write_errors_total`), never thrown at the caller.
 */
import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/** Fields never logged, wherever they appear. */
const REDACT = ['req.headers.authorization', 'headers.authorization', 'authorization', 'adminToken', 'decideToken', 'token'];

/** Bytes of log lines kept while the destination fails; lines that would go beyond are dropped. */
const LOG_MAX_QUEUED_BYTES = 8 * 1024 * 1024;

let droppedLines = 0;
let writeErrors = 0;

/** Log lines this process dropped because its destination kept failing. */
export function droppedLogLines(): number {
  return droppedLines;
}

/** Failed writes to the log destination (their lines stay queued and are tried again). */
export function logWriteErrors(): number {
  return writeErrors;
}

/** A synchronous destination on a file descriptor: a line is written before `log()` returns. */
export function synchronousDestination(fd: number, maxQueuedBytes = LOG_MAX_QUEUED_BYTES): DestinationStream {
  const destination = pino.destination({ dest: fd, sync: true, maxLength: maxQueuedBytes });
  destination.on('drop', () => {
    droppedLines++;
  });
  // A closed pipe is silenced by pino; any other error is counted here instead of being thrown
  // out of whatever call logged the line (a decision, a reload): enforcement matters more than its log.
  // (pino's own listener re-emits an error it does not silence: count each error once.)
  let last: unknown;
  destination.on('error', (error: unknown) => {
    if (error !== last) writeErrors++;
    last = error;
  });
  return destination;
}

let stdout: DestinationStream | undefined;

/** One synchronous destination on stdout per process, shared by every logger. */
function stdoutDestination(): DestinationStream {
  stdout ??= synchronousDestination(1);
  return stdout;
}

/**
 * The service's logger: JSON lines at `options.level` (default info; PDP_LOG_LEVEL through
 * server/config.ts), secrets redacted, on stdout.
 */
export function createLogger(options: LoggerOptions = {}, destination: DestinationStream = stdoutDestination()): Logger {
  return pino({ level: 'info', redact: REDACT, ...options }, destination);
}
