/**
 * Turns a policy document into the precomputed state decisions read: one frozen allowlist per
 * agent override, one for the project default, each with its tools on ask
 * (docs/api.md#approvals-and-temporary-grants). Deterministic (the same bytes always give the same
 * state), but not pure: equal allowlists are shared through a bounded module-level memo
 * (`makeAllowlist`), which changes memory use, never a result.
 */
import {
  PolicyDocumentSchema,
  type PolicyConditions,
  type PolicyDocument,
  type PolicyLimits,
  type PolicyError,
  type PolicySource,
  type ProblemCode,
} from '../../schemas/index.js';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { createHash } from 'node:crypto';
import { quoteForMessage } from '../../schemas/requester.js';
import { agentIdProblem } from './agent-id.js';
import { documentConditionMistakes } from './condition-mistakes.js';
import { ISSUE_REF, compileToolConditions, conditionProblem, type ToolChecks } from './conditions.js';
import { checkStrictJson, lineColumn, type StrictJsonProblem } from './strict-json.js';
import { compileLimits, limitsProblems, type ToolLimit } from './limits.js';
import { IDEA_CATALOG, sortInCatalogOrder, type ProjectCatalog } from './project-catalog.js';

const POLICY_FILE = '.ideai/mcp-tool-permissions.json';
const BUILTIN_REVISION = 'builtin';

/** An effective allowlist, ready for O(1) decisions. */
export interface Allowlist {
  readonly source: PolicySource;
  readonly allowed: ReadonlySet<string>;
  /** The same tools in catalog order (for views and effective-policy answers). */
  readonly tools: readonly string[];
  /** Catalog tools that run only with the user's approval (`askTools`); never one of `allowed`. */
  readonly ask: ReadonlySet<string>;
  /** The same tools in catalog order. */
  readonly askTools: readonly string[];
  /** Names in the document that are not catalog tools: reported, never granted. */
  readonly unknownTools: readonly string[];
  /** Compiled conditions on arguments, by tool (docs/api.md#conditions-on-a-tools-arguments); only tools of `allowed` or `ask`. */
  readonly conditions: ReadonlyMap<string, ToolChecks>;
  /** The same conditions as written in the document (the permissions view shows them). */
  readonly writtenConditions: Readonly<PolicyConditions>;
  /** Usage limits by tool (docs/api.md#usage-limits); only tools of `allowed` or `ask`. */
  readonly limits: ReadonlyMap<string, ToolLimit>;
  /** The same limits as written in the document. */
  readonly writtenLimits: Readonly<PolicyLimits>;
}

export interface ValidPolicy {
  readonly status: 'ok';
  readonly revision: string;
  readonly fileExists: boolean;
  readonly document: PolicyDocument | null;
  readonly projectDefault: Allowlist;
  readonly overrides: ReadonlyMap<string, Allowlist>;
  /** The tools the project knows: IdeA's and those its `.ideai/mcp-servers.json` declares (docs/api.md#other-mcp-servers-tools). */
  readonly catalog: ProjectCatalog;
  /** The canonical read-only allowlist of that catalog (anonymous requesters, no default, no ephemeral policy). */
  readonly readOnly: Allowlist;
  /**
   * The arguments any policy of the document conditions, by tool, `issueRef` always among them: what
   * the recent-decisions ring keeps of a call so that a preview can decide it again.
   */
  readonly keptArguments: ReadonlyMap<string, readonly string[]>;
}

export interface InvalidPolicy {
  readonly status: 'invalid';
  readonly revision: string;
  readonly fileExists: true;
  readonly error: PolicyError;
  /** What kind of problem it is, for `idea-pdp check` and the preview (never on the wire of a view). */
  readonly code: ProblemCode;
}

export type CompiledPolicy = ValidPolicy | InvalidPolicy;

const documentCheck = TypeCompiler.Compile(PolicyDocumentSchema);

/**
 * Allowlists already built, by source and names: overrides repeat the same few lists across agents
 * and projects, and an allowlist is frozen, so one object serves them all (at 1,000 projects × 10
 * overrides, ~12% of the time to load them, and their memory). Bounded in entries and in the size
 * of each key: a file that keeps listing new, long names cannot make it hold more than ~15 MB.
 */
