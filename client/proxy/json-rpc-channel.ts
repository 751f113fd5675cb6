/**
 * One side of the proxy (the host on our stdin/stdout, or the real server on its stdin/stdout):
 * newline-delimited JSON-RPC. Each line is kept as the bytes that came, so a message the proxy does
 * not change goes on exactly as it was written (numbers beyond 2^53, key order, spacing). A line
 * that is not a JSON-RPC message is logged and skipped; nothing read here stops the relay.
 */
import { isUtf8 } from 'node:buffer';
import type { Readable, Writable } from 'node:stream';
import { errorText, oneLine } from '../causes.js';
import { asJsonRpcMessage, isRequestId, lineShape, type JsonRpcMessage, type LineShape, type RequestId } from './json-rpc.js';
import type { ProxyLogger } from './stderr-logger.js';

/** The longest line read (the MCP SDKs' stdio limit): a longer one is dropped, the next read normally. */
export const MAX_LINE_BYTES = 10 * 1024 * 1024;

/** One message as it came. */
export interface Received {
  message: JsonRpcMessage;
  /** The line's bytes, without its line ending. */
  raw: Buffer;
  /** The `id` as written (only on a side read with `shape`): what the proxy's own answers echo. */
  rawId: string | undefined;
  /** What `JSON.parse` does not tell (only on a side read with `shape`). */
  shape: LineShape | undefined;
  /** False when the line is not valid UTF-8: readers downstream may decode it otherwise. */
  utf8: boolean;
}

/** A line that is JSON but no JSON-RPC message; `id` is set when it looks like a request that can be answered. */
export interface Unreadable {
  id: RequestId | undefined;
  why: string;
}

const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

export class JsonRpcChannel {
  private chunks: Buffer[] = [];
  private pendingBytes = 0;
  /** Inside a line over the limit: everything up to its newline is dropped. */
  private skipping = false;
  private writable = true;

  constructor(
    /** `host` or `server`, in the log lines. */
    private readonly side: string,
    input: Readable,
    private readonly output: Writable,
    private readonly logger: ProxyLogger,
    private readonly handlers: {
      onMessage: (received: Received) => void;
      onUnreadable?: (unreadable: Unreadable) => void;
      /** Read each line's shape (keys given twice, the id's text): the side whose requests the proxy decides. */
      shape?: boolean;
    },
    onEnd: () => void,
  ) {
    input.on('data', (chunk: Buffer) => {
      this.append(chunk);
    });
    input.once('end', onEnd);
    input.on('error', (error) => {
      this.logger.warn({ from: this.side, cause: errorText(error) }, 'read failed');
    });
    output.on('error', (error) => {
      this.writable = false;
      this.logger.warn({ to: this.side, cause: errorText(error) }, 'write failed: nothing more is sent there');
    });
  }

  private append(chunk: Buffer): void {
    let rest = chunk;
    for (;;) {
      const newline = rest.indexOf(NEWLINE);
      if (newline < 0) {
        if (this.skipping || rest.length === 0) return;
        this.chunks.push(rest);
        this.pendingBytes += rest.length;
        if (this.pendingBytes > MAX_LINE_BYTES) this.overflow();
        return;
      }
      const end = rest.subarray(0, newline);
      rest = rest.subarray(newline + 1);
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      const line = this.chunks.length === 0 ? end : Buffer.concat([...this.chunks, end]);
      this.chunks = [];
      this.pendingBytes = 0;
      if (line.length > MAX_LINE_BYTES) {
        this.logOverflow(line.length);
        continue;
      }
      this.readLine(line);
    }
  }

  private overflow(): void {
    this.logOverflow(this.pendingBytes);
    this.chunks = [];
    this.pendingBytes = 0;
    this.skipping = true;
  }

  private logOverflow(bytes: number): void {
    this.logger.warn({ from: this.side, bytes, limit: MAX_LINE_BYTES }, 'line longer than the limit: dropped');
  }

  private readLine(raw: Buffer): void {
    const bytes = raw.length > 0 && raw[raw.length - 1] === 0x0d ? raw.subarray(0, -1) : raw;
    const text = bytes.toString('utf8');
    if (text.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.logger.warn({ from: this.side, cause: oneLine(errorText(error), 200) }, 'malformed JSON-RPC line skipped');
      return;
    }
    const checked = asJsonRpcMessage(value);
    if (!checked.ok) {
      const id = requestIdOf(value);
      this.logger.warn({ from: this.side, cause: checked.why }, 'malformed JSON-RPC line skipped');
      if (id !== undefined) this.handlers.onUnreadable?.({ id, why: checked.why });
      return;
    }
    const shape = this.handlers.shape === true ? lineShape(text) : undefined;
    try {
      this.handlers.onMessage({ message: checked.message, raw: bytes, rawId: shape?.rawId, shape, utf8: isUtf8(bytes) });
    } catch (error) {
      // A bug of the relay must not stop the stream: the message is lost, said on stderr.
      this.logger.error({ from: this.side, cause: oneLine(errorText(error), 200) }, 'message could not be handled: dropped');
    }
  }

  /** Sends `message`, written anew; false when it cannot be written as JSON (too deeply nested), and then nothing is sent. */
  send(message: JsonRpcMessage): boolean {
    let text: string;
    try {
      text = JSON.stringify(message);
    } catch {
      return false;
    }
    this.write(`${text}\n`);
    return true;
  }

  /** Sends a line exactly as it was received. */
  sendRaw(raw: Buffer): void {
    this.write(raw.length === 0 ? EMPTY : Buffer.concat([raw, Buffer.from('\n')]));
  }

  /** Sends a line of JSON text the proxy wrote. */
  sendText(text: string): void {
    this.write(`${text}\n`);
  }

  private write(data: string | Buffer): void {
    if (!this.writable) return;
    this.output.write(data);
  }

  /** No more messages to this side (its input is closed). */
  end(): void {
    if (!this.writable) return;
    this.writable = false;
    this.output.end();
  }
}

/** The id of something that has a method and an id, as a request does, though it is no valid message. */
function requestIdOf(value: unknown): RequestId | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { id, method } = value as { id?: unknown; method?: unknown };
  return typeof method === 'string' && isRequestId(id) ? id : undefined;
}
