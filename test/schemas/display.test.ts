/** schemas/display.ts: what the command, the client's form and the panel show of a value. */
import { describe, expect, it } from 'vitest';
import { escapeControls, showBidiControls } from '../../schemas/display.js';
import { quoteForMessage } from '../../schemas/requester.js';

const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u200e', '\u200f', '\u061c'];

describe('showing values', () => {
  it('shows every bidirectional control as an escape, and leaves the rest (line breaks, accents, RTL letters) as it is', () => {
    for (const control of BIDI) {
      const shown = showBidiControls(`#${control}28`);
      expect(shown).toBe(`#\\u${control.charCodeAt(0).toString(16).padStart(4, '0')}28`);
    }
    expect(showBidiControls('ligne 1\nÉcrire · שלום')).toBe('ligne 1\nÉcrire · שלום');
  });

  it('escapes C0, DEL, C1, the line separators and the bidirectional controls, JSON-style, on one line', () => {
    expect(escapeControls('a\nok 1 - x\r\tb')).toBe('a\\nok 1 - x\\r\\tb');
    expect(escapeControls('\u001b[31mred\u0007\u007f\u009b2J\u2028\u2029')).toBe('\\u001b[31mred\\u0007\\u007f\\u009b2J\\u2028\\u2029');
    expect(escapeControls('\u202e28\u202c')).toBe('\\u202e28\\u202c');
    // Nothing else is touched: a backslash, quotes, non-ASCII letters.
    expect(escapeControls('a\\b "c" ѕecrets é')).toBe('a\\b "c" ѕecrets é');
    for (let code = 0; code < 0x3000; code++) {
      const shown = escapeControls(String.fromCharCode(code));
      // eslint-disable-next-line no-control-regex -- what must never remain.
      expect(shown).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    }
  });

  it('a quoted value in a message escapes what JSON.stringify leaves (C1, DEL, bidirectional controls) and reads back the same', () => {
    const value = 'QA\u202e\u009b\u007f\n';
    const quoted = quoteForMessage(value);
    expect(quoted).toBe('"QA\\u202e\\u009b\\u007f\\n"');
    expect(JSON.parse(quoted)).toBe(value);
  });
});