const ALLOWLISTS = new Map<string, Allowlist>();
const MAX_ALLOWLISTS = 1024;
/** Longer than every catalog tool listed once (~600 characters): such lists are built, not kept. */
const MAX_SHARED_KEY_LENGTH = 2048;

const NO_CONDITIONS: Readonly<PolicyConditions> = Object.freeze({});
const NO_LIMITS: Readonly<PolicyLimits> = Object.freeze({});

/** Builds an allowlist: catalog tools are granted (or put on ask), other names are only reported. */
export function makeAllowlist(
  source: PolicySource,
  names: readonly string[],
  askNames: readonly string[] = [],
  conditions: Readonly<PolicyConditions> = NO_CONDITIONS,
  catalog: ProjectCatalog = IDEA_CATALOG,
  limits: Readonly<PolicyLimits> = NO_LIMITS,
): Allowlist {
  // JSON keeps the key unambiguous whatever the names contain (["a\u0000b"] is not ["a", "b"]);
  // a list with tools on ask, conditions or limits is keyed as a pair or more, which start with `[[` where a plain list cannot.
  const withConditions = Object.keys(conditions).length > 0;
  const withLimits = Object.keys(limits).length > 0;
  const parts = withLimits
    ? [names, askNames, conditions, limits]
    : withConditions
      ? [names, askNames, conditions]
      : askNames.length === 0
        ? names
        : [names, askNames];
  // The same names grant other tools under another catalog: its revision (a hash, no `[`) is part of the key.
  const key = `${source}${catalog === IDEA_CATALOG ? '' : catalog.revision}${JSON.stringify(parts)}`;
  if (key.length > MAX_SHARED_KEY_LENGTH) return buildAllowlist(source, names, askNames, conditions, catalog, limits);
  let allowlist = ALLOWLISTS.get(key);
  if (allowlist === undefined) {
    if (ALLOWLISTS.size >= MAX_ALLOWLISTS) ALLOWLISTS.clear();
    allowlist = buildAllowlist(source, names, askNames, conditions, catalog, limits);
    ALLOWLISTS.set(key, allowlist);
  }
  return allowlist;
}

function buildAllowlist(
  source: PolicySource,
  names: readonly string[],
  askNames: readonly string[],
  conditions: Readonly<PolicyConditions>,
  catalog: ProjectCatalog,
  limits: Readonly<PolicyLimits>,
): Allowlist {
  const known = new Set<string>();
  const asked = new Set<string>();
  const unknown: string[] = [];
  for (const [list, into] of [
    [names, known],
    [askNames, asked],
  ] as const) {
    for (const name of list) {
      const tool = catalog.find(name);
      if (tool) into.add(tool.name);
      else if (!unknown.includes(name)) unknown.push(name);
    }
  }
  // A valid document never lists a tool twice; should one reach here, allowing it is what it said first.
  for (const tool of known) asked.delete(tool);
  const tools = sortInCatalogOrder(catalog, known);
  const askTools = sortInCatalogOrder(catalog, asked);
  const checks = new Map<string, ToolChecks>();
  for (const [tool, toolConditions] of Object.entries(conditions)) {
    // A valid document conditions only listed tools; a check on any other tool would have nothing to narrow.
    if ((known.has(tool) || asked.has(tool)) && Object.keys(toolConditions).length > 0) {
      checks.set(tool, compileToolConditions(toolConditions));
    }
  }
  return Object.freeze({
    source,
    allowed: new Set<string>(tools),
    tools: Object.freeze(tools),
    ask: new Set<string>(askTools),
    askTools: Object.freeze(askTools),
    unknownTools: Object.freeze(unknown),
    conditions: checks,
    writtenConditions: conditions,
    limits: compileLimits(limits, (tool) => known.has(tool) || asked.has(tool)),
    writtenLimits: limits,
  });
}

/** Union, by tool, of the arguments the allowlists condition, with `issueRef` first. */
function keptArgumentsOf(allowlists: Iterable<Allowlist>): ReadonlyMap<string, readonly string[]> {
  const kept = new Map<string, Set<string>>();
  for (const allowlist of allowlists) {
    for (const [tool, checks] of allowlist.conditions) {
      let names = kept.get(tool);
      if (names === undefined) kept.set(tool, (names = new Set([ISSUE_REF])));
      for (const check of checks) names.add(check.argument);
    }
  }
  return new Map([...kept].map(([tool, names]) => [tool, Object.freeze([...names])]));
}

