/**
 * The problems of a project's files as `idea-pdp check` and the preview report them, all of them in
 * file order: the error that makes the service deny the project is always among them, the others
 * are found by reading on where the service stops. Warnings are what the service only notes
 * (unknown tool names, agents `.ideai/agents.json` does not declare, an agents file it cannot list).
 * At most {@link MAX_LISTED_PROBLEMS} are listed per file, the rest counted. Pure.
 */
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { PolicyDocumentSchema, type Condition, type PolicyProblem, type ProblemCode } from '../../schemas/index.js';
import { escapeControls } from '../../schemas/display.js';
import { quoteForMessage } from '../../schemas/requester.js';
import { agentIdProblem } from './agent-id.js';
import type { AgentsFileState } from './agents-file.js';
import { askConflicts, type CompiledPolicy } from './compile.js';
import { conditionMistakes, documentConditionMistakes } from './condition-mistakes.js';
import { ISSUE_REF, conditionProblem } from './conditions.js';
import { limitsProblems } from './limits.js';
import { JsonLocator, LineIndex } from './json-location.js';
import { IDEA_CATALOG, INVALID_SERVERS_CATALOG, type ProjectCatalog } from './project-catalog.js';
import { schemaProblems } from './schema-problems.js';
import { SERVERS_FILE } from './servers-file.js';
import { checkStrictJson } from './strict-json.js';
import { closest, didYouMean } from './suggest.js';

export const POLICY_FILE = '.ideai/mcp-tool-permissions.json';
export const AGENTS_FILE = '.ideai/agents.json';
export const TEST_FILE = '.ideai/mcp-tool-permissions.test.json';

/** A hostile file may hold 16,000 unknown names: a reader acts on the first ones, the rest are counted. */
export const MAX_LISTED_PROBLEMS = 100;

/** Far deeper than any agents file: only a syntax error's place is looked for. */
const AGENTS_MAX_DEPTH = 64;

/** A problem before it is placed in the text: `message` is only made for the problems listed. */
export interface PendingProblem {
  readonly path: string;
  readonly severity: PolicyProblem['severity'];
  readonly code: ProblemCode;
  readonly message: () => string;
}

export interface FileCheck {
  /** At most {@link MAX_LISTED_PROBLEMS}, in file order. */
  readonly problems: PolicyProblem[];
  /** The problems found and not listed. */
  readonly more: { readonly errors: number; readonly warnings: number };
}

const NONE = { errors: 0, warnings: 0 } as const;

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

/** Places pending problems in `text` in one walk, sorts them in file order and lists the first ones. */
export function placeProblems(file: string, text: string, pending: readonly PendingProblem[]): FileCheck {
  const places = new JsonLocator(text).places(pending.map((one) => one.path));
  const placed = pending
    .map((one, index) => ({ one, index, where: places.get(one.path) ?? START }))
    .sort((a, b) => a.where.line - b.where.line || a.where.column - b.where.column || a.index - b.index);
  const listed = placed.slice(0, MAX_LISTED_PROBLEMS).map(({ one, where }) => problem(file, where, one.severity, one.code, one.message()));
  const rest = placed.slice(MAX_LISTED_PROBLEMS);
  const errors = rest.filter(({ one }) => one.severity === 'error').length;
  return { problems: listed, more: { errors, warnings: rest.length - errors } };
}

/**
 * The problems of a policy file; `agents`: the project's agents file, for the agents it declares;
 * `catalog`: the tools the project knows (a valid policy's own by default, else IdeA's).
 */
