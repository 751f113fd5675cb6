/**
 * The service's shape: server/ has no import cycle between its modules (type-only and dynamic
 * imports included), so each file can be read, tested and moved with only what it imports.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findCycle } from './support/import-graph.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const serverDir = path.join(repoRoot, 'server');

/** Every `.ts` file under server/, as a path from the repository's root. */
async function serverFiles(): Promise<string[]> {
  const entries = await readdir(serverDir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => path.relative(repoRoot, path.join(entry.parentPath, entry.name)));
}

/** The server/ modules a module imports (`./x.js` → `x.ts`, relative to it). */
function localImports(file: string, text: string): string[] {
  const specifiers = [
    ...[...text.matchAll(/^(?:import|export)\s[^;]*?from\s+'(\.[^']+)';/gms)].map((match) => match[1]),
    ...[...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)].map((match) => match[1]),
  ];
  return specifiers
    .filter((specifier): specifier is string => specifier !== undefined)
    .map((specifier) => path.join(path.dirname(file), specifier.replace(/\.js$/, '.ts')))
    .filter((target) => target.startsWith(`server${path.sep}`));
}

describe('the service’s module structure', () => {
  it('has no import cycle in server/', async () => {
    const files = await serverFiles();
    const graph = new Map(
      await Promise.all(files.map(async (file) => [file, localImports(file, await readFile(path.join(repoRoot, file), 'utf8'))] as const)),
    );
    // The parser sees the imports: the app plugin imports its routes, and every import names a file that exists.
    expect(graph.get(path.join('server', 'http', 'service-plugin.ts'))?.length ?? 0).toBeGreaterThan(5);
    expect([...graph.values()].flat().filter((target) => !graph.has(target))).toEqual([]);
    expect(findCycle(graph)).toBeNull();
  });
});
