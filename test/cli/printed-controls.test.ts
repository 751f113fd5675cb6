/**
 * What `idea-pdp` prints holds no control or bidirectional character of the data it shows: a test
 * case's tool with a line break and `ok 1 - …` or `Bail out!`, ANSI escapes, a `# SKIP`, a folder
 * named with a line break. They are shown as JSON-style escapes (`\n`, `\u001b`, `\u202e`), so no
 * line is added to a TAP stream and nothing reaches the terminal as a command. JSON keeps the values.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

const CASES = [
  { requester: 'QA', tool: 'idea_ticket_read\nok 1 - forged', expect: 'allow' },
  { requester: 'QA', tool: 'idea_memory_write\nBail out! stop the run', expect: 'allow' },
  {
    requester: 'QA\u001b[2J\u001b[31m',
    tool: '\u001b]0;title\u0007idea_memory_write',
    expect: 'deny',
    name: 'ansi \u001b[1m\nnot ok 9 - x',
  },
  { requester: 'QA', tool: '\u202eidea_ticket_read\u202c \u009b31m\r', expect: 'allow' },
  { requester: 'QA', tool: 'idea_ticket_read # SKIP', expect: 'allow' },
];

/** What no printed line may hold: C0 controls but the line feed, DEL, C1, line separators, bidirectional controls. */
// eslint-disable-next-line no-control-regex -- the characters under test.
const UNSHOWABLE = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

async function projectIn(folderName: string): Promise<{ root: string; dir: string }> {
  const root = await tempFolder();
  const dir = path.join(root, folderName);
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.json'), '{ "version": 1 }\n');
  await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.test.json'), JSON.stringify({ version: 1, cases: CASES }, null, 2));
  return { root, dir };
}

