/**
 * The client's one reader of `text/event-stream` bodies, as the HTML standard's "event stream
 * interpretation" says: lines end with CRLF, LF or CR; a line starting with ":" is a comment;
 * `field: value` loses exactly one space after the colon (a second space or a tab is part of the
 * value); `data` lines are joined with LF; a blank line dispatches the event, unless it has no data.
 * `id` and `retry` are read and ignored: the consumers reconnect on their own schedule.
 */

/** One dispatched event: its type (`message` when none was given) and its data. */
export interface ServerSentEvent {
  type: string;
  data: string;
}

/**
 * Reads `body` to its end, calling `onEvent` for each event; answers why it stopped reading
 * (`undefined` at the end of the stream). An event longer than `maxEventChars` stops it, so a
 * stream that never sends a blank line cannot grow a buffer without bound.
 */
export async function readServerSentEvents(
  body: AsyncIterable<Uint8Array>,
  onEvent: (event: ServerSentEvent) => void,
  maxEventChars: number,
): Promise<string | undefined> {
  const decoder = new TextDecoder(); // strips a leading byte order mark, as the standard asks
  let pending = '';
  let type = '';
  let data: string[] = [];
  let size = 0;
  for await (const chunk of body) {
    const text = pending + decoder.decode(chunk, { stream: true });
    // A final CR may be the first half of a CRLF: keep it until the next chunk says.
    const end = text.endsWith('\r') ? text.length - 1 : text.length;
    const lines = text.slice(0, end).split(/\r\n|\r|\n/);
    pending = (lines.pop() ?? '') + text.slice(end);
    for (const line of lines) {
      if (line === '') {
        if (data.length > 0) onEvent({ type: type === '' ? 'message' : type, data: data.join('\n') });
        type = '';
        data = [];
        size = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') type = value;
      else if (field === 'data') {
        data.push(value);
        size += value.length + 1;
      }
    }
    if (size + pending.length > maxEventChars) return `an event larger than ${describeChars(maxEventChars)}`;
  }
  return undefined;
}

function describeChars(chars: number): string {
  return chars % 1024 === 0 ? `${String(chars / 1024)} KiB` : `${String(chars)} characters`;
}
