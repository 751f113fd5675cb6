/** `idea-pdp test`: the cases of each project's test file decided with the service's decision function. */
import { escapeControls } from '../../schemas/display.js';
import { TOOL_CATALOG, type PolicyProblem } from '../../schemas/index.js';
import { POLICY_FILE, TEST_FILE, checkPolicy, moreLine, problemLine, strictly } from '../domain/policy-check.js';
import { caseLine, declaredAgents, parseTestFile, runCases } from '../domain/policy-tests.js';
import { plural, problemAt, projectFolders, projectIdOf, shown, type Output } from './commands.js';
import { readProject, readTestText } from './project-input.js';
import { caseReport, coverageOf, junitReport, tapReport, type CaseReport, type Coverage } from './test-report.js';
import { UsageError } from './usage.js';

export const TEST_FORMATS = ['lines', 'json', 'tap', 'junit'] as const;
export type TestFormat = (typeof TEST_FORMATS)[number];

export interface TestOptions {
  readonly format: TestFormat;
  readonly project: string | undefined;
  readonly verbose: boolean;
  readonly run: string | undefined;
  readonly coverage: boolean;
  readonly require: boolean;
  readonly strict: boolean;
  readonly staged: boolean;
}

const WRITE_TOOLS = TOOL_CATALOG.filter((tool) => tool.access === 'write').map((tool) => tool.name);

export async function testCommand(dirs: readonly string[], options: TestOptions, output: Output): Promise<number> {
  if (!(TEST_FORMATS as readonly string[]).includes(options.format)) throw new UsageError(`--format is one of tap, junit, json`);
  const cases: CaseReport[] = [];
  const problems: PolicyProblem[] = [];
  const coverage: Coverage[] = [];
  let notRun = 0;
  /** Problems that fail the run beyond its cases: an unusable test file, an invalid policy with no case to fail. */
  let extraFailures = 0;
  for (const dir of await projectFolders(dirs)) {
    const file = shown(dir, TEST_FILE);
    const text = await readTestText(dir, options.staged);
    if (text === null) {
      if (options.require) {
        problems.push(problemAt(file, 'error', 'missing_file', 'no test file (--require)'));
        extraFailures++;
      } else output.err(`idea-pdp test: no ${escapeControls(file)}: nothing to run (--require makes this an error)\n`);
      continue;
    }
    if (typeof text !== 'string') {
      problems.push(text);
      extraFailures++;
      continue;
    }
    const read = await readProject(dir, options.staged);
    problems.push(...read.problems);
    extraFailures += read.problems.length;
    const declared = declaredAgents(read.agents, read.policy);
    const parsed = parseTestFile(file, text, declared);
    const fileProblems = options.strict ? strictly(parsed.check.problems) : parsed.check.problems;
    problems.push(...fileProblems, ...moreLine(file, parsed.check.more));
    if (fileProblems.some((one) => one.severity === 'error') || parsed.check.more.errors > 0) extraFailures++;
    if (read.policy.status === 'invalid') {
      // The policy's errors once; its cases are then listed as not run, never as a verdict.
      const policyFile = shown(dir, POLICY_FILE);
      const checked = checkPolicy(policyFile, read.policyText, read.policy, read.agents);
      problems.push(...checked.problems.filter((one) => one.severity === 'error'), ...moreLine(policyFile, checked.more));
      if (parsed.cases.length === 0) extraFailures++;
    }
    const selected = parsed.cases.filter(({ testCase }) => {
      if (options.run === undefined) return true;
      return [testCase.name ?? '', testCase.requester, testCase.tool].some((text) => text.includes(options.run ?? ''));
    });
    for (const result of runCases(await projectIdOf(dir, options.project), read.policy, selected)) {
      cases.push(caseReport(file, result));
      if (!result.ran) notRun++;
    }
    if (options.coverage)
      coverage.push(
        coverageOf(dir, declared ?? new Set(read.policy.status === 'ok' ? read.policy.overrides.keys() : []), parsed.cases, WRITE_TOOLS),
      );
  }
  const listed = problems;
  const passed = cases.filter((one) => one.passed).length;
  // An unusable test file counts as one failure: the run did not check what it was meant to.
  const failed = cases.length - passed + extraFailures;
  const summary = `${passed} passed, ${failed} failed`;
  switch (options.format) {
    case 'json':
      output.out(
        `${JSON.stringify({ passed, failed, notRun, cases, problems: listed, ...(options.coverage ? { coverage } : {}) }, null, 2)}\n`,
      );
      break;
    case 'tap':
      output.out(tapReport(cases, listed));
      break;
    case 'junit':
      output.out(junitReport(cases, listed));
      break;
    case 'lines':
      for (const one of listed) output.out(`${problemLine(one)}\n`);
      for (const one of cases) if (options.verbose || !one.passed) output.out(`${caseLine(one.file, one.result)}\n`);
      for (const project of coverage) {
        const dir = escapeControls(project.dir);
        output.out(`coverage ${dir}: ${project.exercised} of ${project.pairs} agent × write tool pairs exercised\n`);
        for (const [agent, tools] of Object.entries(project.missing))
          output.out(`  not exercised: ${escapeControls(agent)} × ${tools.join(', ')}\n`);
      }
      output.out(`${summary}\n`);
      if (notRun > 0)
        output.out(
          notRun === cases.length
            ? 'no case was run: the policy file is invalid\n'
            : `${plural(notRun, 'case')} not run: a policy file is invalid\n`,
        );
  }
  if (options.format !== 'lines' && notRun > 0)
    output.err(
      `idea-pdp test: ${notRun === cases.length ? 'no case was run' : `${plural(notRun, 'case')} not run`}: the policy file is invalid\n`,
    );
  return failed === 0 ? 0 : 1;
}