const NO_KEPT_ARGUMENTS: ReadonlyMap<string, readonly string[]> = new Map();

/** The canonical read-only allowlist of IdeA's catalog (builtin default, anonymous requesters). */
export const READ_ONLY_ALLOWLIST: Allowlist = makeAllowlist('builtin-read-only', IDEA_CATALOG.readOnly);

/** The canonical read-only allowlist of a catalog: IdeA's read tools and the declared `read` tools. */
export function readOnlyAllowlist(catalog: ProjectCatalog): Allowlist {
  return catalog === IDEA_CATALOG ? READ_ONLY_ALLOWLIST : makeAllowlist('builtin-read-only', catalog.readOnly, [], NO_CONDITIONS, catalog);
}

/**
 * The revision of a policy decided under `catalog`: the policy file's own without a servers file,
 * else both files' together, so that a change of either is a new revision (ETag, memo, events).
 */
export function revisionWith(revision: string, catalog: ProjectCatalog): string {
  return catalog === IDEA_CATALOG ? revision : revisionOf(`${revision}+${catalog.revision}`);
}

/** Short content hash used as revision and ETag. */
export function revisionOf(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 16);
}

/** State of a project without a policy file: canonical read-only for everyone. */
export function builtinPolicy(catalog: ProjectCatalog = IDEA_CATALOG): ValidPolicy {
  const readOnly = readOnlyAllowlist(catalog);
  return {
    status: 'ok',
    revision: revisionWith(BUILTIN_REVISION, catalog),
    fileExists: false,
    document: null,
    projectDefault: readOnly,
    overrides: new Map(),
    catalog,
    readOnly,
    keptArguments: NO_KEPT_ARGUMENTS,
  };
}

/** A policy file that exists but cannot be used: every call of the project is denied. */
export function invalidPolicy(
  revision: string,
  error: Omit<PolicyError, 'file'>,
  code: ProblemCode = 'unreadable',
  file: string = POLICY_FILE,
): InvalidPolicy {
  return { status: 'invalid', revision, fileExists: true, error: { ...error, file }, code };
}

/** Compiles a validated document. */
export function compileDocument(document: PolicyDocument, revision: string, catalog: ProjectCatalog = IDEA_CATALOG): ValidPolicy {
  const overrides = new Map<string, Allowlist>();
  for (const agent of document.agents ?? []) {
    const { allowedTools, askTools, conditions, limits } = agent.policy;
    overrides.set(agent.agentId, makeAllowlist('agent-override', allowedTools, askTools, conditions, catalog, limits));
  }
  const readOnly = readOnlyAllowlist(catalog);
  const projectDefault = document.projectDefault
    ? makeAllowlist(
        'project-default',
        document.projectDefault.allowedTools,
        document.projectDefault.askTools,
        document.projectDefault.conditions,
        catalog,
        document.projectDefault.limits,
      )
    : readOnly;
  return {
    status: 'ok',
    revision: revisionWith(revision, catalog),
    fileExists: true,
    document,
    projectDefault,
    overrides,
    catalog,
    readOnly,
    keptArguments: keptArgumentsOf([projectDefault, ...overrides.values()]),
  };
}

/** A policy document nests 5 deep (document, agents, agent, policy, allowedTools); deeper is refused before parsing. */
export const MAX_DOCUMENT_DEPTH = 8;

/**
 * Parses and validates the bytes of a policy file. Anything but a valid version-1 document,
 * including a half-written file, a key given twice in one object, or nesting deeper than
 * {@link MAX_DOCUMENT_DEPTH}, is an invalid policy (fail closed), with a message that says what is
 * wrong and where.
 */
