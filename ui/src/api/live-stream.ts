/**
 * The panel's connection to `GET /events` (docs/api.md#live-changes-get-events): `fetch()` with the session's token
 * (EventSource cannot send it), a stream reader fed to {@link SseParser}, and reconnection with
 * backoff. Every connection starts with the whole state, so a reconnection is also a resync.
 */
import { SseParser, type SseMessage } from '../../../schemas/server-sent-events.js';

/** What the panel shows of the stream. */
export type LiveState = 'connecting' | 'open' | 'retrying' | 'refused' | 'stopped';

export interface LiveStreamOptions {
  url: string;
  /** The token to present, read at each connection (the user may change it). */
  token: () => string | null;
  /** A connection was accepted: the frames that follow describe every project again. */
  onOpen: (reconnection: boolean) => void;
  onMessage: (message: SseMessage) => void;
  onState: (state: LiveState) => void;
  fetch?: typeof fetch;
  /** First delay before reconnecting; it doubles on each failed attempt, up to {@link maxDelayMs}. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** Silence (not even the 15 s ping) after which the connection is taken for dead. */
  idleMs?: number;
}

/** Why an attempt ended without a usable stream. */
class StreamRefused extends Error {
  constructor(readonly status: number) {
    super(`GET /events answered ${status}`);
  }
}

export class LiveStream {
  private generation = 0;
  private controller: AbortController | null = null;
  private wake: (() => void) | null = null;
  /** Attempts in a row that failed to open a stream (drives the backoff). */
  private failures = 0;
  private opened = false;
  private readonly minDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly idleMs: number;

  constructor(private readonly options: LiveStreamOptions) {
    this.minDelayMs = options.minDelayMs ?? 500;
    this.maxDelayMs = options.maxDelayMs ?? 15_000;
    this.idleMs = options.idleMs ?? 45_000;
  }

  /** Connects (again), at once: after a token change, or to start. */
  restart(): void {
    this.stopCurrent();
    this.failures = 0;
    const generation = this.generation;
    void this.run(generation);
  }

  stop(): void {
    this.stopCurrent();
    this.options.onState('stopped');
  }

  /** The delay before attempt number `failures` (1-based), with up to 25 % of jitter. */
  delayFor(failures: number, random: number = Math.random()): number {
    const base = Math.min(this.maxDelayMs, this.minDelayMs * 2 ** Math.max(0, failures - 1));
    return Math.round(base * (1 + random * 0.25));
  }

  private stopCurrent(): void {
    this.generation += 1;
    this.controller?.abort();
    this.controller = null;
    this.wake?.();
    this.wake = null;
  }

  private async run(generation: number): Promise<void> {
    while (generation === this.generation) {
      let refused = false;
      let connected = false;
      try {
        connected = await this.connect(generation);
      } catch (error) {
        refused = error instanceof StreamRefused && (error.status === 401 || error.status === 403);
      }
      if (generation !== this.generation) return;
      // A stream that was open and ended is retried quickly; failures to open back off.
      this.failures = connected ? 1 : this.failures + 1;
      this.options.onState(refused ? 'refused' : 'retrying');
      await this.sleep(this.delayFor(this.failures), generation);
    }
  }

  /** One connection: resolves true when a stream was open and then ended (or went silent). */
  private async connect(generation: number): Promise<boolean> {
    const controller = new AbortController();
    this.controller = controller;
    this.options.onState('connecting');
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    const token = this.options.token();
    if (token !== null) headers.Authorization = `Bearer ${token}`;
    const fetchImpl = this.options.fetch ?? fetch;
    // A service that accepts the connection but never answers is as dead as a silent stream.
    let idle = setTimeout(() => {
      controller.abort();
    }, this.idleMs);
    let response: Response;
    try {
      response = await fetchImpl(this.options.url, { headers, cache: 'no-store', signal: controller.signal });
    } catch (error) {
      clearTimeout(idle);
      throw error;
    }
    const type = response.headers.get('content-type') ?? '';
    if (!response.ok || response.body === null || !type.startsWith('text/event-stream')) {
      clearTimeout(idle);
      await response.body?.cancel().catch(() => undefined);
      throw new StreamRefused(response.status);
    }
    if (generation !== this.generation) {
      clearTimeout(idle);
      return false;
    }
    const reconnection = this.opened;
    this.opened = true;
    this.options.onOpen(reconnection);
    this.options.onState('open');
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || generation !== this.generation) return true;
        clearTimeout(idle);
        idle = setTimeout(() => {
          controller.abort();
        }, this.idleMs);
        for (const message of parser.push(decoder.decode(value, { stream: true }))) this.dispatch(message);
      }
    } catch {
      return true;
    } finally {
      clearTimeout(idle);
      reader.cancel().catch(() => undefined);
    }
  }

  /** A failing handler is reported (as an uncaught error) without closing the stream. */
  private dispatch(message: SseMessage): void {
    try {
      this.options.onMessage(message);
    } catch (error) {
      setTimeout(() => {
        throw error;
      });
    }
  }

  private sleep(ms: number, generation: number): Promise<void> {
    return new Promise((resolve) => {
      if (generation !== this.generation) {
        resolve();
        return;
      }
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
