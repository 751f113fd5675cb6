/**
 * Where JSON pointers (`/agents/0/policy/askTools`) point in the text of a valid JSON document, as
 * lines and columns: the problems `idea-pdp check` prints name a place an editor can jump to. Every
 * pointer of a document is found in one walk of its text and every line in one index, so locating
 * 16,000 names in 4 MiB costs about what locating one does (one walk per name took 13 s). Pure.
 */

export interface Place {
  readonly line: number;
  readonly column: number;
}

/** The offsets at which the lines of a text start: any offset's line and column by binary search. */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) this.starts.push(at + 1);
  }

  /** Line and column (1-based; columns count UTF-16 code units) of `offset`. */
  place(offset: number): Place {
    let low = 0;
    let high = this.starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((this.starts[middle] ?? 0) <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - (this.starts[low] ?? 0) + 1 };
  }
}

/** Encodes one pointer segment (`/` is `~1`, `~` is `~0`). */
export function pointerSegment(raw: string | number): string {
  return String(raw).replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A valid JSON text, its pointers located on demand. */
export class JsonLocator {
  private readonly lines: LineIndex;

  constructor(private readonly text: string) {
    this.lines = new LineIndex(text);
  }

  /**
   * The place of what each pointer names: a member's key, an item's first character; when a
   * segment is missing (a required key absent), the object or array that should hold it.
   */
  places(pointers: Iterable<string>): Map<string, Place> {
    const offsets = pointerOffsets(this.text, pointers);
    const places = new Map<string, Place>();
    for (const [pointer, offset] of offsets) places.set(pointer, this.lines.place(offset));
    return places;
  }

  place(pointer: string): Place {
    return this.places([pointer]).get(pointer) ?? this.lines.place(0);
  }

  /** The place of an offset in the text (a syntax error's). */
  placeOf(offset: number): Place {
    return this.lines.place(offset);
  }
}

/** Line and column (1-based) of what `pointer` names in `text`. */
export function pointerLocation(text: string, pointer: string): Place {
  return new JsonLocator(text).place(pointer);
}

const normal = (pointer: string): string => (pointer === '/' ? '' : pointer);

/** The offset of what each pointer names, all found in one walk of `text`. */
export function pointerOffsets(text: string, pointers: Iterable<string>): Map<string, number> {
  const wanted = new Set<string>();
  for (const pointer of pointers) wanted.add(pointer);
  // Every prefix of a wanted pointer is a container the walk enters; anything else it skips.
  const prefixes = new Set<string>(['']);
  for (const pointer of wanted) {
    const p = normal(pointer);
    for (let at = p.indexOf('/', 1); at !== -1; at = p.indexOf('/', at + 1)) prefixes.add(p.slice(0, at));
    prefixes.add(p);
  }
  const walker = new Walker(text, prefixes);
  const root = walker.space(0);
  walker.found.set('', { key: root, value: root });
  walker.walk(root, '');
  const offsets = new Map<string, number>();
  for (const pointer of wanted) {
    let p = normal(pointer);
    const exact = walker.found.get(p);
    if (exact !== undefined) {
      offsets.set(pointer, exact.key);
      continue;
    }
    // The deepest container that exists.
    let holder: { value: number } | undefined;
    while (holder === undefined && p !== '') {
      p = p.slice(0, p.lastIndexOf('/'));
      holder = walker.found.get(p);
    }
    offsets.set(pointer, holder?.value ?? root);
  }
  return offsets;
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;

class Walker {
  /** Offsets of the key and the value of each entered pointer (both the item's start for an array item). */
  readonly found = new Map<string, { key: number; value: number }>();

  constructor(
    private readonly text: string,
    private readonly prefixes: ReadonlySet<string>,
  ) {}

  space(at: number): number {
    for (; at < this.text.length; at++) {
      const c = this.text.charCodeAt(at);
      if (c !== SPACE && c !== TAB && c !== LF && c !== CR) break;
    }
    return at;
  }

  /** Walks the value at `at` named `pointer`, recording the wanted children; returns the offset after it. */
  walk(at: number, pointer: string): number {
    const c = this.text.charAt(at);
    if (c === '{') {
      at = this.space(at + 1);
      while (this.text.charAt(at) === '"') {
        const keyStart = at;
        const keyEnd = this.skipString(at);
        const key = JSON.parse(this.text.slice(keyStart, keyEnd)) as string;
        const valueStart = this.space(this.space(keyEnd) + 1);
        const child = `${pointer}/${pointerSegment(key)}`;
        at = this.space(this.enter(keyStart, valueStart, child));
        if (this.text.charAt(at) !== ',') break;
        at = this.space(at + 1);
      }
      return at + 1;
    }
    if (c === '[') {
      at = this.space(at + 1);
      for (let index = 0; this.text.charAt(at) !== ']' && at < this.text.length; index++) {
        at = this.space(this.enter(at, at, `${pointer}/${index}`));
        if (this.text.charAt(at) !== ',') break;
        at = this.space(at + 1);
      }
      return at + 1;
    }
    return this.skipValue(at);
  }

  private enter(key: number, value: number, pointer: string): number {
    if (!this.prefixes.has(pointer)) return this.skipValue(value);
    this.found.set(pointer, { key, value });
    return this.walk(value, pointer);
  }

  private skipString(at: number): number {
    for (let end = this.text.indexOf('"', at + 1); end !== -1; end = this.text.indexOf('"', end + 1)) {
      // Escaped when an odd number of backslashes precede it.
      let slashes = 0;
      while (this.text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
      if (slashes % 2 === 0) return end + 1;
    }
    return this.text.length;
  }

  private skipValue(at: number): number {
    const c = this.text.charAt(at);
    if (c === '"') return this.skipString(at);
    if (c !== '{' && c !== '[') {
      while (at < this.text.length && !',}] \t\r\n'.includes(this.text.charAt(at))) at++;
      return at;
    }
    let depth = 0;
    for (; at < this.text.length; at++) {
      const d = this.text.charAt(at);
      if (d === '"') at = this.skipString(at) - 1;
      else if (d === '{' || d === '[') depth++;
      else if ((d === '}' || d === ']') && --depth === 0) return at + 1;
    }
    return at;
  }
}
