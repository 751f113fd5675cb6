/**
 * One side of the proxy (the host on our stdin/stdout, or the real server on its stdin/stdout):
 * newline-delimited JSON-RPC read with the MCP SDK's own `ReadBuffer` (its `JSONRPCMessageSchema`)
 * and written with its `serializeMessage`, as the SDK's stdio transports do. A line that is not a
 * JSON-RPC message is logged and skipped; it never stops the relay.
 */
import type { Readable, Writable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorText, oneLine } from '../causes.js';
import type { ProxyLogger } from './stderr-logger.js';

export class JsonRpcChannel {
  private readonly buffer = new ReadBuffer();
  private writable = true;

  constructor(
    /** `host` or `server`, in the log lines. */
    private readonly side: string,
    input: Readable,
    private readonly output: Writable,
    private readonly logger: ProxyLogger,
    onMessage: (message: JSONRPCMessage) => void,
    onEnd: () => void,
  ) {
    input.on('data', (chunk: Buffer) => {
      try {
        this.buffer.append(chunk);
      } catch (error) {
        this.logger.warn({ from: this.side, cause: errorText(error) }, 'message too large: dropped');
        return;
      }
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          // The buffer is already past the bad line: the next one is read normally.
          this.logger.warn({ from: this.side, cause: oneLine(errorText(error), 200) }, 'malformed JSON-RPC line skipped');
          continue;
        }
        if (message === null) break;
        onMessage(message);
      }
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

  send(message: JSONRPCMessage): void {
    if (!this.writable) return;
    this.output.write(serializeMessage(message));
  }

  /** No more messages to this side (its input is closed). */
  end(): void {
    if (!this.writable) return;
    this.writable = false;
    this.output.end();
  }
}