export function checkPolicy(
  file: string,
  text: string | null,
  policy: CompiledPolicy,
  agents?: AgentsFileState,
  catalog: ProjectCatalog = policy.status === 'ok' ? policy.catalog : IDEA_CATALOG,
): FileCheck {
  if (policy.status === 'invalid') {
    const { error } = policy;
    // Syntax, duplicate keys, depth, unreadable: nothing further can be read.
    if (text === null || error.path === undefined || error.line !== undefined) {
      const where = error.line !== undefined && error.column !== undefined ? { line: error.line, column: error.column } : START;
      return { problems: [problem(file, where, 'error', policy.code, error.message)], more: NONE };
    }
    const pending = documentProblems(JSON.parse(text), agents, catalog);
    // The service's own error is listed when the reading on finds no error (a check only it makes).
    if (!pending.some((one) => one.severity === 'error')) {
      pending.push({ path: error.path, severity: 'error', code: policy.code, message: () => error.message });
    }
    return placeProblems(file, text, pending);
  }
  if (policy.document === null || text === null) return { problems: [], more: NONE };
  return placeProblems(file, text, documentProblems(policy.document, agents, catalog));
}

/** The problems listed for a policy file, then one line counting the others (the preview's `errors`). */
export function policyProblems(
  file: string,
  text: string | null,
  policy: CompiledPolicy,
  agents?: AgentsFileState,
  catalog?: ProjectCatalog,
): PolicyProblem[] {
  const { problems, more } = checkPolicy(file, text, policy, agents, catalog);
  return [...problems, ...moreLine(file, more)];
}

/** The line that counts the problems not listed, if any. */
export function moreLine(file: string, more: FileCheck['more']): PolicyProblem[] {
  const count = more.errors + more.warnings;
  if (count === 0) return [];
  const message = `${count} more problems not listed (${more.errors} errors, ${more.warnings} warnings)`;
  return [problem(file, START, more.errors > 0 ? 'error' : 'warning', 'too_many_problems', message)];
}

/** Compiled on first use: `idea-pdp check` of a valid file never needs it twice, start-up is what it waits for. */
let documentCheck: TypeCheck<typeof PolicyDocumentSchema> | undefined;
const AGENT_ID_PATH = /^\/agents\/\d+\/agentId$/;
const CONDITIONS_PATH = /^(?:\/projectDefault|\/agents\/\d+\/policy)\/conditions\//;
/** Limits are judged by limits.ts, which says what was expected and what was got, so the schema's own messages there are not listed. */
const LIMITS_PATH = /^(?:\/projectDefault|\/agents\/\d+\/policy)\/limits(?:\/|$)/;

interface RawPolicy {
  allowedTools?: unknown;
  askTools?: unknown;
  conditions?: unknown;
}
interface RawAgent {
  agentId?: unknown;
  policy?: RawPolicy;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];

/**
 * Every problem of a parsed policy document, valid or not: what the schema refuses, then what the
 * service refuses in a well-shaped document (agent ids, duplicate overrides, a tool allowed and
 * on ask), and the warnings; a tool name is known when `catalog` has it.
 */
export function documentProblems(value: unknown, agents?: AgentsFileState, catalog: ProjectCatalog = IDEA_CATALOG): PendingProblem[] {
  const { pending, shapePaths } = shapeProblems(value);
  if (!isRecord(value)) return pending;
  pending.push(...agentIdProblems(value, shapePaths, agents));
  for (const [path, policy] of policiesOf(value)) pending.push(...onePolicyProblems(path, policy, catalog));
  return pending;
}

/**
 * What the schema refuses, limits aside (limits.ts judges them), and the malformed conditions;
 * `shapePaths`: where the schema refused something, limits included.
 */
function shapeProblems(value: unknown): { pending: PendingProblem[]; shapePaths: ReadonlySet<string> } {
  documentCheck ??= TypeCompiler.Compile(PolicyDocumentSchema);
  const allShape = schemaProblems(documentCheck, value, Number.MAX_SAFE_INTEGER).problems;
  // A malformed condition is said by conditionsMistakes, one mistake at its value; the union's message says less.
  const mistakes = documentConditionMistakes(value);
  const related = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
  const shape = allShape.filter((one) => !CONDITIONS_PATH.test(one.path) || !mistakes.some((mistake) => related(mistake.path, one.path)));
  const pending: PendingProblem[] = mistakes.map((mistake) => ({
    path: mistake.path,
    severity: 'error',
    code: 'invalid_condition',
    message: () => `invalid condition at ${mistake.path}: ${mistake.message}`,
  }));
  for (const one of shape) {
    if (LIMITS_PATH.test(one.path)) continue;
    let code: ProblemCode = 'invalid_shape';
    let message = one.message;
    if (one.path === '/version' || (one.path === '' && !isRecord(value))) code = 'unsupported_version';
    if (CONDITIONS_PATH.test(one.path)) code = 'invalid_condition';
    if (AGENT_ID_PATH.test(one.path) && typeof one.value === 'string') {
      code = 'invalid_agent_id';
      message = `invalid agent id ${quoteForMessage(one.value)} at ${one.path}: ${agentIdProblem(one.value) ?? 'it does not match the agent id pattern'}`;
    }
    pending.push({ path: one.path, severity: 'error', code, message: () => message });
  }
  return { pending, shapePaths: new Set(shape.map((one) => one.path)) };
}

