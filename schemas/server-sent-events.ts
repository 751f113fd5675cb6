/**
 * The one Server-Sent Events parser (the `text/event-stream` format of the HTML standard) of the
 * panel's live stream and of the client package's `GET /events` reader: both read the stream
 * with `fetch()` or undici (`EventSource` cannot send the token's `Authorization` header) and feed
 * the decoded text here, chunk by chunk. Lines end with CRLF, LF or CR (a CRLF split across two
 * chunks is one break); a line starting with ":" is a comment; `field: value` loses exactly one
 * space after the colon; `data` lines are joined with LF; a blank line dispatches the event,
 * unless it has no data.
 */

export interface SseMessage {
  /** The `event:` field, `message` when the frame has none. */
  event: string;
  /** The `data:` lines of the frame joined with `\n`. */
  data: string;
}

/** A line longer than this is no event the service sends: the stream is treated as broken. */
export const MAX_SSE_LINE = 1024 * 1024;

export class SseParser {
  private buffer = '';
  /** The last chunk ended with `\r`: a `\n` starting the next one belongs to the same line break. */
  private skipLineFeed = false;
  private event = '';
  private data: string[] = [];
  /** The characters of the `data` lines of the event being read, one line break each. */
  private dataChars = 0;

  /** What the parser holds of the event not yet dispatched (its data and its unfinished line). */
  get pendingChars(): number {
    return this.dataChars + this.buffer.length;
  }

  /** Parses one chunk of decoded text; returns the frames it completed, in order. */
  push(chunk: string): SseMessage[] {
    const messages: SseMessage[] = [];
    let text = chunk;
    if (this.skipLineFeed && text.startsWith('\n')) text = text.slice(1);
    if (text !== '') this.skipLineFeed = false;
    const buffer = this.buffer + text;
    let start = 0;
    for (let index = 0; index < buffer.length; index += 1) {
      const char = buffer[index];
      if (char !== '\n' && char !== '\r') continue;
      this.line(buffer.slice(start, index), messages);
      if (char === '\r') {
        if (index + 1 < buffer.length) {
          if (buffer[index + 1] === '\n') index += 1;
        } else {
          this.skipLineFeed = true;
        }
      }
      start = index + 1;
    }
    this.buffer = buffer.slice(start);
    if (this.buffer.length > MAX_SSE_LINE) throw new Error(`event stream line longer than ${MAX_SSE_LINE} characters`);
    return messages;
  }

  private line(line: string, messages: SseMessage[]): void {
    if (line === '') {
      // A blank line ends the frame; a frame without data is not dispatched (comments, a lone event:).
      if (this.data.length > 0) messages.push({ event: this.event === '' ? 'message' : this.event, data: this.data.join('\n') });
      this.event = '';
      this.data = [];
      this.dataChars = 0;
      return;
    }
    if (line.startsWith(':')) return; // a comment (`: ping`)
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.data.push(value);
      this.dataChars += value.length + 1;
    }
    // `id` and `retry` are not used: the service resends the whole state on every connection.
  }
}
