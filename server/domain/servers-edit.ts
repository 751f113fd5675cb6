/**
 * The one edit of `.ideai/mcp-servers.json` the API makes (docs/api.md#declaring-a-tool): a tool
 * declared, or declared again with another class or label, under a server that is added when it is
 * absent. Checked against the same rules as the file itself, so a write never leaves a file the
 * service would refuse. Pure.
 */
import {
  MAX_DECLARED_SERVERS,
  MAX_DECLARED_TOOLS_PER_SERVER,
  type DeclaredTool,
  type ServersDocument,
  type ToolAccess,
} from '../../schemas/index.js';
import { ApiError } from '../errors.js';
import { serversProblem } from './servers-file.js';

export interface ToolDeclaration {
  readonly server: string;
  readonly tool: string;
  readonly access: ToolAccess;
  /** The tool's French label; absent: a label already in the file is kept. */
  readonly label?: string | undefined;
  /** The server's label, used only when the server has none yet (a label in the file is kept). */
  readonly serverLabel?: string | undefined;
}

/** A document without servers: what a project without the file starts from. */
export const EMPTY_SERVERS_DOCUMENT: ServersDocument = { version: 1, servers: {} };

/** `document` with `declaration` in it; throws `invalid_request` or `limit_exceeded` (nothing written). */
export function withDeclaredTool(document: ServersDocument, declaration: ToolDeclaration): ServersDocument {
  const { server, tool, access } = declaration;
  const existing = Object.hasOwn(document.servers, server) ? document.servers[server] : undefined;
  if (existing === undefined && Object.keys(document.servers).length >= MAX_DECLARED_SERVERS) {
    throw new ApiError('limit_exceeded', `The servers file already declares ${MAX_DECLARED_SERVERS} servers; ${server} was not added.`);
  }
  const before = existing?.tools ?? {};
  const known = Object.hasOwn(before, tool) ? before[tool] : undefined;
  if (known === undefined && Object.keys(before).length >= MAX_DECLARED_TOOLS_PER_SERVER) {
    throw new ApiError(
      'limit_exceeded',
      `Server ${server} already declares ${MAX_DECLARED_TOOLS_PER_SERVER} tools; ${tool} was not added.`,
    );
  }
  const label = declaration.label ?? known?.label;
  const declared: DeclaredTool = label === undefined ? { access } : { access, label };
  // Entries, never assignment: a tool may be named `__proto__`, which an assignment would not keep as a key.
  const tools = withEntry(before, tool, declared);
  const serverLabel = existing?.label ?? declaration.serverLabel;
  const entry = serverLabel === undefined ? { tools } : { label: serverLabel, tools };
  const servers = withEntry(document.servers, server, entry);
  const next: ServersDocument = { ...document, servers };
  const problem = serversProblem(next);
  if (problem !== null) {
    throw new ApiError('invalid_request', `The servers file would be invalid: ${problem.message}; nothing was written.`, {
      path: problem.path,
      message: problem.message,
    });
  }
  return next;
}

/** `record` with `key` set to `value`, in its place if it was there, else last (the file keeps its order). */
function withEntry<T>(record: Readonly<Record<string, T>>, key: string, value: T): Record<string, T> {
  const entries = Object.entries(record);
  const at = entries.findIndex(([name]) => name === key);
  if (at === -1) entries.push([key, value]);
  else entries[at] = [key, value];
  return Object.fromEntries(entries);
}

/** The bytes of a servers document: pretty-printed like the policy file, keys in the order the file had them. */
export function serializeServers(document: ServersDocument): string {
  const ordered = { ...(document.$schema === undefined ? {} : { $schema: document.$schema }), version: 1, servers: document.servers };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}
