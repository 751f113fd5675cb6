/**
 * Comments stay readable in a side-by-side diff: no comment line of the product code (server/,
 * client/, schemas/, ui/src/) is wider than 140 columns, the width prettier leaves code at.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FOLDERS = ['server', 'client', 'schemas', 'ui/src'];
/** Build output and dependencies: not written by hand. */
const SKIPPED = new Set(['node_modules', 'dist']);
const MAX_COLUMNS = 140;
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });
/** A line of a block comment (` * …`, `/** …`, ` *\/`) or a line comment. */
const COMMENT_LINE = /^\s*(?:\/\/|\/?\*)/;

function typeScriptFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    if (SKIPPED.has(entry.name)) continue;
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) out.push(...typeScriptFiles(rel));
    else if (entry.isFile() && rel.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** `file:line (columns)` for each comment line of `text` wider than {@link MAX_COLUMNS}. */
function wideCommentLines(file: string, text: string): string[] {
  return text.split('\n').flatMap((line, index) => {
    // Columns as an editor counts them: one per character ("𝑥" is two UTF-16 units, "é" may be two code points).
    const columns = [...GRAPHEMES.segment(line.trimEnd())].length;
    return COMMENT_LINE.test(line) && columns > MAX_COLUMNS ? [`${file}:${index + 1} (${columns})`] : [];
  });
}

describe('comment width', () => {
  it('finds a wide comment line, and only a comment line', () => {
    const wide = `// ${'x'.repeat(MAX_COLUMNS)}`;
    const text = ['const a = 1;', `  ${wide}`, ` * ${'𝑥'.repeat(MAX_COLUMNS - 5)}e\u0301`, `const s = '${'x'.repeat(200)}';`].join('\n');
    expect(wideCommentLines('a.ts', text)).toEqual([`a.ts:2 (${wide.length + 2})`]);
  });

  it(`keeps every comment line of ${FOLDERS.join(', ')} within ${MAX_COLUMNS} columns`, () => {
    const files = FOLDERS.flatMap((folder) => typeScriptFiles(folder));
    expect(files.length).toBeGreaterThan(100);
    const wide = files.flatMap((file) => wideCommentLines(file, readFileSync(path.join(ROOT, file), 'utf8')));
    expect(wide).toEqual([]);
  });
});
