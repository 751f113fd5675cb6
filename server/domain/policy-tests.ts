/**
 * Runs the expectations of a test file (`.ideai/mcp-tool-permissions.test.json`) against a compiled
 * policy with the service's own decision function, as `/decide` would answer them, except that a
 * tool on ask opens no request. Pure.
 */
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import {
  PolicyTestCaseSchema,
  PolicyTestFileSchema,
  parseRequester,
  type DecisionReason,
  type Expectation,
  type PolicyProblem,
  type PolicyTestCase,
} from '../../schemas/index.js';
import { escapeControls } from '../../schemas/display.js';
import { quoteForMessage } from '../../schemas/requester.js';
import type { AgentsFileState } from './agents-file.js';
import type { CompiledPolicy } from './compile.js';
import { NO_EPHEMERAL, NO_GRANTS, decide, lookingVerdict, type DecisionBody } from './decide.js';
import { JsonLocator, LineIndex } from './json-location.js';
import { IDEA_CATALOG, type ProjectCatalog } from './project-catalog.js';
import { AGENTS_FILE, placeProblems, unknownToolMessage, type FileCheck, type PendingProblem } from './policy-check.js';
import { schemaProblems } from './schema-problems.js';
import { checkStrictJson } from './strict-json.js';
import { didYouMean } from './suggest.js';

let compiledTestFileCheck: TypeCheck<typeof PolicyTestFileSchema> | undefined;
/** Compiled on first use: `check` and `decide` load this module and never read a test file. */
const testFileCheck = (): TypeCheck<typeof PolicyTestFileSchema> => (compiledTestFileCheck ??= TypeCompiler.Compile(PolicyTestFileSchema));
let compiledCaseCheck: TypeCheck<typeof PolicyTestCaseSchema> | undefined;
const caseCheck = (): TypeCheck<typeof PolicyTestCaseSchema> => (compiledCaseCheck ??= TypeCompiler.Compile(PolicyTestCaseSchema));
/** A test file nests 4 deep (file, cases, case, arguments) and an argument one more. */
const MAX_TEST_FILE_DEPTH = 8;

export interface LocatedCase {
  readonly testCase: PolicyTestCase;
  readonly line: number;
  readonly column: number;
}

export interface ParsedTestFile {
  /**
   * The cases that can be read: a case of the wrong shape is reported (an error) and the others still run;
   * none when the file itself cannot be read (bad JSON, not version 1, no list of cases).
   */
  readonly cases: LocatedCase[];
  readonly check: FileCheck;
}

/**
 * The cases of a test file and its problems; `declared`: the project's agents, when it has an agents
 * file; `catalog`: the tools the project knows.
 */
export function parseTestFile(
  file: string,
  text: string,
  declared?: ReadonlySet<string>,
  catalog: ProjectCatalog = IDEA_CATALOG,
): ParsedTestFile {
  const strict = checkStrictJson(text, MAX_TEST_FILE_DEPTH);
  if (strict !== null) {
    const what =
      strict.kind === 'duplicate'
        ? `duplicate key ${JSON.stringify(strict.key)}`
        : strict.kind === 'depth'
          ? 'nested too deep'
          : 'invalid JSON';
    const where = new LineIndex(text).place(strict.offset);
    const problem: PolicyProblem = { file, ...where, severity: 'error', code: 'invalid_test_file', message: what };
    return { cases: [], check: { problems: [problem], more: { errors: 0, warnings: 0 } } };
  }
  const parsed: unknown = JSON.parse(text);
  const pending: PendingProblem[] = schemaProblems(testFileCheck(), parsed, Number.MAX_SAFE_INTEGER).problems.map((one) => ({
    path: one.path,
    severity: 'error',
    code: 'invalid_test_file',
    message: () => one.message,
  }));
  const rawCases =
    typeof parsed === 'object' && parsed !== null && Array.isArray((parsed as { cases?: unknown }).cases)
      ? (parsed as { cases: unknown[] }).cases
      : [];
  for (const [index, raw] of rawCases.entries()) {
    const { requester, tool } = (typeof raw === 'object' && raw !== null ? raw : {}) as { requester?: unknown; tool?: unknown };
    if (typeof tool === 'string' && catalog.find(tool) === undefined) {
      const where = `/cases/${index}/tool`;
      pending.push({ path: where, severity: 'warning', code: 'unknown_tool', message: () => unknownToolMessage(tool, where, catalog) });
    }
    if (declared !== undefined && typeof requester === 'string') {
      const parsedRequester = parseRequester(requester);
      if (parsedRequester.kind === 'agent' && !declared.has(requester)) {
        pending.push({
          path: `/cases/${index}/requester`,
          severity: 'warning',
          code: 'unknown_agent',
          message: () =>
            `case for agent ${quoteForMessage(requester)}, which ${AGENTS_FILE} does not declare${didYouMean(requester, [...declared], false)}`,
        });
      }
    }
  }
  const check = placeProblems(file, text, pending);
  // Only the file's own frame decides whether anything runs; each case is then read on its own.
  const frame = pending.every((one) => /^\/cases\/\d+(\/|$)/.test(one.path) || one.severity === 'warning');
  if (!frame || rawCases.length === 0) return { cases: [], check };
  const readable = [...rawCases.entries()].filter((entry): entry is [number, PolicyTestCase] => caseCheck().Check(entry[1]));
  const places = new JsonLocator(text).places(readable.map(([index]) => `/cases/${index}`));
  return {
    cases: readable.map(([index, testCase]) => ({ testCase, ...(places.get(`/cases/${index}`) ?? { line: 1, column: 1 }) })),
    check,
  };
}