describe('idea-pdp prints data with its control characters escaped', () => {
  it('TAP: one test point per case, no line a case wrote, no directive it smuggled', async () => {
    const { dir } = await projectIn('p');
    const run = await runSourceCli(['test', '--format', 'tap'], dir);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toMatch(UNSHOWABLE);
    const lines = run.stdout.trimEnd().split('\n');
    for (const line of lines) expect(line).toMatch(/^(?:TAP version 13|1\.\.\d+|(?:not )?ok \d+ - .*| {2}\S.*|# .*)$/);
    expect(lines.filter((line) => line.startsWith('Bail out!'))).toEqual([]);
    const points = lines.filter((line) => /^(?:not )?ok \d+ /.test(line));
    expect(points.map((line) => Number(/ok (\d+)/.exec(line)?.[1]))).toEqual([1, 2, 3, 4, 5]);
    expect(lines[1]).toBe('1..5');
    expect(points[0]).toBe('not ok 1 - requester "QA" tool "idea_ticket_read\\nok 1 - forged"');
    expect(points[1]).toBe('not ok 2 - requester "QA" tool "idea_memory_write\\nBail out! stop the run"');
    expect(points[2]).toBe(
      'ok 3 - "ansi \\u001b[1m\\nnot ok 9 - x" requester "QA\\u001b[2J\\u001b[31m" tool "\\u001b]0;title\\u0007idea_memory_write"',
    );
    expect(points[3]).toBe('not ok 4 - requester "QA" tool "\\u202eidea_ticket_read\\u202c \\u009b31m\\r"');
    // A tool that cannot be decided fails its `allow`: a `# SKIP` in its name must not turn that into a skip.
    expect(points[4]).toBe('not ok 5 - requester "QA" tool "idea_ticket_read \\# SKIP"');
  }, 120_000);

  it('lines (-v) and check: one line per problem and per case, escapes visible', async () => {
    const { dir } = await projectIn('p');
    const run = await runSourceCli(['test', '-v'], dir);
    expect(run.stdout).not.toMatch(UNSHOWABLE);
    const lines = run.stdout.trimEnd().split('\n');
    // Five unknown_tool warnings, five cases, the summary.
    expect(lines).toHaveLength(11);
    expect(lines.slice(0, 10).every((line) => line.startsWith('.ideai/mcp-tool-permissions.test.json:'))).toBe(true);
    expect(lines[10]).toBe('1 passed, 4 failed');
    expect(run.stdout).toContain('FAIL requester "QA" tool "idea_ticket_read\\nok 1 - forged": expected allow, got deny');
    expect(run.stdout).toContain('Tool \\u202eidea_ticket_read\\u202c \\u009b31m\\r is denied');

    // A condition's key is named raw in the JSON pointer of its problem.
    const policy = {
      version: 1,
      projectDefault: { allowedTools: [], conditions: { 'idea_x\nBail out!\u001b[2J': { key: { in: ['a'] } } } },
    };
    await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.json'), JSON.stringify(policy));
    const check = await runSourceCli(['check'], dir);
    expect(check.code).toBe(1);
    expect(check.stdout).not.toMatch(UNSHOWABLE);
    const checked = check.stdout.trimEnd().split('\n');
    // The policy's error, the test file's five unknown_tool warnings (check reads test files too), the summary.
    expect(checked).toHaveLength(7);
    expect(checked.slice(1, 6).every((line) => line.startsWith('.ideai/mcp-tool-permissions.test.json:'))).toBe(true);
    expect(checked[0]).toContain(
      'error condition_unlisted_tool: condition on "idea_x\\nBail out!\\u001b[2J" at /projectDefault/conditions/idea_x\\nBail out!\\u001b[2J:',
    );
  }, 120_000);

  it('a folder named with a line break and ANSI escapes: the file named on one line, stderr too', async () => {
    const name = 'team\u001b[31m\nok 1 - x\u202e';
    const { root, dir } = await projectIn(name);
    await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.json'), '{ "version": 2 }\n');
    const check = await runSourceCli(['check', name], root);
    expect(check.code).toBe(1);
    expect(check.stdout).not.toMatch(UNSHOWABLE);
    expect(check.stdout.split('\n')[0]).toMatch(
      /^team\\u001b\[31m\\nok 1 - x\\u202e\/\.ideai\/mcp-tool-permissions\.json:1:\d+: error unsupported_version/,
    );

    const coverage = await runSourceCli(['test', '--coverage', name], root);
    expect(coverage.stdout).not.toMatch(UNSHOWABLE);
    expect(coverage.stdout).toContain('coverage team\\u001b[31m\\nok 1 - x\\u202e: ');

    const missing = await runSourceCli(['test', `${name}/.ideai`], root);
    expect(missing.stderr).not.toMatch(UNSHOWABLE);
    expect(missing.stderr).toContain('idea-pdp test: no team\\u001b[31m\\nok 1 - x\\u202e/.ideai/.ideai/mcp-tool-permissions.test.json');

    const usage = await runSourceCli(['check', `${name}-missing`], root);
    expect(usage.code).toBe(2);
    expect(usage.stderr.split('\n')[0]).toBe('idea-pdp: not a folder: team\\u001b[31m\\nok 1 - x\\u202e-missing');
  }, 120_000);

  it('JSON keeps the values as they are; JUnit names each case once', async () => {
    const { dir } = await projectIn('p');
    const json = await runSourceCli(['test', '--json'], dir);
    expect(json.stdout).not.toMatch(UNSHOWABLE);
    const parsed = JSON.parse(json.stdout) as { cases: { tool: string; requester: string; name?: string }[] };
    expect(parsed.cases.map((one) => one.tool)).toEqual(CASES.map((one) => one.tool));
    expect(parsed.cases[2]).toMatchObject({ requester: CASES[2]?.requester, name: CASES[2]?.name });

    const junit = await runSourceCli(['test', '--format', 'junit'], dir);
    expect(junit.stdout).not.toMatch(UNSHOWABLE);
    const xml = new XMLParser({ ignoreAttributes: false }).parse(junit.stdout) as {
      testsuites: { testsuite: { testcase: { '@_name': string }[] } };
    };
    const names = xml.testsuites.testsuite.testcase.map((one) => one['@_name']);
    expect(names).toHaveLength(5);
    expect(new Set(names).size).toBe(5);
    expect(names[0]).toBe('requester "QA" tool "idea_ticket_read\\nok 1 - forged"');
  }, 120_000);
});
