/**
 * docs/api.md#conditions-on-a-tools-arguments: a `prefix` condition never lets through a command that a
 * shell would run differently from its words. Values are drawn from shell metacharacters and
 * expansions; every value the condition accepts is given to a real bash, which must see exactly its
 * literal words and run nothing else.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkArguments, compileToolConditions, wordsOf } from '../../server/domain/conditions.js';
import { tempFolder } from '../support/temp-folder.js';

/** What bash makes of `value` as the arguments of a command: its words after every expansion. */
function bashWords(value: string, cwd: string): { words: string[]; status: number | null } {
  // `printf '%s\0'` prints each argument bash passes, so a split, glob or expansion shows as another list.
  const result = spawnSync('bash', ['-c', `printf '%s\\0' ${value}`], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, IFS: ' \t\n' },
    encoding: 'utf8',
    timeout: 5_000,
  });
  const words = result.stdout === '' ? [] : result.stdout.replace(/\0$/, '').split('\0');
  return { words, status: result.status };
}

const accepts = (prefixes: string[], command: string): boolean =>
  checkArguments(compileToolConditions({ command: { prefix: prefixes } }), { command }).kind === 'ok';

/** Pieces a hostile word is made of: expansions, quotes, globs, operators, and plain characters. */
const SHELL_PIECES = [
  '$x',
  '${x}',
  '${x=$(touch p)}',
  '${x@P}',
  '${PATH:x:1}',
  '$[x]',
  '${!x}',
  '$((1+1))',
  '$(touch p)',
  '`touch p`',
  "$'\\x41'",
  '$',
  '{',
  '}',
  '{a,b}',
  '[',
  ']',
  '*',
  '?',
  '~',
  '~root',
  '!',
  '#',
  '(',
  ')',
  "'",
  '"',
  '\\',
  ';',
  '&',
  '|',
  '<',
  '>',
  '\n',
  '\r',
  '\u00a0',
  '\u0085',
  'é',
  '=',
  '%',
  '..',
  '../',
  '-',
  '--',
  '-x',
  '--script-shell=./evil.sh',
  ':',
  '@',
  '+',
  ',',
  'a',
  'b',
  'p',
  '.',
  '/',
  '_',
  '0',
];

const wordArb = fc.array(fc.constantFrom(...SHELL_PIECES), { minLength: 1, maxLength: 4 }).map((pieces) => pieces.join(''));
const commandArb = fc
  .record({
    prefix: fc.constantFrom('npm test', 'npm test --'),
    words: fc.array(fc.tuple(fc.constantFrom(' ', '\t', '  '), wordArb), { maxLength: 4 }),
    trailing: fc.constantFrom('', ' ', '\t'),
  })
  .map(({ prefix, words, trailing }) => ({ prefix, command: `${prefix}${words.map(([gap, word]) => gap + word).join('')}${trailing}` }));

describe('prefix conditions against a real bash', () => {
  it('never accepts a value that bash expands, splits, globs or runs differently from its words', async () => {
    const cwd = await tempFolder();
    // Files a glob would find, and a folder a `..` would climb out of.
    for (const name of ['a', 'b', 'ab', 'p0']) writeFileSync(path.join(cwd, name), '');
    mkdirSync(path.join(cwd, 'sub'));
    let accepted = 0;
    fc.assert(
      fc.property(commandArb, ({ prefix, command }) => {
        if (!accepts([prefix], command)) return;
        accepted += 1;
        const { words, status } = bashWords(command, cwd);
        expect(status, command).toBe(0);
        expect(words, JSON.stringify(command)).toEqual(wordsOf(command));
        expect(existsSync(path.join(cwd, 'p')), JSON.stringify(command)).toBe(false);
      }),
      { numRuns: 400 },
    );
    // The property means something only if plenty of drawn values were accepted and run.
    expect(accepted).toBeGreaterThan(25);
  });

  it('refuses the payloads that escaped a prefix, each of which runs a command through bash', async () => {
    const cwd = await tempFolder();
    const payloads = [
      'npm test ${x=\\$\\(touch\\ pwned\\)} ${x@P}',
      'npm test ${PATH:x=$(touch pwned):1}',
      'npm test $[x=$(touch pwned)]',
      'npm test ${a[x=$(touch pwned)]} ${!x}',
    ];
    for (const payload of payloads) {
      expect(accepts(['npm test'], payload), payload).toBe(false);
      expect(accepts(['npm test --'], payload), payload).toBe(false);
    }
    // Shown to be real: bash runs the embedded command for at least the first payload.
    spawnSync('bash', ['-c', `printf '%s\\0' ${payloads[0] ?? ''}`], { cwd, env: { PATH: process.env.PATH ?? '' } });
    expect(existsSync(path.join(cwd, 'pwned'))).toBe(true);
    // An option after the prefix is npm's, not the test's: --script-shell runs any program.
    expect(accepts(['npm test'], 'npm test --script-shell=/tmp/evil.sh')).toBe(false);
    expect(accepts(['npm test --'], 'npm test -- --script-shell=/tmp/evil.sh')).toBe(true);
    expect(accepts(['npm test --'], 'npm test -- ../../etc/passwd')).toBe(false);
  });
});
