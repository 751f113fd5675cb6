/**
 * A strict check of JSON text before `JSON.parse` reads it: `JSON.parse` keeps the last of two
 * equal keys while a person reading the file sees the first, and it spends its time on nesting no
 * policy document needs. One pass, no value built, nesting bounded by the caller. Pure.
 */

export type StrictJsonProblem =
  | { readonly kind: 'syntax'; readonly offset: number }
  | { readonly kind: 'depth'; readonly offset: number }
  | { readonly kind: 'duplicate'; readonly offset: number; readonly key: string };

class Stop extends Error {
  constructor(readonly problem: StrictJsonProblem) {
    super(problem.kind);
  }
}

/** The characters a string may hold as they are; a native regular expression skips them faster than a loop. */
// eslint-disable-next-line no-control-regex
const STRING_RUN = /[^"\\\u0000-\u001f]*/y;

const SPACE_RUN = /[ \n\r\t]*/y;

/** Keys kept in an array up to this many, then in a set. */
const SMALL_OBJECT = 8;

/**
 * The first reason `text` is not strict JSON, or null when it is: a syntax error (where
 * `JSON.parse` fails), an object or array nested deeper than `maxDepth` (the top-level value is
 * depth 1), or a key that appears twice in one object (compared after escapes are decoded).
 */
export function checkStrictJson(text: string, maxDepth: number): StrictJsonProblem | null {
  const scanner = new Scanner(text, maxDepth);
  try {
    let at = scanner.value(scanner.space(0), 1);
    at = scanner.space(at);
    if (at < text.length) return { kind: 'syntax', offset: at };
    return null;
  } catch (error) {
    if (error instanceof Stop) return error.problem;
    throw error;
  }
}

class Scanner {
  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
  ) {}

  private syntax(at: number): never {
    throw new Stop({ kind: 'syntax', offset: at });
  }

  space(at: number): number {
    const c = this.text.charCodeAt(at);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return at;
    SPACE_RUN.lastIndex = at + 1;
    SPACE_RUN.test(this.text);
    return SPACE_RUN.lastIndex;
  }

  value(at: number, depth: number): number {
    const c = this.text.charCodeAt(at);
    if (c === 0x22) return this.string(at + 1);
    if (c === 0x7b || c === 0x5b) {
      if (depth > this.maxDepth) throw new Stop({ kind: 'depth', offset: at });
      return c === 0x7b ? this.object(at + 1, depth) : this.array(at + 1, depth);
    }
    if (c === 0x74) return this.literal(at, 'true');
    if (c === 0x66) return this.literal(at, 'false');
    if (c === 0x6e) return this.literal(at, 'null');
    return this.number(at);
  }

  private literal(at: number, word: string): number {
    if (!this.text.startsWith(word, at)) this.syntax(at);
    return at + word.length;
  }

  private object(at: number, depth: number): number {
    const { text } = this;
    at = this.space(at);
    if (text.charCodeAt(at) === 0x7d) return at + 1;
    let few: string[] | null = [];
    let many: Set<string> | null = null;
    for (;;) {
      if (text.charCodeAt(at) !== 0x22) this.syntax(at);
      const keyStart = at;
      at = this.string(at + 1);
      const key = this.keyOf(keyStart, at);
      if (many !== null ? many.has(key) : (few as string[]).includes(key)) {
        throw new Stop({ kind: 'duplicate', offset: keyStart, key });
      }
      if (many !== null) many.add(key);
      else if ((few as string[]).push(key) > SMALL_OBJECT) {
        many = new Set(few);
        few = null;
      }
      at = this.space(at);
      if (text.charCodeAt(at) !== 0x3a) this.syntax(at);
      at = this.space(this.value(this.space(at + 1), depth + 1));
      const c = text.charCodeAt(at);
      if (c === 0x7d) return at + 1;
      if (c !== 0x2c) this.syntax(at);
      at = this.space(at + 1);
    }
  }

  private array(at: number, depth: number): number {
    const { text } = this;
    at = this.space(at);
    if (text.charCodeAt(at) === 0x5d) return at + 1;
    for (;;) {
      at = this.space(this.value(at, depth + 1));
      const c = text.charCodeAt(at);
      if (c === 0x5d) return at + 1;
      if (c !== 0x2c) this.syntax(at);
      at = this.space(at + 1);
    }
  }

  /** The key a quoted string from `start` (its opening quote) to `end` (after its closing quote) names. */
  private keyOf(start: number, end: number): string {
    const raw = this.text.slice(start + 1, end - 1);
    return raw.includes('\\') ? (JSON.parse(this.text.slice(start, end)) as string) : raw;
  }

  /** From after an opening quote to after the closing one. */
  private string(at: number): number {
    const { text } = this;
    for (;;) {
      STRING_RUN.lastIndex = at;
      STRING_RUN.test(text);
      at = STRING_RUN.lastIndex;
      const c = text.charCodeAt(at);
      if (c === 0x22) return at + 1;
      if (c !== 0x5c) this.syntax(at);
      const escaped = text.charCodeAt(at + 1);
      if (escaped === 0x75) {
        for (let i = 2; i < 6; i++) if (!isHexDigit(text.charCodeAt(at + i))) this.syntax(at + i);
        at += 6;
      } else if (isSimpleEscape(escaped)) at += 2;
      else this.syntax(at + 1);
    }
  }

  private number(at: number): number {
    const { text } = this;
    if (text.charCodeAt(at) === 0x2d) at++;
    const first = text.charCodeAt(at);
    if (first === 0x30) at++;
    else if (first >= 0x31 && first <= 0x39) at = this.digits(at);
    else this.syntax(at);
    if (text.charCodeAt(at) === 0x2e) {
      if (!isDigit(text.charCodeAt(at + 1))) this.syntax(at + 1);
      at = this.digits(at + 1);
    }
    const e = text.charCodeAt(at);
    if (e === 0x65 || e === 0x45) {
      at++;
      const sign = text.charCodeAt(at);
      if (sign === 0x2b || sign === 0x2d) at++;
      if (!isDigit(text.charCodeAt(at))) this.syntax(at);
      at = this.digits(at);
    }
    return at;
  }

  private digits(at: number): number {
    while (isDigit(this.text.charCodeAt(at))) at++;
    return at;
  }
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isHexDigit(c: number): boolean {
  return isDigit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/** `"`, `\`, `/`, `b`, `f`, `n`, `r`, `t` after a backslash. */
function isSimpleEscape(c: number): boolean {
  return c === 0x22 || c === 0x5c || c === 0x2f || c === 0x62 || c === 0x66 || c === 0x6e || c === 0x72 || c === 0x74;
}

/** 1-based line and column of `offset` in `text` (a column counts UTF-16 code units). */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let at = text.indexOf('\n'); at !== -1 && at < offset; at = text.indexOf('\n', at + 1)) {
    line++;
    lineStart = at + 1;
  }
  return { line, column: offset - lineStart + 1 };
}
