/**
 * Section citations name a heading by its anchor (docs/api.md#resolving-a-decision, a link in
 * Markdown), so they survive a section added or moved, and this test proves each one lands: no
 * numbered citation, no citation by quoted name, no anchor a heading of the named file lacks, and
 * the words quoted after an anchor (a bold lead-in, which has no anchor of its own) are in that section.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { normalize, parseHeadings, sectionText, type Heading } from '../support/markdown-headings.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Folders that hold no source: dependencies, build output, results, images, the demo projects' data. */
const SKIPPED = new Set([
  'node_modules',
  '.git',
  'dist',
  'coverage',
  'bench/results',
  'docs/screenshots',
  'examples/projects',
  '.ci/cache',
]);
const TEXT = /\.(ts|mts|cts|js|mjs|cjs|md|html|css|sh|ya?ml)$|(^|\/)(Dockerfile|\.ci\/run)$/;

function sourceFiles(dir = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
    if (SKIPPED.has(rel) || SKIPPED.has(entry.name)) continue;
    if (entry.isDirectory()) out.push(...sourceFiles(rel));
    else if (entry.isFile() && TEXT.test(rel)) out.push(rel);
  }
  return out;
}

const files = new Map(sourceFiles().map((f) => [f, readFileSync(path.join(ROOT, f), 'utf8')]));
const headings = new Map<string, Heading[]>();
function headingsOf(doc: string): Heading[] | undefined {
  const text = files.get(doc);
  if (text === undefined) return undefined;
  let found = headings.get(doc);
  if (found === undefined) headings.set(doc, (found = parseHeadings(text)));
  return found;
}
/** A path as the citing file writes it: relative to its own folder, else to the repository root. */
function resolveDoc(file: string, doc: string): string | undefined {
  const candidates = [path.posix.normalize(path.posix.join(path.posix.dirname(file), doc)), path.posix.normalize(doc)];
  return candidates.find((c) => c.endsWith('.md') && files.has(c));
}
const where = (file: string, text: string, index: number) => `${file}:${String(text.slice(0, index).split('\n').length)}`;

/** A line break inside a citation: the comment leader or the indentation after it. */
const BREAK = String.raw`[ \t]*\n[ \t]*(?:\*(?!\/)[ \t]*|\/\/[ \t]*)?`;
const QUOTED = String.raw`"((?:[^"\n]|${BREAK}){1,200}?)"`;
const unbreak = (s: string) => s.replace(new RegExp(BREAK, 'g'), ' ');

describe('section citations', () => {
  it('scans the source tree', () => {
    expect(files.has('docs/api.md')).toBe(true);
    expect(files.has('server/http/app.ts')).toBe(true);
    expect(files.size).toBeGreaterThan(200);
  });

  it('never cite a section by its number', () => {
    const numbered = new RegExp(String.raw`\u00a7[ \t]*\d`);
    const found: string[] = [];
    for (const [file, text] of files) {
      text.split('\n').forEach((line, i) => {
        if (numbered.test(line)) found.push(`${file}:${String(i + 1)}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('never point at the contract outside the repository: its targets are in bench/README.md#targets', () => {
    const found: string[] = [];
    for (const [file, text] of files) {
      text.split('\n').forEach((line, i) => {
        if (/\bSPEC\b/.test(line)) found.push(`${file}:${String(i + 1)}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  it('cite a heading by its anchor, not by its quoted name', () => {
    const named = new RegExp(String.raw`((?:\.\.\/)?[\w./-]*\.md),?(?:[ \t]+|${BREAK})${QUOTED}`, 'g');
    const found: string[] = [];
    for (const [file, text] of files) {
      for (const m of text.matchAll(named)) {
        const doc = resolveDoc(file, m[1] ?? '');
        if (doc === undefined) continue;
        const name = normalize(unbreak(m[2] ?? ''));
        const heading = headingsOf(doc)?.find((h) => normalize(h.name) === name);
        found.push(`${where(file, text, m.index)}: ${m[0]} → ${heading ? `${doc}#${heading.slug}` : 'no such heading'}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('name an anchor that a heading of that file has, and quote only words of that section', () => {
    const anchors = /((?:\.\.\/)?[\w./-]*\.md)?#([\p{L}\p{M}\p{N}_-]+)/gu;
    const quoted = new RegExp(String.raw`^\)?,?(?:[ \t]+|${BREAK})${QUOTED}`);
    const found: string[] = [];
    let checked = 0;
    for (const [file, text] of files) {
      for (const m of text.matchAll(anchors)) {
        const written = m[1];
        // A bare "#slug" is a link within a Markdown file: "[Security](#security)".
        if (written === undefined && !(file.endsWith('.md') && text.slice(m.index - 2, m.index) === '](')) continue;
        const doc = written === undefined ? file : resolveDoc(file, written);
        const at = where(file, text, m.index);
        if (doc === undefined) {
          found.push(`${at}: ${m[0]}: no such file`);
          continue;
        }
        checked++;
        const heading = headingsOf(doc)?.find((h) => h.slug === m[2]);
        if (heading === undefined) {
          found.push(`${at}: ${m[0]}: ${doc} has no such heading`);
          continue;
        }
        const words = quoted.exec(text.slice(m.index + m[0].length));
        const said = words ? normalize(unbreak(words[1] ?? '')) : undefined;
        if (said !== undefined && !sectionText(files.get(doc) ?? '', heading).includes(said)) {
          found.push(`${at}: ${m[0]}: the section does not say "${said}"`);
        }
      }
    }
    expect(found).toEqual([]);
    expect(checked).toBeGreaterThan(100);
  });
});
