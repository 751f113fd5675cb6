/** How `idea-pdp test` reports cases: a case's JSON, TAP 13, JUnit XML, and which agents × write tools no case exercises. */
import { escapeControls } from '../../schemas/display.js';
import type { PolicyProblem } from '../../schemas/index.js';
import { problemLine } from '../domain/policy-check.js';
import { caseLine, caseWords, type CaseResult, type LocatedCase } from '../domain/policy-tests.js';

export interface CaseReport {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly name?: string;
  readonly requester: string;
  readonly tool: string;
  readonly expect: string;
  readonly got: string;
  readonly reason: string;
  readonly message: string;
  readonly ran: boolean;
  readonly passed: boolean;
  /** Not printed in JSON: the result the lines are made from. */
  readonly result: CaseResult;
}

export function caseReport(file: string, result: CaseResult): CaseReport {
  const { testCase, line, column } = result.located;
  const report = {
    file,
    line,
    column,
    ...(testCase.name === undefined ? {} : { name: testCase.name }),
    requester: testCase.requester,
    tool: testCase.tool,
    expect: testCase.expect,
    got: result.ran ? result.got : 'not run',
    reason: result.ran ? result.reason : 'policy_invalid',
    message: result.message,
    ran: result.ran,
    passed: result.passed,
  };
  // Kept out of JSON.stringify: the printed case is the fields above.
  Object.defineProperty(report, 'result', { value: result, enumerable: false });
  return report as CaseReport;
}

const title = (one: CaseReport): string => caseWords(one.result.located.testCase).trim();

/** A TAP description: one line, and no `#` that would start a directive (`# SKIP` makes a failure pass). */
const tapDescription = (text: string): string => escapeControls(text).replace(/#/g, '\\#');
/** A TAP YAML string: JSON's quoting, with what JSON leaves as it is (C1, bidirectional controls) escaped too. */
const yamlString = (text: string): string => escapeControls(JSON.stringify(text));

/** TAP version 13: one test point per case, then one per problem that makes the run fail. */
export function tapReport(cases: readonly CaseReport[], problems: readonly PolicyProblem[]): string {
  const errors = problems.filter((one) => one.severity === 'error');
  const lines = ['TAP version 13', `1..${cases.length + errors.length}`];
  let index = 0;
  for (const one of cases) {
    index++;
    const directive = one.ran ? '' : ' # SKIP not run: policy_invalid';
    lines.push(`${one.passed ? 'ok' : 'not ok'} ${index} - ${tapDescription(title(one))}${directive}`);
    if (!one.passed)
      lines.push(
        '  ---',
        `  message: ${yamlString(caseLine(one.file, one.result))}`,
        `  at: ${yamlString(`${one.file}:${one.line}:${one.column}`)}`,
        '  ...',
      );
  }
  for (const one of errors) {
    index++;
    lines.push(
      `not ok ${index} - ${tapDescription(`${one.code} ${one.file}`)}`,
      '  ---',
      `  message: ${yamlString(problemLine(one))}`,
      '  ...',
    );
  }
  for (const one of problems.filter((problem) => problem.severity === 'warning')) lines.push(`# ${problemLine(one)}`);
  return `${lines.join('\n')}\n`;
}

const XML_ENTITIES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' };

const escapeXml = (text: string): string =>
  // Characters XML 1.0 cannot hold at all are dropped; the five special ones escaped.
  // eslint-disable-next-line no-control-regex
  text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '').replace(/[<>&'"]/g, (c) => XML_ENTITIES[c] ?? c);

/** JUnit XML: one suite per test file, a testcase per case (failure or skipped), a failing testcase per error. */
export function junitReport(cases: readonly CaseReport[], problems: readonly PolicyProblem[]): string {
  const files = [...new Set([...cases.map((one) => one.file), ...problems.map((one) => one.file)])];
  const suites = files.map((file) => {
    const own = cases.filter((one) => one.file === file);
    const errors = problems.filter((one) => one.file === file && one.severity === 'error');
    const body = [
      ...own.map((one) => {
        const open = `    <testcase classname="${escapeXml(file)}" name="${escapeXml(title(one))}" file="${escapeXml(file)}" line="${one.line}"`;
        if (one.passed) return `${open}/>`;
        const inner = one.ran
          ? `<failure message="${escapeXml(`expected ${one.expect}, got ${one.got}`)}" type="${escapeXml(one.reason)}">${escapeXml(caseLine(one.file, one.result))}</failure>`
          : `<skipped message="not run: policy_invalid"/>`;
        return `${open}>${inner}</testcase>`;
      }),
      ...errors.map(
        (one) =>
          `    <testcase classname="${escapeXml(file)}" name="${escapeXml(`${one.code} at ${one.line}:${one.column}`)}"><failure message="${escapeXml(one.message)}" type="${one.code}">${escapeXml(problemLine(one))}</failure></testcase>`,
      ),
    ];
    const failures = own.filter((one) => one.ran && !one.passed).length + errors.length;
    const skipped = own.filter((one) => !one.ran).length;
    return `  <testsuite name="${escapeXml(file)}" tests="${own.length + errors.length}" failures="${failures}" errors="0" skipped="${skipped}">\n${body.join('\n')}\n  </testsuite>`;
  });
  const tests = cases.length + problems.filter((one) => one.severity === 'error').length;
  const failures = cases.filter((one) => one.ran && !one.passed).length + problems.filter((one) => one.severity === 'error').length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="idea-pdp test" tests="${tests}" failures="${failures}">\n${suites.join('\n')}\n</testsuites>\n`;
}

export interface Coverage {
  readonly dir: string;
  readonly pairs: number;
  readonly exercised: number;
  /** By agent, the write tools no case of that agent decides. */
  readonly missing: Record<string, string[]>;
}

/** Which agents × write tools no case exercises (all cases, whatever `--run` selects). */
export function coverageOf(
  dir: string,
  agents: ReadonlySet<string>,
  cases: readonly LocatedCase[],
  writeTools: readonly string[],
): Coverage {
  const seen = new Set(cases.map(({ testCase }) => JSON.stringify([testCase.requester, testCase.tool])));
  const missing: Record<string, string[]> = {};
  let exercised = 0;
  for (const agent of [...agents].sort()) {
    const left = writeTools.filter((tool) => !seen.has(JSON.stringify([agent, tool])));
    exercised += writeTools.length - left.length;
    if (left.length > 0) missing[agent] = left;
  }
  return { dir, pairs: agents.size * writeTools.length, exercised, missing };
}
