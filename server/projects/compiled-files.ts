/**
 * What a project's two files read as, the one way the service and `idea-pdp` both compile them:
 * a missing policy file is the canonical defaults, an unreadable one an invalid policy (fail closed).
 */
import type { AgentsFileState } from '../domain/agents-file.js';
import { NO_AGENTS_FILE } from '../domain/agents-file.js';
import { builtinPolicy, invalidPolicy, revisionOf, type CompiledPolicy } from '../domain/compile.js';
import { OUTSIDE_LINK, UNHEARD_LINK, isAbsence, readProjectFiles, type FileRead } from './file-read.js';
import { hardLinkedPolicy } from './hard-links.js';
import { compilePolicy, parseAgents } from './parse.js';

export async function policyOf(file: FileRead): Promise<CompiledPolicy> {
  if (file.ok) return file.links > 1 ? hardLinkedPolicy(file.bytes, file.links) : compilePolicy(file.bytes);
  if (isAbsence(file.code)) return builtinPolicy();
  if (file.code === OUTSIDE_LINK) return invalidPolicy(revisionOf(`unreadable:${file.code}`), { message: `.ideai is ${OUTSIDE_LINK}` });
  if (file.code.startsWith(UNHEARD_LINK)) return invalidPolicy(revisionOf(`unreadable:${file.code}`), { message: file.code });
  // The file exists but cannot be read (a folder, no permission, a symlink loop): fail closed.
  return invalidPolicy(revisionOf(`unreadable:${file.code}`), { message: `cannot read the file (${file.code})` });
}

export async function agentsOf(file: FileRead): Promise<AgentsFileState> {
  if (file.ok) return parseAgents(file.bytes);
  if (isAbsence(file.code)) return NO_AGENTS_FILE;
  return { exists: true, agents: [], error: `.ideai/agents.json: cannot read the file (${file.code})` };
}

/** A project folder read once, as the service would read it: each file's text (null when unread) and what it compiles to. */
export interface CompiledProject {
  readonly policy: CompiledPolicy;
  readonly policyText: string | null;
  readonly agents: AgentsFileState;
  readonly agentsText: string | null;
}

export async function readCompiledProject(root: string): Promise<CompiledProject> {
  const files = await readProjectFiles(root);
  const [policy, agents] = await Promise.all([policyOf(files.policy), agentsOf(files.agents)]);
  return {
    policy,
    policyText: files.policy.ok ? files.policy.bytes.toString('utf8') : null,
    agents,
    agentsText: files.agents.ok ? files.agents.bytes.toString('utf8') : null,
  };
}
