/**
 * Compiling a file's bytes, shared by the main thread (small files) and the parse worker (big
 * ones): a document nested deeper than any valid one is refused before `JSON.parse`, whose time
 * grows faster than the size with the depth (seconds for a few MiB of `[[[[...`).
 */
import { NO_AGENTS_FILE, parseAgentsFile, type AgentsFileState } from '../domain/agents-file.js';
import { IDEA_CATALOG, type ProjectCatalog } from '../domain/project-catalog.js';
import { compilePolicyFile, invalidPolicy, revisionOf, type CompiledPolicy } from '../domain/compile.js';

/** A policy document is 5 levels deep (`agents[].policy.allowedTools[]`); far more is not one. */
const MAX_JSON_DEPTH = 32;
const TOO_DEEP = `nested more than ${MAX_JSON_DEPTH} levels deep`;

/** Whether the JSON text in `bytes` opens more than MAX_JSON_DEPTH arrays or objects at once (strings skipped). */
export function nestedTooDeep(bytes: Uint8Array): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index];
    if (inString) {
      if (byte === 0x5c) index++;
      else if (byte === 0x22) inString = false;
    } else if (byte === 0x22) inString = true;
    else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (byte === 0x5d || byte === 0x7d) depth--;
  }
  return false;
}

export function compileChecked(bytes: Uint8Array, catalog: ProjectCatalog = IDEA_CATALOG): CompiledPolicy {
  return nestedTooDeep(bytes) ? invalidPolicy(revisionOf(bytes), { message: TOO_DEEP }, 'too_deep') : compilePolicyFile(bytes, catalog);
}

export function parseAgentsChecked(bytes: Uint8Array): AgentsFileState {
  if (nestedTooDeep(bytes)) return { ...NO_AGENTS_FILE, exists: true, error: `.ideai/agents.json: ${TOO_DEEP}` };
  return parseAgentsFile(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}
