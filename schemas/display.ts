/**
 * How a value someone reads is shown, shared by the command, the client's messages and the panel:
 * characters that would act instead of being read are shown as JSON-style escapes (`\n`,
 * `\u001b`, `\u202e`). No imports, so every package (the panel's bundle too) can take it.
 */

/**
 * Bidirectional controls: embeddings and overrides (U+202A–202E), isolates (U+2066–2069) and the
 * marks (U+200E, U+200F, U+061C). `"\u202e28\u202c"` displays as « 82 ».
 */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Those, and the C0 and C1 controls, DEL, and the line and paragraph separators: a newline starts a
 * line a reader takes for the program's own (`ok 1 - …`, `Bail out!` in TAP), ESC (and the C1 CSI,
 * U+009B) drives the terminal.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this escapes.
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

const escape = (character: string): string => SHORT_ESCAPES[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with its bidirectional controls shown as escapes: the rest (line breaks included) as it is. */
export function showBidiControls(text: string): string {
  return text.replace(BIDI_CONTROLS, escape);
}

/** `text` as one line of a terminal or a report: every control and bidirectional character shown as an escape. */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, escape);
}
