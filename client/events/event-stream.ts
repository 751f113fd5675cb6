/**
 * Follows the service's live events (`GET /events`, docs/api.md#live-changes-get-events) over one long-lived request
 * on its own connection (never one of the decisions' connections), reconnecting with a growing delay
 * whenever the stream cannot be opened or ends. Events are checked against the schemas; anything
 * else is ignored.
 */
import { Client, type buildConnector } from 'undici';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ApprovalEventSchema, EVENTS_PING_SECONDS, PolicyEventSchema, type ApprovalEvent, type PolicyEvent } from '../../schemas/events.js';
import { describeTransportError, errorText, isRejection, oneLine, rejectionCause } from '../causes.js';
import { readServerSentEvents, type ServerSentEvent } from './server-sent-events.js';

const policyCheck = TypeCompiler.Compile(PolicyEventSchema);
const approvalCheck = TypeCompiler.Compile(ApprovalEventSchema);

/** Longest event accepted: a stream that sends more without a blank line is dropped. */
const MAX_EVENT_CHARS = 64 * 1024;
const FIRST_RETRY_MS = 250;
const LAST_RETRY_MS = 5_000;

/** What to do with the events of `PdpClient.watchEvents()`. Every handler is optional and may not throw. */
export interface EventHandlers {
  /** The stream is open (again): the `policy` events of every followed project come next. */
  onConnect?: (() => void) | undefined;
  /** The stream could not be opened or ended; it is retried after a growing delay (at most 5 s). */
  onDisconnect?: ((cause: string) => void) | undefined;
  onPolicy?: ((event: PolicyEvent) => void) | undefined;
  onApproval?: ((event: ApprovalEvent) => void) | undefined;
}

/** A followed event stream; `close()` ends it for good. */
export interface EventSubscription {
  close(): void;
}

export interface EventStreamTarget {
  origin: string;
  /** `/events` with the base URL's prefix and the `project` query, if any. */
  path: string;
  headers: Record<string, string>;
  /** How a connection is opened when the client goes through the service's unix socket (checked first). */
  connect?: buildConnector.connector | undefined;
}

export function followEvents(target: EventStreamTarget, handlers: EventHandlers, onClosed: () => void): EventSubscription {
  const client = new Client(target.origin, {
    headersTimeout: 10_000,
    // Three missed pings: the connection is dead even if no error says so.
    bodyTimeout: EVENTS_PING_SECONDS * 3 * 1000,
    ...(target.connect === undefined ? {} : { connect: target.connect }),
  });
  const abort = new AbortController();
  let retryTimer: NodeJS.Timeout | undefined;
  let delay = FIRST_RETRY_MS;
  let closed = false;

  const connect = async (): Promise<void> => {
    retryTimer = undefined;
    let cause: string;
    try {
      const response = await client.request({
        method: 'GET',
        path: target.path,
        headers: { ...target.headers, accept: 'text/event-stream' },
        signal: abort.signal,
      });
      if (response.statusCode !== 200) {
        const text = await response.body.text().catch(() => '');
        cause = streamRefusal(response.statusCode, text);
      } else {
        delay = FIRST_RETRY_MS;
        safely(handlers.onConnect);
        cause = await readEvents(response.body, handlers);
      }
    } catch (error) {
      cause = describeTransportError(error);
    }
    if (closed) return;
    safely(handlers.onDisconnect, cause);
    retryTimer = setTimeout(() => void connect(), delay);
    delay = Math.min(delay * 2, LAST_RETRY_MS);
  };

  void connect();
  return {
    close: () => {
      if (closed) return;
      closed = true;
      clearTimeout(retryTimer);
      abort.abort();
      void client.destroy().catch(() => undefined);
      onClosed();
    },
  };
}

function streamRefusal(status: number, text: string): string {
  let code: string | undefined;
  let message: string | undefined;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === 'string') code = body.error.code;
    if (typeof body.error?.message === 'string') message = body.error.message;
  } catch {
    // Not an error body: the status says enough.
  }
  return isRejection(status) ? `rejected (${rejectionCause(status, code, message)})` : `HTTP ${String(status)}`;
}

/** Reads the stream's events until it ends; answers why it ended. */
async function readEvents(body: AsyncIterable<Buffer>, handlers: EventHandlers): Promise<string> {
  try {
    const stopped = await readServerSentEvents(
      body,
      (event) => {
        dispatch(event, handlers);
      },
      MAX_EVENT_CHARS,
    );
    return stopped ?? 'the service ended the stream';
  } catch (error) {
    return oneLine(describeTransportError(error) || errorText(error));
  }
}

function dispatch({ type, data }: ServerSentEvent, handlers: EventHandlers): void {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return;
  }
  if (type === 'policy' && policyCheck.Check(parsed)) safely(handlers.onPolicy, parsed);
  else if (type === 'approval' && approvalCheck.Check(parsed)) safely(handlers.onApproval, parsed);
}

function safely<A extends unknown[]>(handler: ((...args: A) => void) | undefined, ...args: A): void {
  try {
    handler?.(...args);
  } catch {
    // A handler's failure must not stop the stream the next events arrive on.
  }
}
