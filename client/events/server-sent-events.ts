/**
 * The client's reader of `text/event-stream` bodies: undici's byte chunks decoded and fed to the
 * parser the panel uses too (schemas/server-sent-events.ts).
 */
import { SseParser } from '../../schemas/server-sent-events.js';

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
  const parser = new SseParser();
  const tooLarge = `an event larger than ${describeChars(maxEventChars)}`;
  for await (const chunk of body) {
    let messages;
    try {
      messages = parser.push(decoder.decode(chunk, { stream: true }));
    } catch {
      return tooLarge; // a line past the parser's own bound
    }
    for (const { event, data } of messages) onEvent({ type: event, data });
    if (parser.pendingChars > maxEventChars) return tooLarge;
  }
  return undefined;
}

function describeChars(chars: number): string {
  return chars % 1024 === 0 ? `${String(chars / 1024)} KiB` : `${String(chars)} characters`;
}