/** What a decision is, in the words of a test case: `ask` is `approval_required`. */
export function outcomeOf(body: Pick<DecisionBody, 'allow' | 'reason'>): Expectation {
  if (body.allow) return 'allow';
  return body.reason === 'approval_required' ? 'ask' : 'deny';
}

export interface CaseResult {
  readonly located: LocatedCase;
  /** False when the policy is invalid: the case was not run, it fails. */
  readonly ran: boolean;
  readonly passed: boolean;
  readonly got: Expectation;
  readonly reason: DecisionReason;
  readonly message: string;
}

/** Decides every case; with an invalid policy no case is run, and every one fails. */
export function runCases(project: string, policy: CompiledPolicy, cases: readonly LocatedCase[]): CaseResult[] {
  return cases.map((located) => {
    const { requester, tool, arguments: args } = located.testCase;
    const { body } = lookingVerdict(decide({ project, requester, tool, arguments: args }, policy, NO_EPHEMERAL, NO_GRANTS));
    const got = outcomeOf(body);
    const ran = policy.status === 'ok';
    return { located, ran, passed: ran && got === located.testCase.expect, got, reason: body.reason, message: body.message };
  });
}

/** The agents a project declares for its test cases: its agents file's and its overrides', when it has an agents file. */
export function declaredAgents(agents: AgentsFileState, policy: CompiledPolicy): ReadonlySet<string> | undefined {
  if (!agents.exists) return undefined;
  const ids = new Set(agents.agents.map((agent) => agent.id));
  if (policy.status === 'ok') for (const id of policy.overrides.keys()) ids.add(id);
  return ids;
}

/** Whole (never cut, unlike a message's quote): JUnit names must stay unique. */
const quoted = (text: string): string => escapeControls(JSON.stringify(text));
/** A tool name a line shows as it is; any other is quoted, so that its spaces and `#` are visibly its own. */
const PLAIN_TOOL = /^[A-Za-z0-9_.:/-]+$/;

/** The words naming a case in a line: its name if any, its requester and its tool (escaped: a name may hold a line break). */
export function caseWords(testCase: PolicyTestCase): string {
  const name = testCase.name === undefined ? '' : ` ${quoted(testCase.name)}`;
  const tool = PLAIN_TOOL.test(testCase.tool) ? testCase.tool : quoted(testCase.tool);
  return `${name} requester ${quoted(testCase.requester)} tool ${tool}`;
}

/** The line `idea-pdp test` prints for a case: failing, not run, or (with -v) passing. */
export function caseLine(file: string, result: CaseResult): string {
  const { testCase, line, column } = result.located;
  const where = `${file}:${line}:${column}:`;
  if (!result.ran) return escapeControls(`${where} NOT RUN${caseWords(testCase)}: policy_invalid (the policy file is invalid, see above)`);
  const verdict = result.passed ? 'PASS' : 'FAIL';
  const outcome = result.passed ? result.got : `expected ${testCase.expect}, got ${result.got}`;
  // The decision's message names the tool as sent.
  return escapeControls(`${where} ${verdict}${caseWords(testCase)}: ${outcome} (${result.reason}: ${result.message})`);
}
