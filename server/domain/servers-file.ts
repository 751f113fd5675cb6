/**
 * Reads `.ideai/mcp-servers.json` (docs/api.md#other-mcp-servers-tools) under the policy file's rules:
 * strict JSON (a key given twice is refused), a version-1 document of the published schema, and a
 * message that says what is wrong and where. Anything else is an invalid catalog, and its project
 * denies every call (`policy_invalid`) until it is fixed. Pure.
 */
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { SERVER_METHODS, ServersDocumentSchema, type PolicyError, type ProblemCode, type ServersDocument } from '../../schemas/index.js';
import { quoteForMessage } from '../../schemas/requester.js';
import { jsonErrorLocation, revisionOf } from './compile.js';
import { IDEA_CATALOG, projectCatalog, type ProjectCatalog } from './project-catalog.js';
import { pointerLocation, pointerSegment } from './json-location.js';
import { schemaProblems } from './schema-problems.js';
import { checkStrictJson, lineColumn } from './strict-json.js';

export const SERVERS_FILE = '.ideai/mcp-servers.json';

/** The document is 5 objects deep (`servers.<id>.tools.<tool>`); deeper is refused before parsing. */
const MAX_SERVERS_DEPTH = 6;

export interface ValidServers {
  readonly status: 'ok';
  readonly revision: string;
  readonly fileExists: boolean;
  readonly document: ServersDocument | null;
  readonly catalog: ProjectCatalog;
}

export interface InvalidServers {
  readonly status: 'invalid';
  readonly revision: string;
  readonly error: PolicyError;
  readonly code: ProblemCode;
}

export type CompiledServers = ValidServers | InvalidServers;

/** No servers file: IdeA's catalog alone. */
export const NO_SERVERS_FILE: ValidServers = Object.freeze({
  status: 'ok',
  revision: 'builtin',
  fileExists: false,
  document: null,
  catalog: IDEA_CATALOG,
});

const documentCheck = TypeCompiler.Compile(ServersDocumentSchema);

export function invalidServers(revision: string, error: Omit<PolicyError, 'file'>, code: ProblemCode = 'unreadable'): InvalidServers {
  return { status: 'invalid', revision, error: { file: SERVERS_FILE, ...error }, code };
}

/** Compiles the bytes of a servers file (see the module's comment). */
export function compileServersFile(bytes: Uint8Array): CompiledServers {
  const revision = revisionOf(bytes);
  const text = Buffer.from(bytes).toString('utf8');
  const strict = checkStrictJson(text, MAX_SERVERS_DEPTH);
  if (strict !== null && strict.kind !== 'syntax') {
    const { line, column } = lineColumn(text, strict.offset);
    const message =
      strict.kind === 'duplicate'
        ? `duplicate key ${quoteForMessage(strict.key)} at line ${line}, column ${column}: a reader and the service could each see a different value`
        : `nested deeper than ${MAX_SERVERS_DEPTH} levels at line ${line}, column ${column}`;
    return invalidServers(revision, { message, line, column }, strict.kind === 'duplicate' ? 'duplicate_key' : 'too_deep');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return invalidServers(revision, jsonErrorLocation(text, strict?.offset ?? text.length, error), 'invalid_json');
  }
  if (strict !== null) {
    return invalidServers(revision, jsonErrorLocation(text, strict.offset, new Error('unexpected character')), 'invalid_json');
  }
  const problem = serversProblem(parsed);
  if (problem !== null) {
    const { line, column } = pointerLocation(text, problem.path);
    return invalidServers(
      revision,
      { message: `${problem.message} (line ${line}, column ${column})`, path: problem.path || '/', line, column },
      problem.code,
    );
  }
  const document = parsed as ServersDocument;
  return { status: 'ok', revision, fileExists: true, document, catalog: projectCatalog(document, revision) };
}

/** A reason a parsed value is not a servers document: what is wrong, where (a JSON pointer) and its code. */
export interface ServersProblem {
  readonly message: string;
  readonly path: string;
  readonly code: ProblemCode;
}

/** The first reason a parsed value is not a servers document, or null. */
export function serversProblem(value: unknown): ServersProblem | null {
  return serversProblems(value, 1)[0] ?? null;
}

/**
 * The reasons a parsed value is not a servers document, the service's own (the first) leading, at most
 * `limit` of the schema's: the version, then the shape, then the reserved tool names.
 */
export function serversProblems(value: unknown, limit: number): ServersProblem[] {
  const problems: ServersProblem[] = [];
  const version = (value as { version?: unknown } | null)?.version;
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && version !== 1) {
    // Only a number is echoed, as for the policy file: this text reaches agents.
    const shown = typeof version === 'number' ? String(version) : version === undefined ? '(missing)' : `(a ${typeof version})`;
    problems.push({ message: `unsupported version ${shown} (expected 1)`, path: '/version', code: 'unsupported_version' });
    if (limit <= 1) return problems;
  }
  if (!documentCheck.Check(value)) {
    for (const { path, message } of schemaProblems(documentCheck, value, limit).problems) {
      if (path === '/version' && problems.length > 0) continue;
      const hint = message.startsWith('unknown property') ? keyHint(path) : '';
      problems.push({ message: `${message}${hint}`, path, code: 'invalid_shape' });
    }
    if (problems.length >= limit) return problems.slice(0, limit);
  }
  const servers = (value as { servers?: unknown } | null)?.servers;
  if (typeof servers !== 'object' || servers === null) return problems;
  for (const [id, server] of Object.entries(servers)) {
    const tools = (server as { tools?: unknown } | null)?.tools;
    if (typeof tools !== 'object' || tools === null) continue;
    for (const { method } of SERVER_METHODS) {
      if (!Object.hasOwn(tools, method)) continue;
      problems.push({
        message: `the tool name ${JSON.stringify(method)} of server ${id} is reserved: ${id}/${method} names the MCP method itself (implicitly declared read)`,
        path: `/servers/${pointerSegment(id)}/tools/${pointerSegment(method)}`,
        code: 'invalid_shape',
      });
      if (problems.length >= limit) return problems;
    }
  }
  return problems;
}

/** What a refused key should look like, for an unexpected property under `servers` or a server's `tools`. */
function keyHint(path: string): string {
  if (/^\/servers\/[^/]+$/.test(path)) return ' (a server id matches ^[a-z][a-z0-9-]{0,31}$ and is not "idea")';
  if (/^\/servers\/[^/]+\/tools\/[^/]+$/.test(path))
    return " (a tool key is the server's exact MCP tool name: 1 to 128 characters, no control character)";
  return '';
}