export function compilePolicyFile(bytes: Uint8Array, catalog: ProjectCatalog = IDEA_CATALOG): CompiledPolicy {
  const revision = revisionOf(bytes);
  const text = Buffer.from(bytes).toString('utf8');
  const strict = checkStrictJson(text, MAX_DOCUMENT_DEPTH);
  if (strict !== null && strict.kind !== 'syntax') {
    return invalidPolicy(revision, strictJsonError(text, strict), strict.kind === 'duplicate' ? 'duplicate_key' : 'too_deep');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return invalidPolicy(revision, jsonErrorLocation(text, strict?.offset ?? text.length, error), 'invalid_json');
  }
  // Unreachable unless the two parsers disagree: the stricter one wins.
  if (strict !== null) {
    return invalidPolicy(revision, jsonErrorLocation(text, strict.offset, new Error('unexpected character')), 'invalid_json');
  }
  const problem = documentProblem(parsed);
  if (problem) {
    const { code, ...error } = problem;
    return invalidPolicy(revision, error, code);
  }
  return compileDocument(parsed as PolicyDocument, revision, catalog);
}

/** Why a parsed value is not a usable policy document, or `null` when it is one. */
export function documentProblem(value: unknown): { message: string; path?: string; code: ProblemCode } | null {
  if (!documentCheck.Check(value)) {
    const first = documentCheck.Errors(value).First();
    const path = first?.path ?? '';
    const version = (value as { version?: unknown } | null)?.version;
    if (typeof value === 'object' && value !== null && version !== 1 && (path === '/version' || path === '')) {
      // Only a number is echoed: the file may be a symlink to a secret, and this text reaches agents.
      const shown =
        typeof version === 'number'
          ? String(version)
          : version === undefined
            ? '(missing)'
            : `(a ${version === null ? 'null' : Array.isArray(version) ? 'array' : typeof version})`;
      return { message: `unsupported version ${shown} (expected 1)`, path: '/version', code: 'unsupported_version' };
    }
    if (AGENT_ID_PATH.test(path) && typeof first?.value === 'string') return agentIdMessage(first.value, path);
    if (CONDITIONS_PATH.test(path)) {
      const mistake = documentConditionMistakes(value)[0];
      if (mistake !== undefined)
        return { message: `invalid condition at ${mistake.path}: ${mistake.message}`, path: mistake.path, code: 'invalid_condition' };
      return { message: conditionShapeMessage(path, first?.message), path, code: 'invalid_condition' };
    }
    const limited = LIMITS_PATH.exec(path);
    const limitProblem = limited === null ? undefined : limitsProblems(limited[1] ?? '', policyAt(value, limited[1] ?? ''))[0];
    if (limitProblem !== undefined) return limitProblem;
    return { message: `${first?.message ?? 'invalid document'} at ${path || '/'}`, path: path || '/', code: 'invalid_shape' };
  }
  const seen = new Set<string>();
  const document = value;
  const agents = document.agents ?? [];
  for (const [index, agent] of agents.entries()) {
    const path = `/agents/${index}/agentId`;
    // Refused, not skipped: ignoring an override would give its agent the project default instead.
    if (agentIdProblem(agent.agentId) !== undefined) return agentIdMessage(agent.agentId, path);
    if (seen.has(agent.agentId)) return { message: `duplicate override for agent ${agent.agentId}`, path, code: 'duplicate_agent' };
    seen.add(agent.agentId);
  }
  // Allowed and on ask at once says two things: which one the author meant is not for the service to guess.
  const policies: [string, PolicyDocument['projectDefault']][] = [
    ['/projectDefault', document.projectDefault],
    ...agents.map((agent, index): [string, PolicyDocument['projectDefault']] => [`/agents/${index}/policy`, agent.policy]),
  ];
  for (const [path, policy] of policies) {
    const conflicts = askConflicts(policy?.allowedTools ?? [], policy?.askTools ?? []);
    if (conflicts.length > 0) {
      const names = conflicts.slice(0, 5).map(quoteForMessage).join(', ');
      return { message: `${names} in both allowedTools and askTools at ${path}`, path: `${path}/askTools`, code: 'ask_conflict' };
    }
  }
  for (const [path, policy] of policies) {
    const found = policy === undefined ? null : conditionsProblem(path, policy);
    if (found !== null) return found;
    const limit = limitsProblems(path, policy)[0];
    if (limit !== undefined) return limit;
  }
  return null;
}

