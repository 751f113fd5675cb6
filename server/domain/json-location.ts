/**
 * Finds where a JSON text stops being valid, so a bad policy file can be reported with a line and
 * a column (V8's `JSON.parse` messages do not always carry a position). Only called on text that
 * `JSON.parse` already rejected; a small recursive-descent scanner, iterative on nesting depth limits.
 */

export interface JsonLocation {
  offset: number;
  line: number;
  column: number;
}

class StopScan extends Error {
  constructor(readonly offset: number) {
    super('invalid JSON');
  }
}

/** Offset (and 1-based line/column) of the first character where `text` is not valid JSON. */
export function locateJsonError(text: string): JsonLocation {
  let offset = text.length;
  try {
    const end = scanValue(text, skipSpace(text, 0), 0);
    const rest = skipSpace(text, end);
    if (rest < text.length) offset = rest;
  } catch (error) {
    if (error instanceof StopScan) offset = error.offset;
    else if (error instanceof RangeError) offset = 0; // absurd nesting: report the start
  }
  return { offset, ...lineColumn(text, offset) };
}

export function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - before.lastIndexOf('\n') };
}

function skipSpace(text: string, at: number): number {
  while (at < text.length && ' \t\n\r'.includes(text[at] as string)) at++;
  return at;
}

function expect(text: string, at: number, literal: string): number {
  if (text.startsWith(literal, at)) return at + literal.length;
  throw new StopScan(at);
}

function scanValue(text: string, at: number, depth: number): number {
  if (depth > 512) throw new StopScan(at);
  const c = text[at];
  if (c === '{') return scanObject(text, at + 1, depth);
  if (c === '[') return scanArray(text, at + 1, depth);
  if (c === '"') return scanString(text, at + 1);
  if (c === 't') return expect(text, at, 'true');
  if (c === 'f') return expect(text, at, 'false');
  if (c === 'n') return expect(text, at, 'null');
  const number = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at, at + 400));
  if (number && number[0].length > 0) return at + number[0].length;
  throw new StopScan(at);
}

function scanObject(text: string, at: number, depth: number): number {
  at = skipSpace(text, at);
  if (text[at] === '}') return at + 1;
  for (;;) {
    if (text[at] !== '"') throw new StopScan(at);
    at = skipSpace(text, scanString(text, at + 1));
    at = skipSpace(text, expect(text, at, ':'));
    at = skipSpace(text, scanValue(text, at, depth + 1));
    if (text[at] === '}') return at + 1;
    at = skipSpace(text, expect(text, at, ','));
  }
}

function scanArray(text: string, at: number, depth: number): number {
  at = skipSpace(text, at);
  if (text[at] === ']') return at + 1;
  for (;;) {
    at = skipSpace(text, scanValue(text, at, depth + 1));
    if (text[at] === ']') return at + 1;
    at = skipSpace(text, expect(text, at, ','));
  }
}

function scanString(text: string, at: number): number {
  while (at < text.length) {
    const c = text.charCodeAt(at);
    if (c === 0x22) return at + 1;
    if (c < 0x20) throw new StopScan(at);
    at += c === 0x5c ? 2 : 1;
  }
  throw new StopScan(at);
}