/** The overrides' objects in document order (those that are objects). */
const overridesOf = (document: Record<string, unknown>): [number, RawAgent][] =>
  (Array.isArray(document.agents) ? (document.agents as unknown[]) : []).flatMap((raw, index): [number, RawAgent][] =>
    isRecord(raw) ? [[index, raw as RawAgent]] : [],
  );

/** The policies of a document with their paths: the project default, then each override's. */
function policiesOf(document: Record<string, unknown>): [string, RawPolicy | undefined][] {
  const policies: [string, RawPolicy | undefined][] = [
    ['/projectDefault', isRecord(document.projectDefault) ? document.projectDefault : undefined],
  ];
  for (const [index, agent] of overridesOf(document)) {
    policies.push([`/agents/${index}/policy`, isRecord(agent.policy) ? agent.policy : undefined]);
  }
  return policies;
}

/**
 * The overrides' agent ids: one the schema's pattern accepts but the service refuses, a second
 * override for one agent, and (a warning) an agent the agents file does not declare.
 */
function agentIdProblems(document: Record<string, unknown>, shapePaths: ReadonlySet<string>, agents?: AgentsFileState): PendingProblem[] {
  const pending: PendingProblem[] = [];
  const seen = new Map<string, string>();
  const declared = agents?.exists === true ? new Set(agents.agents.map((agent) => agent.id)) : undefined;
  for (const [index, agent] of overridesOf(document)) {
    if (typeof agent.agentId !== 'string') continue;
    const agentId = agent.agentId;
    const path = `/agents/${index}/agentId`;
    const why = agentIdProblem(agentId);
    if (why !== undefined && !shapePaths.has(path)) {
      pending.push({
        path,
        severity: 'error',
        code: 'invalid_agent_id',
        message: () => `invalid agent id ${quoteForMessage(agentId)} at ${path}: ${why}`,
      });
    }
    const first = seen.get(agentId);
    if (first !== undefined) {
      pending.push({
        path,
        severity: 'error',
        code: 'duplicate_agent',
        message: () => `duplicate override for agent ${agentId}, at ${first} and ${path}`,
      });
    } else seen.set(agentId, path);
    if (declared !== undefined && why === undefined && !declared.has(agentId)) {
      const known = [...declared];
      pending.push({
        path,
        severity: 'warning',
        code: 'unknown_agent',
        message: () => `override for agent ${agentId}, which ${AGENTS_FILE} does not declare${didYouMean(agentId, known, false)}`,
      });
    }
  }
  return pending;
}

/** The problems of one policy at `path`: its tool lists, its conditions and its limits. */
function onePolicyProblems(path: string, policy: RawPolicy | undefined, catalog: ProjectCatalog): PendingProblem[] {
  const pending: PendingProblem[] = [];
  const allowed = strings(policy?.allowedTools);
  const ask = strings(policy?.askTools);
  const conflicts = askConflicts(allowed, ask);
  if (conflicts.length > 0) {
    const names = conflicts.slice(0, 5).map(quoteForMessage).join(', ');
    pending.push({
      path: `${path}/askTools`,
      severity: 'error',
      code: 'ask_conflict',
      message: () => `${names} in both allowedTools and askTools at ${path}`,
    });
  }
  for (const list of ['allowedTools', 'askTools'] as const) pending.push(...toolListProblems(`${path}/${list}`, policy?.[list], catalog));
  pending.push(...conditionsProblems(path, policy, new Set([...allowed, ...ask]), catalog));
  for (const found of limitsProblems(path, policy)) pending.push({ ...found, severity: 'error', message: () => found.message });
  return pending;
}

