/** A Server-Sent Events reader over a real socket, for the tests of `GET /events`. */
import http from 'node:http';

export interface SseFrame {
  readonly event: string;
  readonly data: unknown;
}

export interface SseStream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Every event received so far, in order. */
  readonly frames: SseFrame[];
  /** Comment lines received so far (`: ping`), without the colon. */
  readonly comments: string[];
  /** Resolves when the server ends the stream. */
  readonly ended: Promise<void>;
  /** Waits for the first frame after `from` (an index into `frames`) that matches. */
  next(match: (frame: SseFrame) => boolean, from?: number, timeoutMs?: number): Promise<SseFrame>;
  close(): void;
  /** Stops reading from the socket (a slow reader). */
  pause(): void;
}

export function openSse(url: string, headers: Record<string, string> = {}): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const request = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      const frames: SseFrame[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let endedResolve: () => void = () => undefined;
      const ended = new Promise<void>((done) => (endedResolve = done));
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        for (let cut = buffer.indexOf('\n\n'); cut >= 0; cut = buffer.indexOf('\n\n')) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          let event = 'message';
          let data = '';
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data += line.slice(6);
          }
          if (data !== '') frames.push({ event, data: JSON.parse(data) as unknown });
        }
        for (const wake of waiters) wake();
      });
      response.on('end', endedResolve);
      response.on('close', endedResolve);
      const stream: SseStream = {
        status: response.statusCode ?? 0,
        headers: response.headers,
        frames,
        comments,
        ended,
        next(match, from = 0, timeoutMs = 5_000) {
          return new Promise((found, fail) => {
            const check = (): boolean => {
              const frame = frames.slice(from).find(match);
              if (frame === undefined) return false;
              waiters.delete(wake);
              clearTimeout(timer);
              found(frame);
              return true;
            };
            const wake = (): void => void check();
            const timer = setTimeout(() => {
              waiters.delete(wake);
              fail(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(frames.slice(from))}`));
            }, timeoutMs);
            waiters.add(wake);
            check();
          });
        },
        close: () => request.destroy(),
        pause: () => response.socket.pause(),
      };
      resolve(stream);
    });
    request.on('error', reject);
  });
}
