/**
 * What a project's two files read as, the one way the service and `idea-pdp` both compile them:
 * a missing policy file is the canonical defaults, an unreadable one an invalid policy (fail closed).
 */
import type { AgentsFileState } from '../domain/agents-file.js';
import { NO_AGENTS_FILE } from '../domain/agents-file.js';
import { builtinPolicy, invalidPolicy, revisionOf, type CompiledPolicy } from '../domain/compile.js';
import { OUTSIDE_LINK, UNHEARD_LINK, isAbsence, readProjectFiles, type FileRead } from './file-read.js';
import { hardLinkedPolicy, hardLinkedServers } from './hard-links.js';
import { IDEA_CATALOG, type ProjectCatalog } from '../domain/project-catalog.js';
import { NO_SERVERS_FILE, compileServersFile, invalidServers, type CompiledServers } from '../domain/servers-file.js';
import { compilePolicy, parseAgents } from './parse.js';

export async function policyOf(file: FileRead, catalog: ProjectCatalog = IDEA_CATALOG): Promise<CompiledPolicy> {
  if (file.ok) return file.links > 1 ? hardLinkedPolicy(file.bytes, file.links) : compilePolicy(file.bytes, catalog);
  if (isAbsence(file.code)) return builtinPolicy(catalog);
  if (file.code === OUTSIDE_LINK) return invalidPolicy(revisionOf(`unreadable:${file.code}`), { message: `.ideai is ${OUTSIDE_LINK}` });
  if (file.code.startsWith(UNHEARD_LINK)) return invalidPolicy(revisionOf(`unreadable:${file.code}`), { message: file.code });
  // The file exists but cannot be read (a folder, no permission, a symlink loop): fail closed.
  return invalidPolicy(revisionOf(`unreadable:${file.code}`), { message: `cannot read the file (${file.code})` });
}

/** What `.ideai/mcp-servers.json` reads as: absent is IdeA's catalog alone, unreadable an invalid catalog (fail closed). */
export function serversOf(file: FileRead): CompiledServers {
  if (file.ok) return file.links > 1 ? hardLinkedServers(file.bytes, file.links) : compileServersFile(file.bytes);
  if (isAbsence(file.code)) return NO_SERVERS_FILE;
  const message =
    file.code === OUTSIDE_LINK
      ? `.ideai is ${OUTSIDE_LINK}`
      : file.code.startsWith(UNHEARD_LINK)
        ? file.code
        : `cannot read the file (${file.code})`;
  return invalidServers(revisionOf(`unreadable:${file.code}`), { message });
}

/**
 * The policy decisions use, given what the servers file reads as: an invalid servers file makes the
 * whole project invalid (every call denied, `policy_invalid`), else the policy is compiled against
 * the project's catalog. `compile` is the policy file compiled under a catalog.
 */
export async function policyWithServers(
  servers: CompiledServers,
  compile: (catalog: ProjectCatalog) => Promise<CompiledPolicy>,
): Promise<CompiledPolicy> {
  if (servers.status === 'ok') return compile(servers.catalog);
  const policy = await compile(IDEA_CATALOG);
  return invalidPolicy(revisionOf(`servers:${servers.revision}+${policy.revision}`), servers.error, servers.code, servers.error.file);
}

export async function agentsOf(file: FileRead): Promise<AgentsFileState> {
  if (file.ok) return parseAgents(file.bytes);
  if (isAbsence(file.code)) return NO_AGENTS_FILE;
  return { exists: true, agents: [], error: `.ideai/agents.json: cannot read the file (${file.code})` };
}

/** A project folder read once, as the service would read it: each file's text (null when unread) and what it compiles to. */
export interface CompiledProject {
  /** What decisions use: invalid when either file is. */
  readonly policy: CompiledPolicy;
  /** The policy file alone, compiled under the project's catalog (IdeA's when the servers file is invalid), for its own problems. */
  readonly ownPolicy: CompiledPolicy;
  readonly servers: CompiledServers;
  readonly serversText: string | null;
  readonly policyText: string | null;
  readonly agents: AgentsFileState;
  readonly agentsText: string | null;
}

export async function readCompiledProject(root: string): Promise<CompiledProject> {
  const files = await readProjectFiles(root);
  const servers = serversOf(files.servers);
  const [ownPolicy, agents] = await Promise.all([
    policyOf(files.policy, servers.status === 'ok' ? servers.catalog : IDEA_CATALOG),
    agentsOf(files.agents),
  ]);
  return {
    policy: await policyWithServers(servers, () => Promise.resolve(ownPolicy)),
    ownPolicy,
    servers,
    serversText: files.servers.ok ? files.servers.bytes.toString('utf8') : null,
    policyText: files.policy.ok ? files.policy.bytes.toString('utf8') : null,
    agents,
    agentsText: files.agents.ok ? files.agents.bytes.toString('utf8') : null,
  };
}
