/**
 * The live events of `GET /events` (docs/api.md#live-changes-get-events): Server-Sent Events streams that receive a
 * `policy` event per project when they open, then one whenever a project's revision or status
 * changes, and `approval` events. Callers publish only once a change is visible to decisions.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { EVENTS_PING_SECONDS, type ApprovalEvent, type PolicyEvent } from '../../schemas/events.js';
import type { Projects } from '../projects/projects.js';

export interface LiveEventsOptions {
  /** Every project served now, with its status (for the events sent when a stream opens). */
  readonly projects: Pick<Projects, 'summaries'>;
  readonly logger: Logger;
  readonly pingMs?: number | undefined;
  /** A reader that lets more than this many bytes pile up is dropped rather than buffered. */
  readonly maxBufferedBytes?: number | undefined;
  /** Streams open at once, in all (kept well below the connection limit so that `/decide` always has room). */
  readonly maxStreams?: number | undefined;
  /** Streams open at once from one client address. */
  readonly maxStreamsPerClient?: number | undefined;
}

interface Stream {
  readonly project: string | undefined;
  readonly response: ServerResponse;
  readonly client: string;
  /** Frames waiting for the next flush. */
  pending: string;
}

export const DEFAULT_MAX_STREAMS_PER_CLIENT = 32;

/** Why a stream cannot open now, or undefined. */
export type StreamRefusal = { readonly limit: 'total' | 'client'; readonly max: number } | undefined;

const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024;

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  // Reverse proxies such as nginx would otherwise hold events back in their buffers.
  'x-accel-buffering': 'no',
} as const;

const frame = (event: string, data: unknown): string => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

export class LiveEvents {
  private readonly streams = new Set<Stream>();
  /** The last policy event sent per project, so a reload that changed nothing sends nothing. */
  private readonly lastPolicy = new Map<string, PolicyEvent>();
  private readonly pingTimer: NodeJS.Timeout;
  private readonly maxBufferedBytes: number;
  private readonly maxStreams: number;
  private readonly maxPerClient: number;
  private readonly perClient = new Map<string, number>();
  /** Streams with frames waiting; written once per turn of the event loop, whatever the number of events. */
  private readonly dirty = new Set<Stream>();
  private flushScheduled = false;
  private closed = false;

  constructor(private readonly options: LiveEventsOptions) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
    this.maxStreams = options.maxStreams ?? Number.POSITIVE_INFINITY;
    this.maxPerClient = options.maxStreamsPerClient ?? DEFAULT_MAX_STREAMS_PER_CLIENT;
    this.pingTimer = setInterval(
      () => {
        this.broadcast(undefined, ': ping\n\n');
      },
      options.pingMs ?? EVENTS_PING_SECONDS * 1000,
    );
    this.pingTimer.unref();
  }

  /** Number of open streams (for tests and metrics). */
  get size(): number {
    return this.streams.size;
  }

  /** Whether a stream from `client` (its address) would be over a limit now. */
  refusal(client: string): StreamRefusal {
    if (this.streams.size >= this.maxStreams) return { limit: 'total', max: this.maxStreams };
    if ((this.perClient.get(client) ?? 0) >= this.maxPerClient) return { limit: 'client', max: this.maxPerClient };
    return undefined;
  }

  /** Starts streaming on `response` (headers already decided by the route, limits checked): the current state first. */
  open(response: ServerResponse, project: string | undefined, client = ''): void {
    if (this.closed) {
      response.end();
      return;
    }
    response.writeHead(200, SSE_HEADERS);
    const stream: Stream = { project, response, client, pending: '' };
    this.streams.add(stream);
    this.perClient.set(client, (this.perClient.get(client) ?? 0) + 1);
    response.on('close', () => {
      this.forget(stream);
    });
    // A comment first, so a client knows at once that the stream is open.
    let text = ': connected\n\n';
    for (const event of this.options.projects.summaries()) {
      if (project === undefined || event.project === project) text += frame('policy', event);
    }
    this.queue(stream, text);
  }

  /**
   * Tells the streams that follow `project` its state now (undefined: removed), unless it is what
   * they last heard. Call it only once the change is visible to decisions.
   */
  policyChanged(project: string, state: Omit<PolicyEvent, 'project'> | undefined): void {
    const last = this.lastPolicy.get(project);
    let event: PolicyEvent;
    if (state === undefined) {
      this.lastPolicy.delete(project);
      event = { project, revision: last?.revision ?? 'none', status: 'removed' };
    } else {
      if (last?.revision === state.revision && last.status === state.status) return;
      event = { project, revision: state.revision, status: state.status };
      this.lastPolicy.set(project, event);
    }
    this.broadcast(project, frame('policy', event));
  }

  /** Told of every project change (server/projects/project-changes.ts), after every other subscriber. */
  projectChanged(project: string, _change: string, state: { readonly policy: Omit<PolicyEvent, 'project'> } | undefined): void {
    this.policyChanged(project, state && { revision: state.policy.revision, status: state.policy.status });
  }

  approvalChanged(event: ApprovalEvent): void {
    this.broadcast(event.project, frame('approval', event));
  }

  /** Ends every stream cleanly (on shutdown). */
  close(): void {
    this.closed = true;
    clearInterval(this.pingTimer);
    this.flush();
    for (const stream of this.streams) stream.response.end();
    this.streams.clear();
    this.perClient.clear();
  }

  private forget(stream: Stream): void {
    if (!this.streams.delete(stream)) return;
    this.dirty.delete(stream);
    const left = (this.perClient.get(stream.client) ?? 1) - 1;
    if (left > 0) this.perClient.set(stream.client, left);
    else this.perClient.delete(stream.client);
  }

  private broadcast(project: string | undefined, text: string): void {
    for (const stream of this.streams) {
      if (project === undefined || stream.project === undefined || stream.project === project) this.queue(stream, text);
    }
  }

  /**
   * Adds a frame to a stream's next write. A flood of events (1,000 new approval requests a second)
   * then costs one write per stream per turn of the event loop, not one per event, and `/decide`,
   * which publishes them, never writes to a socket itself.
   */
  private queue(stream: Stream, text: string): void {
    stream.pending += text;
    this.dirty.add(stream);
    if (stream.pending.length + stream.response.writableLength > this.maxBufferedBytes) {
      this.drop(stream);
      return;
    }
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flush();
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    for (const stream of this.dirty) {
      const { response } = stream;
      const text = stream.pending;
      stream.pending = '';
      if (response.destroyed || response.writableEnded) {
        this.forget(stream);
        continue;
      }
      response.write(text);
      if (response.writableLength > this.maxBufferedBytes) this.drop(stream);
    }
    this.dirty.clear();
  }

  /** A reader that does not take what is sent is dropped rather than buffered without bound. */
  private drop(stream: Stream): void {
    this.options.logger.warn(
      { project: stream.project, buffered: stream.response.writableLength + stream.pending.length },
      'events reader too slow, dropped',
    );
    this.forget(stream);
    stream.response.destroy();
  }
}