/** The names of one tool list at `at`: a name listed twice is an error, a name the catalog does not know a warning. */
function toolListProblems(at: string, names: unknown, catalog: ProjectCatalog): PendingProblem[] {
  const pending: PendingProblem[] = [];
  if (!Array.isArray(names)) return pending;
  const firstAt = new Map<string, string>();
  for (const [index, name] of names.entries()) {
    if (typeof name !== 'string') continue;
    const where = `${at}/${index}`;
    const first = firstAt.get(name);
    if (first === undefined) firstAt.set(name, where);
    else {
      pending.push({
        path: where,
        severity: 'error',
        code: 'duplicate_tool',
        message: () => `${quoteForMessage(name)} named twice in one list, at ${first} and ${where}`,
      });
    }
    if (catalog.find(name) !== undefined) continue;
    pending.push({ path: where, severity: 'warning', code: 'unknown_tool', message: () => unknownToolMessage(name, where, catalog) });
  }
  return pending;
}

/** Escapes one JSON pointer segment. */
const pointerSegment = (key: string): string => key.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The problems of one policy's `conditions` (docs/api.md#conditions-on-a-tools-arguments): a tool
 * the policy does not list and a condition that can never be met are errors, an argument the tool is
 * not known to take a warning (likely a typo: a call without it is refused). A tool whose arguments
 * the catalog does not know (a declared server's tool no `tools/list` reported) is not compared.
 * Shapes the schema refuses are already listed.
 */
function conditionsProblems(
  path: string,
  policy: RawPolicy | undefined,
  listed: ReadonlySet<string>,
  catalog: ProjectCatalog,
): PendingProblem[] {
  const pending: PendingProblem[] = [];
  if (!isRecord(policy?.conditions)) return pending;
  for (const [tool, conditions] of Object.entries(policy.conditions)) {
    const at = `${path}/conditions/${pointerSegment(tool)}`;
    if (!listed.has(tool)) {
      pending.push({
        path: at,
        severity: 'error',
        code: 'condition_unlisted_tool',
        message: () => `condition on ${quoteForMessage(tool)} at ${at}: the tool is in neither allowedTools nor askTools of this policy`,
      });
    }
    if (!isRecord(conditions)) continue;
    const known = catalog.find(tool) === undefined ? undefined : catalog.knownArguments(tool);
    for (const [argument, condition] of Object.entries(conditions)) {
      const where = `${at}/${pointerSegment(argument)}`;
      // Only a shape the schema accepts is judged; any other is already listed as invalid.
      const judged =
        isRecord(condition) &&
        (condition.prefix === undefined || (Array.isArray(condition.prefix) && condition.prefix.every((one) => typeof one === 'string'))) &&
        (condition.in === undefined || Array.isArray(condition.in)) &&
        (condition.notIn === undefined || Array.isArray(condition.notIn));
      const why =
        judged && conditionMistakes(where, argument, condition).length === 0 ? conditionProblem(condition as Condition) : undefined;
      if (why !== undefined) {
        pending.push({ path: where, severity: 'error', code: 'invalid_condition', message: () => `invalid condition at ${where}: ${why}` });
      }
      if (judged && Array.isArray(condition.notIn) && argument !== ISSUE_REF) pending.push(weakDenyList(where, argument));
      if (known === undefined || known.includes(argument)) continue;
      const expected = known.length === 0 ? 'it takes none' : `it takes ${known.join(', ')}`;
      pending.push({
        path: where,
        severity: 'warning',
        code: 'unknown_argument',
        message: () =>
          `condition on argument ${quoteForMessage(argument)} at ${where}: ${tool} is not known to take it (${expected}); a call without it is refused${didYouMean(argument, known)}`,
      });
    }
  }
  return pending;
}

/**
 * A `notIn` other than on `issueRef` (which compares plain ticket numbers only) refuses its values
 * exactly: `"Secrets"`, `" secrets"`, a Cyrillic `ѕecrets`, `"secrets\u0000"` or `"7"` for `7` are
 * other values, and a tool may well read them as the refused one.
 */
function weakDenyList(where: string, argument: string): PendingProblem {
  return {
    path: where,
    severity: 'warning',
    code: 'weak_deny_list',
    message: () =>
      `notIn on argument ${quoteForMessage(argument)} at ${where} refuses only the exact values listed: another spelling of one (case, spaces, a lookalike letter, a NUL, "7" for 7) is allowed; list what is allowed with "in" instead`,
  };
}

/** The warning for a name the project's catalog does not know, with the nearest known name. */
export function unknownToolMessage(name: string, where: string, catalog: ProjectCatalog = IDEA_CATALOG): string {
  const { why, hint } = unknownTool(name, catalog);
  return `unknown tool ${quoteForMessage(name)} at ${where}: ${why}, it grants nothing${hint}`;
}

/**
 * Why `name` is not a tool of `catalog`, and the nearest known name (`; did you mean …?`, or ''): IdeA's
 * for a bare name (or the declared tool a bare server tool name is), the nearest declared
 * `<server>/<tool>` for a qualified one, else the same tool under another server, else the nearest
 * declared server.
 */
export function unknownTool(name: string, catalog: ProjectCatalog): { why: string; hint: string } {
  const slash = name.indexOf('/');
  const declared = catalog.servers.flatMap((server) => server.tools);
  if (slash < 0) {
    const qualified = declared.find((tool) => tool.serverTool === name)?.name;
    return {
      why: 'not in the IdeA MCP tool catalog',
      hint: qualified === undefined ? didYouMean(name, catalog.names, false) : `; did you mean ${qualified}?`,
    };
  }
  const [id, tool] = [name.slice(0, slash), name.slice(slash + 1)];
  const server = catalog.servers.find((one) => one.id === id);
  const why =
    catalog === INVALID_SERVERS_CATALOG
      ? `${SERVERS_FILE} is invalid (see its errors), so it declares no server`
      : server === undefined
        ? `no server ${quoteForMessage(id)} is declared in ${SERVERS_FILE}`
        : `server ${id} declares no tool ${quoteForMessage(tool)} in ${SERVERS_FILE}`;
  const near = didYouMean(
    name,
    declared.map((one) => one.name),
    false,
  );
  if (near !== '') return { why, hint: near };
  const sameTool = declared.find((one) => one.serverTool === tool)?.name;
  if (sameTool !== undefined) return { why, hint: `; did you mean ${sameTool}?` };
  const nearServer =
    server === undefined
      ? closest(
          id,
          catalog.servers.map((one) => one.id),
        )
      : undefined;
  return { why, hint: nearServer === undefined ? '' : `; did you mean server ${nearServer}?` };
}

/** The problem of an agents file, a warning: the file only names agents for listings, never decides. */
export function agentsProblems(file: string, text: string | null, state: AgentsFileState): PolicyProblem[] {
  if (state.error === null) return [];
  const message = state.error.startsWith(`${AGENTS_FILE}: `) ? state.error.slice(AGENTS_FILE.length + 2) : state.error;
  let where = START;
  if (text !== null) {
    const strict = checkStrictJson(text, AGENTS_MAX_DEPTH);
    if (strict?.kind === 'syntax') where = new LineIndex(text).place(strict.offset);
  }
  return [problem(file, where, 'warning', 'agents_file', message)];
}

/** `--strict`: every warning counts as an error. */
export function strictly(problems: readonly PolicyProblem[]): PolicyProblem[] {
  return problems.map((one) => (one.severity === 'warning' ? { ...one, severity: 'error' } : one));
}

/** The line `idea-pdp check` prints for a problem: one line, whatever a file's name or a message quotes. */
export function problemLine(one: PolicyProblem): string {
  return escapeControls(`${one.file}:${one.line}:${one.column}: ${one.severity} ${one.code}: ${one.message}`);
}
