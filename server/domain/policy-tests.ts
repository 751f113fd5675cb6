/**
 * Runs the expectations of a test file (`.ideai/mcp-tool-permissions.test.json`) against a compiled
 * policy with the service's own decision function, as `/decide` would answer them, except that a
 * tool on ask opens no request. Pure.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import {
  PolicyTestFileSchema,
  type DecisionReason,
  type Expectation,
  type PolicyProblem,
  type PolicyTestCase,
} from '../../schemas/index.js';
import type { CompiledPolicy } from './compile.js';
import { NO_EPHEMERAL, decide, lookingApprovals, type DecisionBody } from './decide.js';
import { pointerLocation } from './json-location.js';
import { checkStrictJson, lineColumn } from './strict-json.js';

const testFileCheck = TypeCompiler.Compile(PolicyTestFileSchema);
/** A test file nests 4 deep (file, cases, case, arguments) and an argument one more. */
const MAX_TEST_FILE_DEPTH = 8;

export interface LocatedCase {
  readonly testCase: PolicyTestCase;
  readonly line: number;
  readonly column: number;
}

/** The cases of a test file, or the problem that makes it unusable (an error). */
export function parseTestFile(file: string, text: string): { cases: LocatedCase[] } | { problem: PolicyProblem } {
  const invalid = (where: { line: number; column: number }, message: string) => ({
    problem: { file, line: where.line, column: where.column, severity: 'error' as const, code: 'invalid_test_file' as const, message },
  });
  const strict = checkStrictJson(text, MAX_TEST_FILE_DEPTH);
  if (strict !== null) {
    const what =
      strict.kind === 'duplicate'
        ? `duplicate key ${JSON.stringify(strict.key)}`
        : strict.kind === 'depth'
          ? 'nested too deep'
          : 'invalid JSON';
    return invalid(lineColumn(text, strict.offset), what);
  }
  const parsed: unknown = JSON.parse(text);
  if (!testFileCheck.Check(parsed)) {
    const first = testFileCheck.Errors(parsed).First();
    const path = first?.path ?? '';
    return invalid(pointerLocation(text, path), `${first?.message ?? 'invalid test file'} at ${path || '/'}`);
  }
  return {
    cases: parsed.cases.map((testCase, index) => ({ testCase, ...pointerLocation(text, `/cases/${index}`) })),
  };
}

/** What a decision is, in the words of a test case: `ask` is `approval_required`. */
export function outcomeOf(body: Pick<DecisionBody, 'allow' | 'reason'>): Expectation {
  if (body.allow) return 'allow';
  return body.reason === 'approval_required' ? 'ask' : 'deny';
}

export interface CaseResult {
  readonly located: LocatedCase;
  readonly passed: boolean;
  readonly got: Expectation;
  readonly reason: DecisionReason;
  readonly message: string;
}

/** Decides every case; with an invalid policy every case fails, whatever it expects. */
export function runCases(project: string, policy: CompiledPolicy, cases: readonly LocatedCase[]): CaseResult[] {
  const approvals = lookingApprovals();
  return cases.map((located) => {
    const { requester, tool, arguments: args } = located.testCase;
    const body = decide({ project, requester, tool, arguments: args }, policy, NO_EPHEMERAL, approvals);
    const got = outcomeOf(body);
    return {
      located,
      passed: policy.status === 'ok' && got === located.testCase.expect,
      got,
      reason: body.reason,
      message: body.message,
    };
  });
}

/** The line `idea-pdp test` prints for a failing case. */
export function failureLine(file: string, result: CaseResult): string {
  const { testCase, line, column } = result.located;
  const name = testCase.name === undefined ? '' : ` ${JSON.stringify(testCase.name)}`;
  return `${file}:${line}:${column}: FAIL${name} requester ${JSON.stringify(testCase.requester)} tool ${testCase.tool}: expected ${testCase.expect}, got ${result.got} (${result.reason}: ${result.message})`;
}
