/**
 * The headings of a Markdown file and their anchors as GitHub makes them: the heading's text
 * without its markup, in lower case, punctuation dropped, spaces as "-", and "-1", "-2", ... on
 * the second and later headings with the same text.
 */
export interface Heading {
  level: number;
  /** The heading's text without its markup ("Live changes: GET /events"). */
  name: string;
  slug: string;
  /** Index of the heading's line in the file. */
  line: number;
}

/** Text as it reads: no inline code ticks, link targets, tags or bold marks; lower case, spaces collapsed. */
export function normalize(text: string): string {
  return plain(text).replace(/\*\*/g, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

function plain(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/`/g, '')
    .trim();
}

export function parseHeadings(markdown: string): Heading[] {
  const headings: Heading[] = [];
  const seen = new Map<string, number>();
  let fence: string | undefined;
  markdown.split('\n').forEach((line, index) => {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]?.charAt(0);
    if (marker !== undefined) {
      if (fence === undefined) fence = marker;
      else if (marker === fence) fence = undefined;
      return;
    }
    if (fence !== undefined) return;
    const m = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (m === null) return;
    const name = plain(m[2] ?? '');
    const base = name
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
      .replace(/ /g, '-');
    const repeats = seen.get(base) ?? 0;
    seen.set(base, repeats + 1);
    headings.push({ level: (m[1] ?? '').length, name, slug: repeats === 0 ? base : `${base}-${String(repeats)}`, line: index });
  });
  return headings;
}

/** The normalized text of a heading's section, its subsections included. */
export function sectionText(markdown: string, heading: Heading): string {
  const next = parseHeadings(markdown).find((h) => h.line > heading.line && h.level <= heading.level);
  return normalize(markdown.split('\n').slice(heading.line, next?.line).join(' '));
}
