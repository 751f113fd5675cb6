/**
 * The panel's shape: ui/src has no import cycle (type-only imports included), and no constructor
 * hands `this` to another object (controllers are built from the store and the API, never from
 * a hub that they call back).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCycle } from '../support/import-graph.js';

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'ui', 'src');

async function sources(): Promise<Map<string, string>> {
  const files = (await readdir(srcDir)).filter((name) => name.endsWith('.ts'));
  return new Map(await Promise.all(files.map(async (name) => [name, await readFile(path.join(srcDir, name), 'utf8')] as const)));
}

/** The ui/src modules a module imports (`./x.js` → `x.ts`). */
function localImports(text: string): string[] {
  return [...text.matchAll(/^import\s[^;]*?from\s+'\.\/([\w-]+)\.js';/gms)].map((match) => `${match[1]}.ts`);
}

describe('the panel’s module structure', () => {
  it('finds a cycle when there is one (the check itself)', () => {
    expect(
      findCycle(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', ['c.ts']],
          ['c.ts', ['a.ts']],
        ]),
      ),
    ).toEqual(['a.ts', 'b.ts', 'c.ts', 'a.ts']);
    expect(
      findCycle(
        new Map([
          ['a.ts', ['b.ts']],
          ['b.ts', []],
        ]),
      ),
    ).toBeNull();
  });

  it('has no import cycle in ui/src', async () => {
    const files = await sources();
    const graph = new Map([...files].map(([name, text]) => [name, localImports(text)] as const));
    expect(graph.get('main.ts')?.length ?? 0).toBeGreaterThan(5); // the parser sees the imports
    expect(findCycle(graph)).toBeNull();
  });

  it('never passes `this` to another object from a constructor', async () => {
    for (const [name, text] of await sources()) {
      for (const match of text.matchAll(/constructor\(([^)]*)\)\s*\{([^}]*)\}/gs)) {
        expect({ file: name, escapes: /\(\s*this\b|,\s*this\b|=>\s*this\b/.test(match[2] ?? '') }).toEqual({ file: name, escapes: false });
      }
    }
  });

  it('gives the views only the state and the actions', async () => {
    for (const [name, text] of await sources()) {
      if (!name.endsWith('-view.ts') && name !== 'view.ts') continue;
      const imported = localImports(text);
      const controllers = [
        'navigation.ts',
        'editing.ts',
        'writes.ts',
        'requests.ts',
        'denials.ts',
        'draft-preview.ts',
        'live-sync.ts',
        'store.ts',
      ];
      expect({ file: name, controllers: imported.filter((module) => controllers.includes(module)) }).toEqual({
        file: name,
        controllers: [],
      });
    }
  });
});
