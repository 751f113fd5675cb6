/** `idea-pdp test`: the cases of each project's test file decided with the service's decision function. */
import { escapeControls } from '../../schemas/display.js';
import type { PolicyProblem } from '../../schemas/index.js';
import { POLICY_FILE, TEST_FILE, checkPolicy, moreLine, problemLine, strictly } from '../domain/policy-check.js';
import type { ProjectCatalog } from '../domain/project-catalog.js';
import { checkServers } from '../domain/servers-check.js';
import { SERVERS_FILE } from '../domain/servers-file.js';
import { caseLine, declaredAgents, parseTestFile, runCases, type LocatedCase } from '../domain/policy-tests.js';
import { plural, problemAt, walkedProjectFolders, projectIdOf, shown, type Output } from './commands.js';
import { readProject, readTestText, type ProjectInput } from './project-input.js';
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

/** What a run gathers over the project folders, then reports. */
interface TestRun {
  readonly cases: CaseReport[];
  /** Each one is a failed test in every format: an unreadable case, a file's error, a missing file. */
  readonly failures: PolicyProblem[];
  /** Printed, never counted: warnings, and an invalid policy's errors when its cases are listed as not run. */
  readonly notes: PolicyProblem[];
  readonly coverage: Coverage[];
  notRun: number;
}

/** The coverage a run shows (with `--coverage` or `--coverage-min`). */
interface CoverageShown {
  readonly percent: number;
  readonly projects: readonly Coverage[];
}

export async function testCommand(dirs: readonly string[], options: TestOptions, output: Output): Promise<number> {
  if (!(TEST_FORMATS as readonly string[]).includes(options.format)) throw new UsageError(`--format is one of tap, junit, json`);
  const run: TestRun = { cases: [], failures: [], notes: [], coverage: [], notRun: 0 };
  for (const dir of await walkedProjectFolders(dirs)) await testProject(dir, options, output, run);
  const percent = coveragePercent(run.coverage);
  if (options.coverageMin !== undefined && percent < options.coverageMin)
    run.failures.push(
      problemAt(
        '--coverage-min',
        'error',
        'coverage_below_minimum',
        `${percent.toFixed(1)}% of agent × write tool pairs exercised, below --coverage-min ${options.coverageMin}`,
      ),
    );
  const counts = countsOf(run.cases, run.failures);
  const coverageShown = options.coverage || options.coverageMin !== undefined ? { percent, projects: run.coverage } : undefined;
  printReport(run, counts, coverageShown, options, output);
  return counts.failed === 0 ? 0 : 1;
}

/** Runs the cases of one project's test file into `run`, with the problems of its files. */
async function testProject(dir: string, options: TestOptions, output: Output, run: TestRun): Promise<void> {
  const file = shown(dir, TEST_FILE);
  const text = await readTestText(dir, options.staged);
  if (text === null) {
    if (options.require) run.failures.push(problemAt(file, 'error', 'missing_file', 'no test file (--require)'));
    else output.err(`idea-pdp test: no ${escapeControls(file)}: nothing to run (--require makes this an error)\n`);
    return;
  }
  if (typeof text !== 'string') {
    // A test file git stages as a link or a submodule: refused, not read (docs/policy-as-code.md).
    run.failures.push(text);
    return;
  }
  const read = await readProject(dir, options.staged);
  run.failures.push(...read.problems);
  const declared = declaredAgents(read.agents, read.ownPolicy);
  const parsed = parseTestFile(file, text, declared, read.catalog);
  const fileProblems = [
    ...(options.strict ? strictly(parsed.check.problems) : parsed.check.problems),
    ...moreLine(file, parsed.check.more),
  ];
  for (const one of fileProblems) (one.severity === 'error' ? run.failures : run.notes).push(one);
  if (read.policy.status === 'invalid') {
    // The errors of the policy and servers files once; its cases are then listed as not run, never as a verdict.
    (parsed.cases.length === 0 ? run.failures : run.notes).push(...invalidProjectErrors(dir, read));
  }
  for (const result of runCases(await projectIdOf(dir, options.project), read.policy, selectedCases(parsed.cases, options.run))) {
    run.cases.push(caseReport(file, result));
    if (!result.ran) run.notRun++;
  }
  if (options.coverage || options.coverageMin !== undefined)
    run.coverage.push(
      coverageOf(
        dir,
        declared ?? new Set(read.ownPolicy.status === 'ok' ? read.ownPolicy.overrides.keys() : []),
        parsed.cases,
        writeTools(read.catalog),
      ),
    );
}