/** The policy a JSON pointer (`/projectDefault` or `/agents/<i>/policy`) names in a parsed document. */
function policyAt(document: unknown, path: string): unknown {
  const parts = path.split('/').slice(1);
  let value: unknown = document;
  for (const part of parts) value = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

/** Escapes one JSON pointer segment. */
function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** The first condition of a policy on a tool it does not list, or that can never be met. */
function conditionsProblem(
  path: string,
  policy: NonNullable<PolicyDocument['projectDefault']>,
): { message: string; path: string; code: ProblemCode } | null {
  const listed = new Set([...policy.allowedTools, ...(policy.askTools ?? [])]);
  for (const [tool, conditions] of Object.entries(policy.conditions ?? {})) {
    const at = `${path}/conditions/${pointerSegment(tool)}`;
    if (!listed.has(tool)) {
      return {
        message: `condition on ${quoteForMessage(tool)} at ${at}: the tool is in neither allowedTools nor askTools of this policy`,
        path: at,
        code: 'condition_unlisted_tool',
      };
    }
    for (const [argument, condition] of Object.entries(conditions)) {
      const why = conditionProblem(condition);
      if (why !== undefined) {
        const where = `${at}/${pointerSegment(argument)}`;
        return { message: `invalid condition at ${where}: ${why}`, path: where, code: 'invalid_condition' };
      }
    }
  }
  return null;
}

/** The names of `askNames` that are also in `allowedNames`, each once, in the order of `askNames`. */
export function askConflicts(allowedNames: readonly string[], askNames: readonly string[]): string[] {
  if (askNames.length === 0) return [];
  const allowed = new Set(allowedNames);
  return [...new Set(askNames.filter((name) => allowed.has(name)))];
}

const AGENT_ID_PATH = /^\/agents\/\d+\/agentId$/;
const CONDITIONS_PATH = /^(?:\/projectDefault|\/agents\/\d+\/policy)\/conditions(?:\/|$)/;
const LIMITS_PATH = /^(\/projectDefault|\/agents\/\d+\/policy)\/limits(?:\/|$)/;

/** What a malformed condition should look like, by how deep in `conditions` the problem is. */
function conditionShapeMessage(path: string, found: string | undefined): string {
  const depth = path.replace(CONDITIONS_PATH, '').split('/').filter(Boolean).length;
  const expected =
    depth < 2
      ? 'conditions map tool names to { argument: condition }'
      : depth === 2 && found === 'Unexpected property'
        ? 'an argument name matches ^[A-Za-z_][A-Za-z0-9_]{0,63}$'
        : 'a condition is exactly one of { "in": [1 to 100 strings or numbers] }, { "notIn": [...] }, { "prefix": [1 to 100 non-empty strings] } or { "absent": true }';
  return `invalid condition at ${path}: ${expected}${found === undefined ? '' : ` (${found})`}`;
}

function agentIdMessage(agentId: string, path: string): { message: string; path: string; code: ProblemCode } {
  const why = agentIdProblem(agentId) ?? 'it does not match the agent id pattern';
  return { message: `invalid agent id ${quoteForMessage(agentId)} at ${path}: ${why}`, path, code: 'invalid_agent_id' };
}

export function jsonErrorLocation(text: string, offset: number, error: unknown): Omit<PolicyError, 'file'> {
  // V8 quotes about ten characters of the text (`Unexpected token 'T', "TOPSECRET-"... is not valid
  // JSON`); the file may be a symlink to a secret and this message reaches agents in every denial.
  const reason = (error instanceof Error ? error.message : String(error)).replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '');
  const { line, column } = lineColumn(text, offset);
  return { message: `invalid JSON at line ${line}, column ${column}: ${reason}`, line, column };
}

function strictJsonError(text: string, problem: StrictJsonProblem): Omit<PolicyError, 'file'> {
  const { line, column } = lineColumn(text, problem.offset);
  const message =
    problem.kind === 'duplicate'
      ? `duplicate key ${quoteForMessage(problem.key)} at line ${line}, column ${column}: a reader and the service could each see a different value`
      : `nested deeper than ${MAX_DOCUMENT_DEPTH} levels at line ${line}, column ${column}`;
  return { message, line, column };
}
