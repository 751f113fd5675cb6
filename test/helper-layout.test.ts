/**
 * The naming habit of test helpers (test/support/README.md#where-a-helper-lives-and-what-it-is-called):
 * a helper is named after what it gives, never `helpers.ts` or `support.ts`, and a helper outside
 * test/support/ is imported by the tests of its own folder only.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const testDir = import.meta.dirname;
/** Names that say a file's role rather than what it gives: the files every folder fills with everything. */
const ROLE_NAMES = /^(?:helpers?|support|utils?|harness|service|common|shared)$/;
/** Not helpers: the servers and scripts the proxy tests start, and the conformance suite's config. */
const NOT_HELPERS = /^(?:proxy\/fixtures\/|conformance\/vitest\.config\.ts$)/;

/** Every `.ts` file under test/, as a path from test/. */
async function testFiles(): Promise<string[]> {
  const entries = await readdir(testDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(testDir, path.join(entry.parentPath, entry.name)));
}

/** The files under test/ a file imports, as paths from test/ (`./x.js` → `x.ts`). */
function importsOf(file: string, text: string): string[] {
  const specifiers = [...text.matchAll(/(?:from\s+|import\(\s*)'(\.[^']+)'/g)].map((match) => match[1] ?? '');
  return specifiers.map((specifier) => path.join(path.dirname(file), specifier.replace(/\.js$/, '.ts')));
}

const folderOf = (file: string): string => file.split('/')[0] ?? '';

describe('test helpers', async () => {
  const files = await testFiles();
  const helpers = files.filter((file) => !file.endsWith('.test.ts') && !NOT_HELPERS.test(file));

  it('are named after what they give', () => {
    expect(helpers.length).toBeGreaterThan(20);
    expect(helpers.filter((file) => ROLE_NAMES.test(path.basename(file, '.ts')))).toEqual([]);
  });

  it('outside test/support/, are imported from their own folder only', async () => {
    const local = new Set(helpers.filter((file) => folderOf(file) !== 'support' && file.includes('/')));
    expect(local.size).toBeGreaterThan(5);
    const strays: string[] = [];
    for (const file of files) {
      for (const imported of importsOf(file, await readFile(path.join(testDir, file), 'utf8'))) {
        if (local.has(imported) && folderOf(imported) !== folderOf(file)) strays.push(`${file} imports ${imported}`);
      }
    }
    expect(strays).toEqual([]);
  });
});
