/**
 * docs/policy-as-code.md: `idea-pdp test` keeps running a file's readable cases when one cannot be read, gives
 * the same counts in text, TAP, JUnit and JSON (with --strict too), names JUnit cases uniquely, shows
 * coverage in every format and fails below --coverage-min.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

const POLICY = {
  version: 1,
  projectDefault: { allowedTools: ['idea_memory_read'] },
  agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_memory_read', 'idea_memory_write'] } }],
};
const CASES = [
  { requester: 'QA', tool: 'idea_memory_write', expect: 'allow' },
  { requester: 'QA', tool: 'idea_memory_write', expect: 'alow' },
  { requester: 'Dev', tool: 'idea_memory_write', expect: 'deny', arguments: { key: 'a' } },
  { requester: 'Dev', tool: 'idea_memory_write', expect: 'deny', arguments: { key: 'b' } },
  { requester: 'Dev', tool: 'idea_memroy_read', expect: 'deny' },
  { requester: 'Dev', tool: 'idea_memory_read', expect: 'allow' },
];

async function project(): Promise<string> {
  const dir = path.join(await tempFolder(), 'demo');
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.json'), JSON.stringify(POLICY, null, 2));
  await writeFile(path.join(dir, '.ideai', 'agents.json'), JSON.stringify([{ id: 'QA' }, { id: 'Dev' }]));
  await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.test.json'), JSON.stringify({ version: 1, cases: CASES }, null, 2));
  return dir;
}

interface Suite {
  tests: string;
  failures: string;
  testcase?: { name: string }[] | { name: string };
}

async function countsInEveryFormat(dir: string, extra: string[]): Promise<{ passed: number; failed: number; names: string[] }[]> {
  const text = await runSourceCli(['test', '.', ...extra], dir);
  const [, passed = '', failed = ''] = /^(\d+) passed, (\d+) failed$/m.exec(text.stdout) ?? [];
  const tap = (await runSourceCli(['test', '.', '--format', 'tap', ...extra], dir)).stdout;
  const junit = (await runSourceCli(['test', '.', '--format', 'junit', ...extra], dir)).stdout;
  const json = JSON.parse((await runSourceCli(['test', '.', '--json', ...extra], dir)).stdout) as { passed: number; failed: number };
  const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(junit) as {
    testsuites: { tests: string; failures: string; testsuite: Suite | Suite[] };
  };
  const suites = [parsed.testsuites.testsuite].flat();
  const names = suites.flatMap((suite) => [suite.testcase ?? []].flat().map((one) => one.name));
  const tapPoints = tap.split('\n').filter((line) => /^(not )?ok \d+ /.test(line));
  return [
    { passed: Number(passed), failed: Number(failed), names: [] },
    {
      passed: tapPoints.filter((line) => line.startsWith('ok')).length,
      failed: tapPoints.filter((line) => line.startsWith('not ok')).length,
      names: [],
    },
    { passed: Number(parsed.testsuites.tests) - Number(parsed.testsuites.failures), failed: Number(parsed.testsuites.failures), names },
    { passed: json.passed, failed: json.failed, names: [] },
  ];
}

describe('idea-pdp test counts', () => {
  it('an unreadable case is one failure and the other five still run, the same counts in every format, with --strict too', async () => {
    const dir = await project();
    const text = await runSourceCli(['test', '.'], dir);
    expect(text.code).toBe(1);
    expect(text.stdout).toContain('expected one of allow, deny, ask, got "alow" at /cases/1/expect');
    // Five cases run (all pass) and the unreadable one fails.
    expect(text.stdout).toMatch(/^5 passed, 1 failed$/m);
    const plain = await countsInEveryFormat(dir, []);
    expect(plain.map(({ passed, failed }) => [passed, failed])).toEqual(Array(4).fill([5, 1]));
    // JUnit names are unique though two cases differ only in their arguments.
    const names = plain[2]?.names ?? [];
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((name) => name.startsWith('requester "Dev" tool idea_memory_write (at '))).toHaveLength(2);

    // --strict: the unknown tool's warning is one more failure, in every format.
    const strict = await countsInEveryFormat(dir, ['--strict']);
    expect(strict.map(({ passed, failed }) => [passed, failed])).toEqual(Array(4).fill([5, 2]));
  });

  it('--coverage in every format, and --coverage-min fails the run below it', async () => {
    const dir = await project();
    await writeFile(
      path.join(dir, '.ideai', 'mcp-tool-permissions.test.json'),
      JSON.stringify({ version: 1, cases: [CASES[0], CASES[2]] }, null, 2),
    );
    const line = 'coverage demo: 2 of 32 agent × write tool pairs exercised';
    // From inside the project the folder is shown as ".": run from its parent to name it.
    const parent = path.dirname(dir);
    expect((await runSourceCli(['test', 'demo', '--coverage'], parent)).stdout).toContain(line);
    expect((await runSourceCli(['test', 'demo', '--coverage', '--format', 'tap'], parent)).stdout).toContain(`# ${line}`);
    expect((await runSourceCli(['test', 'demo', '--coverage', '--format', 'junit'], parent)).stdout).toContain(line);
    const json = JSON.parse((await runSourceCli(['test', 'demo', '--coverage', '--json'], parent)).stdout) as { coveragePercent: number };
    expect(json.coveragePercent).toBe(6.3);

    const met = await runSourceCli(['test', 'demo', '--coverage-min', '5'], parent);
    expect(met.code, met.stdout).toBe(0);
    const below = await runSourceCli(['test', 'demo', '--coverage-min', '50%'], parent);
    expect(below.code).toBe(1);
    expect(below.stdout).toContain(
      '--coverage-min:1:1: error coverage_below_minimum: 6.3% of agent × write tool pairs exercised, below --coverage-min 50',
    );
    expect(below.stdout).toMatch(/^2 passed, 1 failed$/m);
    const junit = await runSourceCli(['test', 'demo', '--coverage-min', '50', '--format', 'junit'], parent);
    expect(junit.stdout).toContain('<testsuites name="idea-pdp test" tests="3" failures="1">');
    const bad = await runSourceCli(['test', 'demo', '--coverage-min', 'lots'], parent);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--coverage-min is a percent from 0 to 100');
  });
});
