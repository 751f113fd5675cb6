/** `idea-pdp test`: the cases of each project's test file decided with the service's decision function. */
import { escapeControls } from '../../schemas/display.js';
import type { PolicyProblem } from '../../schemas/index.js';
import { POLICY_FILE, TEST_FILE, checkPolicy, moreLine, problemLine, strictly } from '../domain/policy-check.js';
import type { ProjectCatalog } from '../domain/project-catalog.js';
import { checkServers } from '../domain/servers-check.js';
import { SERVERS_FILE } from '../domain/servers-file.js';
import { caseLine, declaredAgents, parseTestFile, runCases } from '../domain/policy-tests.js';
import { plural, problemAt, walkedProjectFolders, projectIdOf, shown, type Output } from './commands.js';
import { readProject, readTestText } from './project-input.js';
import { caseReport, countsOf, coverageOf, junitReport, tapReport, type CaseReport, type Coverage } from './test-report.js';
import { UsageError } from './usage.js';

export const TEST_FORMATS = ['lines', 'json', 'tap', 'junit'] as const;
export type TestFormat = (typeof TEST_FORMATS)[number];

export interface TestOptions {
  readonly format: TestFormat;
  readonly project: string | undefined;
  readonly verbose: boolean;
  readonly run: string | undefined;
  readonly coverage: boolean;
  /** Fail the run when fewer than this percent of agent × write tool pairs are exercised. */
  readonly coverageMin?: number | undefined;
  readonly require: boolean;
  readonly strict: boolean;
  readonly staged: boolean;
}

/** The write tools a project knows: IdeA's, then those its servers file declares. */
const writeTools = (catalog: ProjectCatalog): string[] => catalog.names.filter((name) => catalog.find(name)?.access === 'write');

/** The share of agent × write tool pairs some case exercises, in percent (100 when there is none). */
function coveragePercent(coverage: readonly Coverage[]): number {
  const pairs = coverage.reduce((sum, one) => sum + one.pairs, 0);
  const exercised = coverage.reduce((sum, one) => sum + one.exercised, 0);
  return pairs === 0 ? 100 : (exercised * 100) / pairs;
}

export async function testCommand(dirs: readonly string[], options: TestOptions, output: Output): Promise<number> {
  if (!(TEST_FORMATS as readonly string[]).includes(options.format)) throw new UsageError(`--format is one of tap, junit, json`);
  const cases: CaseReport[] = [];
  /** Each one is a failed test in every format: an unreadable case, a file's error, a missing file. */
  const failures: PolicyProblem[] = [];
  /** Printed, never counted: warnings, and an invalid policy's errors when its cases are listed as not run. */
  const notes: PolicyProblem[] = [];
  const coverage: Coverage[] = [];
  let notRun = 0;
  const sort = (problems: readonly PolicyProblem[]) => {
    for (const one of problems) (one.severity === 'error' ? failures : notes).push(one);
  };
  for (const dir of await walkedProjectFolders(dirs)) {
    const file = shown(dir, TEST_FILE);
    const text = await readTestText(dir, options.staged);
    if (text === null) {
      if (options.require) failures.push(problemAt(file, 'error', 'missing_file', 'no test file (--require)'));
      else output.err(`idea-pdp test: no ${escapeControls(file)}: nothing to run (--require makes this an error)\n`);
      continue;
    }
    if (typeof text !== 'string') {
      // A test file git stages as a link or a submodule: refused, not read (docs/policy-as-code.md).
      failures.push(text);
      continue;
    }
    const read = await readProject(dir, options.staged);
    failures.push(...read.problems);
    const declared = declaredAgents(read.agents, read.ownPolicy);
    const parsed = parseTestFile(file, text, declared, read.catalog);
    sort([...(options.strict ? strictly(parsed.check.problems) : parsed.check.problems), ...moreLine(file, parsed.check.more)]);
    if (read.policy.status === 'invalid') {
      // The errors of the policy and servers files once; its cases are then listed as not run, never as a verdict.
      const policyFile = shown(dir, POLICY_FILE);
      const checked = checkPolicy(policyFile, read.policyText, read.ownPolicy, read.agents, read.catalog);
      const serversFile = shown(dir, SERVERS_FILE);
      const servers = checkServers(serversFile, read.serversText, read.servers);
      const errors = [
        ...checked.problems.filter((one) => one.severity === 'error'),
        ...moreLine(policyFile, checked.more),
        ...servers.problems,
        ...moreLine(serversFile, servers.more),
      ];
      if (parsed.cases.length === 0) failures.push(...errors);
      else notes.push(...errors);
    }
    const selected = parsed.cases.filter(({ testCase }) => {
      if (options.run === undefined) return true;
      return [testCase.name ?? '', testCase.requester, testCase.tool].some((text) => text.includes(options.run ?? ''));
    });
    for (const result of runCases(await projectIdOf(dir, options.project), read.policy, selected)) {
      cases.push(caseReport(file, result));
      if (!result.ran) notRun++;
    }
    if (options.coverage || options.coverageMin !== undefined)
      coverage.push(
        coverageOf(
          dir,
          declared ?? new Set(read.ownPolicy.status === 'ok' ? read.ownPolicy.overrides.keys() : []),
          parsed.cases,
          writeTools(read.catalog),
        ),
      );
  }
  const percent = coveragePercent(coverage);
  if (options.coverageMin !== undefined && percent < options.coverageMin)
    failures.push(
      problemAt(
        '--coverage-min',
        'error',
        'coverage_below_minimum',
        `${percent.toFixed(1)}% of agent × write tool pairs exercised, below --coverage-min ${options.coverageMin}`,
      ),
    );
  const counts = countsOf(cases, failures);
  const coverageShown = options.coverage || options.coverageMin !== undefined ? { percent, projects: coverage } : undefined;
  switch (options.format) {
    case 'json': {
      const { passed, failed } = counts;
      const problems = [...failures, ...notes];
      const extra = coverageShown === undefined ? {} : { coverage: coverageShown.projects, coveragePercent: Number(percent.toFixed(1)) };
      output.out(`${JSON.stringify({ passed, failed, notRun, cases, problems, ...extra }, null, 2)}\n`);
      break;
    }
    case 'tap':
      output.out(tapReport(cases, failures, notes, coverageLines(coverageShown)));
      break;
    case 'junit':
      output.out(junitReport(cases, failures, notes, coverageLines(coverageShown)));
      break;
    case 'lines':
      for (const one of [...failures, ...notes]) output.out(`${problemLine(one)}\n`);
      for (const one of cases) if (options.verbose || !one.passed) output.out(`${caseLine(one.file, one.result)}\n`);
      for (const line of coverageLines(coverageShown)) output.out(`${line}\n`);
      output.out(`${counts.passed} passed, ${counts.failed} failed\n`);
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
  return counts.failed === 0 ? 0 : 1;
}

function coverageLines(coverage: { percent: number; projects: readonly Coverage[] } | undefined): string[] {
  if (coverage === undefined) return [];
  const lines: string[] = [];
  for (const project of coverage.projects) {
    lines.push(`coverage ${escapeControls(project.dir)}: ${project.exercised} of ${project.pairs} agent × write tool pairs exercised`);
    for (const [agent, tools] of Object.entries(project.missing))
      lines.push(`  not exercised: ${escapeControls(agent)} × ${tools.join(', ')}`);
  }
  lines.push(`coverage: ${coverage.percent.toFixed(1)}% of agent × write tool pairs exercised`);
  return lines;
}
