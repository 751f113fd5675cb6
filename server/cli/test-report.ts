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

/** The one set of counts every format gives: each case, and each failure beyond the cases, is one test. */
export function countsOf(
  cases: readonly CaseReport[],
  failures: readonly PolicyProblem[],
): { tests: number; passed: number; failed: number } {
  const passed = cases.filter((one) => one.passed).length;
  return { tests: cases.length + failures.length, passed, failed: cases.length - passed + failures.length };
}

/** A TAP description: one line, and no `#` that would start a directive (`# SKIP` makes a failure pass). */
const tapDescription = (text: string): string => escapeControls(text).replace(/#/g, '\\#');
/** A TAP YAML string: JSON's quoting, with what JSON leaves as it is (C1, bidirectional controls) escaped too. */
const yamlString = (text: string): string => escapeControls(JSON.stringify(text));

/** TAP version 13: one test point per case, then one per failure; notes and coverage as comments. */
export function tapReport(
  cases: readonly CaseReport[],
  failures: readonly PolicyProblem[],
  notes: readonly PolicyProblem[],
  coverage: readonly string[] = [],
): string {
  const lines = ['TAP version 13', `1..${cases.length + failures.length}`];
  let index = 0;
  for (const one of cases) {
    index++;
    // Not `# SKIP`: TAP consumers count a skipped point as passed, and a case not run fails the run.
    const notRun = one.ran ? '' : ' (not run: policy_invalid)';
    lines.push(`${one.passed ? 'ok' : 'not ok'} ${index} - ${tapDescription(title(one))}${notRun}`);
    if (!one.passed)
      lines.push(
        '  ---',
        `  message: ${yamlString(caseLine(one.file, one.result))}`,
        `  at: ${yamlString(`${one.file}:${one.line}:${one.column}`)}`,
        '  ...',
      );
  }
  for (const one of failures) {
    index++;
    lines.push(
      `not ok ${index} - ${tapDescription(`${one.code} ${one.file}`)}`,
      '  ---',
      `  message: ${yamlString(problemLine(one))}`,
      '  ...',
    );
  }
  for (const one of notes) lines.push(`# ${problemLine(one)}`);
  for (const line of coverage) lines.push(`# ${line}`);
  return `${lines.join('\n')}\n`;
}

const XML_ENTITIES: Record<string, string> = { '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&apos;', '"': '&quot;' };

const escapeXml = (text: string): string =>
  // Characters XML 1.0 cannot hold at all are dropped; the five special ones escaped.
  // eslint-disable-next-line no-control-regex
  text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '').replace(/[<>&'"]/g, (c) => XML_ENTITIES[c] ?? c);

/** Names made unique within a suite (CI tools merge test cases of one name): a repeated name gets its line and column. */
function uniqueNames(entries: readonly { name: string; at: string }[]): string[] {
  const count = new Map<string, number>();
  for (const { name } of entries) count.set(name, (count.get(name) ?? 0) + 1);
  const used = new Set<string>();
  return entries.map(({ name, at }) => {
    let unique = (count.get(name) ?? 0) > 1 ? `${name} (at ${at})` : name;
    for (let n = 2; used.has(unique); n++) unique = `${name} (at ${at}, #${n})`;
    used.add(unique);
    return unique;
  });
}

/** JUnit XML: one suite per file, a testcase per case (failure or skipped) and per failure; notes in system-err. */
export function junitReport(
  cases: readonly CaseReport[],
  failures: readonly PolicyProblem[],
  notes: readonly PolicyProblem[],
  coverage: readonly string[] = [],
): string {
  const files = [...new Set([...cases.map((one) => one.file), ...failures.map((one) => one.file), ...notes.map((one) => one.file)])];
  const suites = files.map((file) => {
    const own = cases.filter((one) => one.file === file);
    const errors = failures.filter((one) => one.file === file);
    const names = uniqueNames([
      ...own.map((one) => ({ name: title(one), at: `${one.line}:${one.column}` })),
      ...errors.map((one) => ({ name: `${one.code} at ${one.line}:${one.column}`, at: `${one.line}:${one.column}` })),
    ]);
    const body = [
      ...own.map((one, index) => {
        const open = `    <testcase classname="${escapeXml(file)}" name="${escapeXml(names[index] ?? '')}" file="${escapeXml(file)}" line="${one.line}"`;
        if (one.passed) return `${open}/>`;
        const inner = one.ran
          ? `<failure message="${escapeXml(`expected ${one.expect}, got ${one.got}`)}" type="${escapeXml(one.reason)}">${escapeXml(caseLine(one.file, one.result))}</failure>`
          : `<failure message="not run: policy_invalid" type="policy_invalid">${escapeXml(caseLine(one.file, one.result))}</failure>`;
        return `${open}>${inner}</testcase>`;
      }),
      ...errors.map(
        (one, index) =>
          `    <testcase classname="${escapeXml(file)}" name="${escapeXml(names[own.length + index] ?? '')}"><failure message="${escapeXml(one.message)}" type="${one.code}">${escapeXml(problemLine(one))}</failure></testcase>`,
      ),
    ];
    const ownNotes = notes.filter((one) => one.file === file);
    if (ownNotes.length > 0) body.push(`    <system-err>${escapeXml(ownNotes.map(problemLine).join('\n'))}</system-err>`);
    const { tests, failed } = countsOf(own, errors);
    return `  <testsuite name="${escapeXml(file)}" tests="${tests}" failures="${failed}" errors="0" skipped="0">\n${body.join('\n')}\n  </testsuite>`;
  });
  const { tests, failed } = countsOf(cases, failures);
  // JUnit has no output outside a suite: coverage is a suite of its own, with no test.
  if (coverage.length > 0)
    suites.push(
      `  <testsuite name="coverage" tests="0" failures="0" errors="0" skipped="0">\n    <system-out>${escapeXml(coverage.join('\n'))}</system-out>\n  </testsuite>`,
    );
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="idea-pdp test" tests="${tests}" failures="${failed}">\n${suites.join('\n')}\n</testsuites>\n`;
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
