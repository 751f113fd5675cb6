/**
 * The problems of a project's files as `idea-pdp check` and the preview report them, from the same
 * compiled state the service decides with: the first error that makes a policy invalid (the service
 * stops there too), then warnings the service only notes (unknown tool names, an agents file it
 * cannot list). Pure.
 */
import { findTool, knownArguments, type PolicyDocument, type PolicyProblem, type ProblemCode } from '../../schemas/index.js';
import { quoteForMessage } from '../../schemas/requester.js';
import type { AgentsFileState } from './agents-file.js';
import type { CompiledPolicy } from './compile.js';
import { pointerLocation } from './json-location.js';
import { checkStrictJson, lineColumn } from './strict-json.js';

export const POLICY_FILE = '.ideai/mcp-tool-permissions.json';
export const AGENTS_FILE = '.ideai/agents.json';
export const TEST_FILE = '.ideai/mcp-tool-permissions.test.json';

/** Far deeper than any agents file: only a syntax error's place is looked for. */
const AGENTS_MAX_DEPTH = 64;

function problem(
  file: string,
  where: { line: number; column: number },
  severity: PolicyProblem['severity'],
  code: ProblemCode,
  message: string,
): PolicyProblem {
  return { file, line: where.line, column: where.column, severity, code, message };
}

const START = { line: 1, column: 1 };

/**
 * The problems of a policy file. `file`: the name printed; `text`: the file's text (null when it
 * could not be read); `policy`: what the service compiled from it.
 */
export function policyProblems(file: string, text: string | null, policy: CompiledPolicy): PolicyProblem[] {
  if (policy.status === 'invalid') {
    const { error } = policy;
    const where =
      error.line !== undefined && error.column !== undefined
        ? { line: error.line, column: error.column }
        : text !== null && error.path !== undefined
          ? pointerLocation(text, error.path)
          : START;
    return [problem(file, where, 'error', policy.code, error.message)];
  }
  if (policy.document === null || text === null) return [];
  return [...unknownToolWarnings(file, text, policy.document), ...unknownArgumentWarnings(file, text, policy.document)];
}

/** A warning for each condition on an argument its tool is not known to take (schemas/catalog.ts): likely a typo. */
function unknownArgumentWarnings(file: string, text: string, document: PolicyDocument): PolicyProblem[] {
  const policies: [string, PolicyDocument['projectDefault']][] = [['/projectDefault', document.projectDefault]];
  for (const [index, agent] of (document.agents ?? []).entries()) policies.push([`/agents/${index}/policy`, agent.policy]);
  const warnings: PolicyProblem[] = [];
  for (const [path, policy] of policies) {
    for (const [tool, conditions] of Object.entries(policy?.conditions ?? {})) {
      if (findTool(tool) === undefined) continue;
      const known = knownArguments(tool);
      for (const argument of Object.keys(conditions)) {
        if (known.includes(argument)) continue;
        const pointer = `${path}/conditions/${segment(tool)}/${segment(argument)}`;
        const expected = known.length === 0 ? 'it takes none' : `it takes ${known.join(', ')}`;
        warnings.push(
          problem(
            file,
            pointerLocation(text, pointer),
            'warning',
            'unknown_argument',
            `condition on argument ${quoteForMessage(argument)} at ${pointer}: ${tool} is not known to take it (${expected}); a call without it is refused`,
          ),
        );
      }
    }
  }
  return warnings;
}

/** One JSON pointer segment. */
function segment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** A warning for each name that is not a catalog tool: the service grants it nothing. */
function unknownToolWarnings(file: string, text: string, document: PolicyDocument): PolicyProblem[] {
  const lists: [string, readonly string[] | undefined][] = [
    ['/projectDefault/allowedTools', document.projectDefault?.allowedTools],
    ['/projectDefault/askTools', document.projectDefault?.askTools],
  ];
  for (const [index, agent] of (document.agents ?? []).entries()) {
    lists.push(
      [`/agents/${index}/policy/allowedTools`, agent.policy.allowedTools],
      [`/agents/${index}/policy/askTools`, agent.policy.askTools],
    );
  }
  const warnings: PolicyProblem[] = [];
  for (const [path, names] of lists) {
    for (const [index, name] of (names ?? []).entries()) {
      if (findTool(name) !== undefined) continue;
      warnings.push(
        problem(
          file,
          pointerLocation(text, `${path}/${index}`),
          'warning',
          'unknown_tool',
          `unknown tool ${quoteForMessage(name)} at ${path}/${index}: not in the IdeA MCP tool catalog, it grants nothing`,
        ),
      );
    }
  }
  return warnings;
}

/** The problem of an agents file, a warning: the file only names agents for listings, never decides. */
export function agentsProblems(file: string, text: string | null, state: AgentsFileState): PolicyProblem[] {
  if (state.error === null) return [];
  const message = state.error.startsWith(`${AGENTS_FILE}: `) ? state.error.slice(AGENTS_FILE.length + 2) : state.error;
  let where = START;
  if (text !== null) {
    const strict = checkStrictJson(text, AGENTS_MAX_DEPTH);
    if (strict?.kind === 'syntax') where = lineColumn(text, strict.offset);
  }
  return [problem(file, where, 'warning', 'agents_file', message)];
}

/** `--strict`: every warning counts as an error. */
export function strictly(problems: readonly PolicyProblem[]): PolicyProblem[] {
  return problems.map((one) => (one.severity === 'warning' ? { ...one, severity: 'error' } : one));
}

/** The line `idea-pdp check` prints for a problem. */
export function problemLine(one: PolicyProblem): string {
  return `${one.file}:${one.line}:${one.column}: ${one.severity} ${one.code}: ${one.message}`;
}
