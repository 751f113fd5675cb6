/**
 * The live events of `GET /events` (docs/api.md §10): Server-Sent Events streams that receive a
 * `policy` event per project when they open, then one whenever a project's revision or status
 * changes, and `approval` events. Callers publish only once a change is visible to decisions.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { EVENTS_PING_SECONDS, type ApprovalEvent, type PolicyEvent } from '../../schemas/events.js';

export interface LiveEventsOptions {
  /** Every project served now, with its status (for the events sent when a stream opens). */
  readonly projects: () => Iterable<PolicyEvent>;
  readonly logger: Logger;
  readonly pingMs?: number | undefined;
  /** A reader that lets more than this many bytes pile up is dropped rather than buffered. */
  readonly maxBufferedBytes?: number | undefined;
}

interface Stream {
  readonly project: string | undefined;
  readonly response: ServerResponse;
}

const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024;

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
  private closed = false;

  constructor(private readonly options: LiveEventsOptions) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES;
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

  /** Starts streaming on `response` (headers already decided by the route): the current state first. */
  open(response: ServerResponse, project: string | undefined): void {
    if (this.closed) {
      response.end();
      return;
    }
    response.writeHead(200, SSE_HEADERS);
    const stream: Stream = { project, response };
    this.streams.add(stream);
    response.on('close', () => this.streams.delete(stream));
    // A comment first, so a client knows at once that the stream is open.
    let text = ': connected\n\n';
    for (const event of this.options.projects()) {
      if (project === undefined || event.project === project) text += frame('policy', event);
    }
    this.send(stream, text);
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

  approvalChanged(event: ApprovalEvent): void {
    this.broadcast(event.project, frame('approval', event));
  }

  /** Ends every stream cleanly (on shutdown). */
  close(): void {
    this.closed = true;
    clearInterval(this.pingTimer);
    for (const stream of this.streams) stream.response.end();
    this.streams.clear();
  }

  private broadcast(project: string | undefined, text: string): void {
    for (const stream of this.streams) {
      if (project === undefined || stream.project === undefined || stream.project === project) this.send(stream, text);
    }
  }

  private send(stream: Stream, text: string): void {
    const { response } = stream;
    if (response.destroyed || response.writableEnded) {
      this.streams.delete(stream);
      return;
    }
    response.write(text);
    if (response.writableLength > this.maxBufferedBytes) {
      this.options.logger.warn({ project: stream.project, buffered: response.writableLength }, 'events reader too slow, dropped');
      this.streams.delete(stream);
      response.destroy();
    }
  }
}