/** `--run <text>`: the cases whose name, requester or tool holds the text (all of them without it). */
function selectedCases(cases: readonly LocatedCase[], text: string | undefined): LocatedCase[] {
  if (text === undefined) return [...cases];
  return cases.filter(({ testCase }) => [testCase.name ?? '', testCase.requester, testCase.tool].some((field) => field.includes(text)));
}

/** The errors of an invalid project's policy and servers files, each file's unlisted ones counted on one line. */
function invalidProjectErrors(dir: string, read: ProjectInput): PolicyProblem[] {
  const policyFile = shown(dir, POLICY_FILE);
  const checked = checkPolicy(policyFile, read.policyText, read.ownPolicy, read.agents, read.catalog);
  const serversFile = shown(dir, SERVERS_FILE);
  const servers = checkServers(serversFile, read.serversText, read.servers);
  return [
    ...checked.problems.filter((one) => one.severity === 'error'),
    ...moreLine(policyFile, checked.more),
    ...servers.problems,
    ...moreLine(serversFile, servers.more),
  ];
}

/** Prints the run in the chosen format; outside `lines`, a run with cases not run says so on stderr. */
function printReport(
  run: TestRun,
  counts: { passed: number; failed: number },
  coverage: CoverageShown | undefined,
  options: TestOptions,
  output: Output,
): void {
  const { cases, failures, notes, notRun } = run;
  switch (options.format) {
    case 'json': {
      const { passed, failed } = counts;
      const problems = [...failures, ...notes];
      const extra = coverage === undefined ? {} : { coverage: coverage.projects, coveragePercent: Number(coverage.percent.toFixed(1)) };
      output.out(`${JSON.stringify({ passed, failed, notRun, cases, problems, ...extra }, null, 2)}\n`);
      break;
    }
    case 'tap':
      output.out(tapReport(cases, failures, notes, coverageLines(coverage)));
      break;
    case 'junit':
      output.out(junitReport(cases, failures, notes, coverageLines(coverage)));
      break;
    case 'lines':
      printLines(run, counts, coverage, options.verbose, output);
  }
  if (options.format !== 'lines' && notRun > 0)
    output.err(
      `idea-pdp test: ${notRun === cases.length ? 'no case was run' : `${plural(notRun, 'case')} not run`}: the policy file is invalid\n`,
    );
}

/** The `lines` format: the problems, the failed cases (every case with `--verbose`), the coverage, the counts. */
function printLines(
  run: TestRun,
  counts: { passed: number; failed: number },
  coverage: CoverageShown | undefined,
  verbose: boolean,
  output: Output,
): void {
  const { cases, notRun } = run;
  for (const one of [...run.failures, ...run.notes]) output.out(`${problemLine(one)}\n`);
  for (const one of cases) if (verbose || !one.passed) output.out(`${caseLine(one.file, one.result)}\n`);
  for (const line of coverageLines(coverage)) output.out(`${line}\n`);
  output.out(`${counts.passed} passed, ${counts.failed} failed\n`);
  if (notRun > 0)
    output.out(
      notRun === cases.length
        ? 'no case was run: the policy file is invalid\n'
        : `${plural(notRun, 'case')} not run: a policy file is invalid\n`,
    );
}

function coverageLines(coverage: CoverageShown | undefined): string[] {
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
