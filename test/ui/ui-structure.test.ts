/**
 * The panel's shape: ui/src has no import cycle (type-only imports included), its folders import
 * one another in one direction only (ui/src/README.md), and no constructor hands `this` to another
 * object (controllers are built from the store and the API, never from a hub that they call back).
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCycle } from '../support/import-graph.js';

const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'ui', 'src');

/** Every `.ts` file of ui/src by its path inside it (`views/view.ts`), with its text. */
async function sources(): Promise<Map<string, string>> {
  const entries = await readdir(srcDir, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(srcDir, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
  return new Map(await Promise.all(files.map(async (file) => [file, await readFile(path.join(srcDir, file), 'utf8')] as const)));
}

interface LocalImport {
  target: string;
  typeOnly: boolean;
}

/** The ui/src modules a module imports, as paths inside ui/src (`../state/state.js` from `views/view.ts` → `state/state.ts`). */
function localImportsOf(file: string, text: string): LocalImport[] {
  return [...text.matchAll(/^(import|export)\s(type\s)?[^;]*?from\s+'(\.[^']+)\.js';/gms)]
    .map((match) => ({ target: path.posix.join(path.posix.dirname(file), `${match[3] ?? ''}.ts`), typeOnly: match[2] !== undefined }))
    .filter(({ target }) => !target.startsWith('../'));
}

function localImports(file: string, text: string): string[] {
  return localImportsOf(file, text).map(({ target }) => target);
}

/** The folder of a ui/src path; the composition root (main.ts, action-routes.ts) is `.`. */
function folderOf(file: string): string {
  return path.posix.dirname(file);
}

/**
 * The folders each folder may import from, besides its own (ui/src/README.md): a folder never
 * imports one above it, views and controllers never import each other, and the composition root
 * imports any. Outside controllers/ and the root, api/ is imported for its types only (only a
 * controller calls the service).
 */
const MAY_IMPORT: Readonly<Record<string, readonly string[]>> = {
  api: [],
  dom: [],
  model: ['api'],
  state: ['model', 'api'],
  controllers: ['state', 'model', 'api'],
  views: ['state', 'model', 'dom', 'api'],
};
const CALLS_THE_SERVICE = new Set(['controllers', '.']);

/** Every import of `files` against the rule above, as `from → to` lines. */
function wrongImports(files: ReadonlyMap<string, string>): string[] {
  const wrong: string[] = [];
  for (const [file, text] of files) {
    const from = folderOf(file);
    if (from === '.') continue;
    const allowed = MAY_IMPORT[from];
    for (const { target, typeOnly } of localImportsOf(file, text)) {
      const to = folderOf(target);
      if (to === from) continue;
      if (allowed?.includes(to) !== true) wrong.push(`${file} → ${target}`);
      else if (to === 'api' && !typeOnly && !CALLS_THE_SERVICE.has(from)) wrong.push(`${file} → ${target} (not type-only)`);
    }
  }
  return wrong;
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
    const graph = new Map([...files].map(([name, text]) => [name, localImports(name, text)] as const));
    expect(graph.get('main.ts')?.length ?? 0).toBeGreaterThan(5); // the parser sees the imports
    expect([...graph.values()].flat().filter((target) => !graph.has(target))).toEqual([]);
    expect(findCycle(graph)).toBeNull();
  });

  it('finds an import against the folders’ direction (the check itself)', () => {
    expect(
      wrongImports(
        new Map([
          ['views/a-view.ts', "import { Editing } from '../controllers/editing.js';\nimport type { X } from '../api/api.js';"],
          ['model/m.ts', "import { h } from '../dom/dom.js';"],
          ['state/s.ts', "import { PermissionsApi } from '../api/api.js';\nimport type { Y } from '../model/model.js';"],
          ['controllers/c.ts', "import { PermissionsApi } from '../api/api.js';\nimport { renderPage } from '../views/view.js';"],
          ['main.ts', "import { Editing } from './controllers/editing.js';"],
        ]),
      ),
    ).toEqual([
      'views/a-view.ts → controllers/editing.ts',
      'model/m.ts → dom/dom.ts',
      'state/s.ts → api/api.ts (not type-only)',
      'controllers/c.ts → views/view.ts',
    ]);
  });

  it('imports across ui/src folders in one direction only', async () => {
    const files = await sources();
    expect(new Set([...files.keys()].map(folderOf))).toEqual(new Set(['.', ...Object.keys(MAY_IMPORT)]));
    // Only the composition root sits beside the folders: a new module goes into the folder of its layer.
    expect([...files.keys()].filter((file) => folderOf(file) === '.').sort()).toEqual(['action-routes.ts', 'main.ts']);
    expect(wrongImports(files)).toEqual([]);
  });

  it('keeps each folder to at most 12 modules', async () => {
    const counts = new Map<string, number>();
    for (const file of (await sources()).keys()) counts.set(folderOf(file), (counts.get(folderOf(file)) ?? 0) + 1);
    expect([...counts].filter(([, count]) => count > 12)).toEqual([]);
  });

  it('never passes `this` to another object from a constructor', async () => {
    for (const [name, text] of await sources()) {
      for (const match of text.matchAll(/constructor\(([^)]*)\)\s*\{([^}]*)\}/gs)) {
        expect({ file: name, escapes: /\(\s*this\b|,\s*this\b|=>\s*this\b/.test(match[2] ?? '') }).toEqual({ file: name, escapes: false });
      }
    }
  });

  it('gives the views only the state and the actions', async () => {
    const files = await sources();
    expect([...files.keys()].filter((name) => name.startsWith('views/')).length).toBeGreaterThan(5);
    for (const [name, text] of files) {
      if (!name.startsWith('views/')) continue;
      const imported = localImports(name, text);
      expect({
        file: name,
        controllers: imported.filter((module) => module.startsWith('controllers/') || module === 'state/store.ts'),
      }).toEqual({
        file: name,
        controllers: [],
      });
    }
  });
});
