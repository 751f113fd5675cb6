/** docs/api.md#resolving-a-decision: a policy file with a key given twice, or nested deeper than a document needs, is invalid. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOOL_CATALOG } from '../../schemas/index.js';
import { MAX_DOCUMENT_DEPTH, compilePolicyFile } from '../../server/domain/compile.js';
import { checkStrictJson, lineColumn } from '../../server/domain/strict-json.js';

const DEEP = 1_000;
const parses = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
const textOf = (value: unknown, indent: number) => JSON.stringify(value, null, indent);
/** Keys that look alike to a naive scanner: escapes, quotes, backslashes, astral characters. */
const keyArb = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
  fc.constantFrom('a', '"', '\\', '\\"', '😀'),
);

describe('checkStrictJson', () => {
  it('accepts every JSON text JSON.parse accepts when it has no duplicate key, whatever the layout', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom(0, 1, 2, '\t', '\r\n '), (value, indent) => {
        const text = JSON.stringify(value, null, indent);
        expect(checkStrictJson(text, DEEP)).toBeNull();
      }),
      { numRuns: 1000 },
    );
  });

  it('agrees with JSON.parse on which texts are valid, and finds where they stop being valid', () => {
    const mutated = fc
      .tuple(
        fc.jsonValue({ maxDepth: 4 }),
        fc.nat(),
        fc.constantFrom('', '"', '\\', ',', '}', ']', '{', '[', ':', '0', '-', 'e', '.', ' ', '\u0001', 'u', 'x'),
      )
      .map(([value, at, insert]) => {
        const text = JSON.stringify(value);
        const cut = at % (text.length + 1);
        return at % 2 === 0 ? text.slice(0, cut) + insert + text.slice(cut) : text.slice(0, cut) + text.slice(cut + 1);
      });
    fc.assert(
      fc.property(fc.oneof(mutated, fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 })), (text) => {
        const problem = checkStrictJson(text, DEEP);
        fc.pre(problem?.kind !== 'duplicate');
        expect(problem === null, JSON.stringify(text)).toBe(parses(text));
        // A problem is reported inside the text or at its end (a text cut short).
        if (problem !== null) expect(problem.offset).toBeLessThanOrEqual(text.length);
      }),
      { numRuns: 5000 },
    );
  });

  it.each([
    ['{"a":1,"a":2}', 'a', 7],
    ['{"a":1,"\\u0061":2}', 'a', 7],
    ['{"\\"":1,"\\u0022":2}', '"', 8],
    ['{"x":{"k":[1,{"p":1,"q":2,"p":3}]}}', 'p', 26],
    ['[{"a":1},{"a":1,"b":2,"b":3}]', 'b', 22],
  ])('reports the duplicate key in %s', (text, key, offset) => {
    expect(checkStrictJson(text, DEEP)).toEqual({ kind: 'duplicate', key, offset });
  });

  it('reports a key given twice anywhere in a random document, at its second occurrence', () => {
    fc.assert(
      fc.property(
        fc.dictionary(keyArb, fc.jsonValue({ maxDepth: 2 }), { minKeys: 1, maxKeys: 20 }),
        fc.nat(),
        fc.jsonValue({ maxDepth: 2 }),
        fc.nat(3),
        fc.constantFrom(0, 2),
        (object, pick, extra, wrap, indent) => {
          const keys = Object.keys(object);
          const key = keys[pick % keys.length] as string;
          // The object's text with `key` once more at its end, then nested in a few containers.
          const inner = `${textOf(object, indent).replace(/\}$/, '').replace(/\s*$/, '')},${JSON.stringify(key)}:${textOf(extra, indent)}}`;
          const text = '[{"w":'.repeat(wrap) + inner + '}]'.repeat(wrap);
          const problem = checkStrictJson(text, DEEP);
          expect(problem).toMatchObject({ kind: 'duplicate', key });
          expect(text.slice(problem?.offset)).toMatch(new RegExp(`^${JSON.stringify(key).replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')}`));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('allows equal keys in different objects, and keys that differ only by case or normalization', () => {
    expect(checkStrictJson('[{"a":1},{"a":2}]', DEEP)).toBeNull();
    expect(checkStrictJson('{"a":{"a":{"a":1}}}', DEEP)).toBeNull();
    expect(checkStrictJson('{"A":1,"a":2,"é":3,"e\\u0301":4}', DEEP)).toBeNull();
    const many = `{${Array.from({ length: 1000 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    expect(checkStrictJson(many, DEEP)).toBeNull();
    expect(checkStrictJson(many.replace(/\}$/, ',"k999":0}'), DEEP)).toMatchObject({ kind: 'duplicate', key: 'k999' });
  });

  it('refuses nesting deeper than the limit at the first container past it, whatever follows', () => {
    expect(checkStrictJson('[[[1]]]', 3)).toBeNull();
    expect(checkStrictJson('[[[[1]]]]', 3)).toEqual({ kind: 'depth', offset: 3 });
    expect(checkStrictJson('{"a":{"b":{"c":{}}}}', 3)).toEqual({ kind: 'depth', offset: 15 });
    // A 16 MiB file of brackets is refused at its ninth character, without reading the rest.
    const brackets = Buffer.alloc(16 * 1024 * 1024, '[').toString('latin1');
    const started = performance.now();
    expect(checkStrictJson(brackets, 8)).toEqual({ kind: 'depth', offset: 8 });
    expect(performance.now() - started).toBeLessThan(20);
  });

  it('gives 1-based lines and columns', () => {
    expect(lineColumn('abc', 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumn('a\nbc', 3)).toEqual({ line: 2, column: 2 });
    expect(lineColumn('a\n\n', 3)).toEqual({ line: 3, column: 1 });
  });
});

describe('policy files', () => {
  it('makes a document with a duplicate key invalid, naming the key, its line and its column', () => {
    const text = [
      '{',
      '  "version": 1,',
      '  "agents": [',
      '    { "agentId": "QA", "policy": { "allowedTools": [] },',
      '      "policy": { "allowedTools": ["idea_memory_write"] } }',
      '  ]',
      '}',
    ].join('\n');
    const policy = compilePolicyFile(Buffer.from(text));
    expect(policy).toMatchObject({ status: 'invalid', error: { line: 5, column: 7 } });
    if (policy.status === 'invalid') expect(policy.error.message).toMatch(/^duplicate key "policy" at line 5, column 7/);
  });

  it('makes a document nested deeper than a policy needs invalid before parsing it', () => {
    const nested = `{"version":1,"x":${'['.repeat(MAX_DOCUMENT_DEPTH)}${']'.repeat(MAX_DOCUMENT_DEPTH)}}`;
    const policy = compilePolicyFile(Buffer.from(nested));
    expect(policy).toMatchObject({ status: 'invalid', error: { line: 1, column: 17 + MAX_DOCUMENT_DEPTH } });
    if (policy.status === 'invalid') expect(policy.error.message).toMatch(/^nested deeper than 8 levels/);
    // The deepest document the schema allows still reads.
    expect(compilePolicyFile(Buffer.from('{"version":1,"agents":[{"agentId":"QA","policy":{"allowedTools":[]}}]}'))).toMatchObject({
      status: 'ok',
    });
  });

  it('keeps reporting JSON syntax errors with their line and column', () => {
    const policy = compilePolicyFile(Buffer.from('{\n  "version": 1,\n  "agents": [,]\n}'));
    expect(policy).toMatchObject({ status: 'invalid', error: { line: 3, column: 14 } });
    if (policy.status === 'invalid') expect(policy.error.message).toMatch(/^invalid JSON at line 3, column 14: /);
  });

  it('checks a 4 MiB policy file in well under 50 ms of CPU', () => {
    const names = TOOL_CATALOG.map((tool) => tool.name);
    const agents: unknown[] = [];
    let text = '';
    for (let i = 0; text.length < 4 * 1024 * 1024;) {
      for (let k = 0; k < 500; k++, i++)
        agents.push({ agentId: `agent-${i}`, policy: { allowedTools: names.filter((_, j) => (i + j) % 2 === 0) } });
      text = JSON.stringify({ version: 1, agents }, null, 2);
    }
    const times: number[] = [];
    for (let run = 0; run < 5; run++) {
      const before = process.cpuUsage();
      expect(checkStrictJson(text, MAX_DOCUMENT_DEPTH)).toBeNull();
      const used = process.cpuUsage(before);
      times.push((used.user + used.system) / 1000);
    }
    const best = Math.min(...times);
    expect(best).toBeLessThan(50);
  });
});
