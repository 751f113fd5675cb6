/**
 * The problems of `.ideai/mcp-servers.json` as `idea-pdp check` reports them (docs/api.md#other-mcp-servers-tools):
 * every one, in file order, with the codes the service gives the file; the one that makes the service
 * deny the project is always among them. Pure.
 */
import type { PolicyProblem } from '../../schemas/index.js';
import { placeProblems, type FileCheck, type PendingProblem } from './policy-check.js';
import { serversProblems, type CompiledServers } from './servers-file.js';

const NONE = { errors: 0, warnings: 0 } as const;

/** `text`: the file's text, null when it could not be read (or is missing). */
export function checkServers(file: string, text: string | null, servers: CompiledServers): FileCheck {
  if (servers.status === 'ok') return { problems: [], more: NONE };
  const { error, code } = servers;
  // Syntax, duplicate keys, depth, an unreadable or refused file: nothing further can be read.
  if (text === null || (code !== 'invalid_shape' && code !== 'unsupported_version')) {
    const where = { line: error.line ?? 1, column: error.column ?? 1 };
    const only: PolicyProblem = { file, ...where, severity: 'error', code, message: error.message };
    return { problems: [only], more: NONE };
  }
  const pending: PendingProblem[] = serversProblems(JSON.parse(text), Number.MAX_SAFE_INTEGER).map((one) => ({
    path: one.path,
    severity: 'error',
    code: one.code,
    message: () => one.message,
  }));
  return placeProblems(file, text, pending);
}
