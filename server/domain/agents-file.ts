/**
 * Reads `.ideai/agents.json` (docs/api.md#projects-and-files): an array of agent objects or `{ "agents": [...] }`, each
 * with `id` (or `agentId`) and an optional `name`. It feeds listings and the approval queue's
 * room for the project's agents, never an allow or a deny.
 */
import { AGENT_ID_REGEX } from '../../schemas/index.js';
import type { CompiledPolicy } from './compile.js';

const AGENTS_FILE = '.ideai/agents.json';

export interface DeclaredAgent {
  readonly id: string;
  readonly name: string;
}

export interface AgentsFileState {
  readonly exists: boolean;
  readonly agents: readonly DeclaredAgent[];
  /** What is wrong with the file (it then lists no agents, or only its valid entries). */
  readonly error: string | null;
}

export const NO_AGENTS_FILE: AgentsFileState = { exists: false, agents: [], error: null };

/** Whether the project declares `agentId`: listed in `.ideai/agents.json` or given an override. */
export function declaresAgent(agents: AgentsFileState, policy: CompiledPolicy | undefined, agentId: string): boolean {
  if (policy?.status === 'ok' && policy.overrides.has(agentId)) return true;
  return agents.agents.some((agent) => agent.id === agentId);
}

export function parseAgentsFile(text: string): AgentsFileState {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    // Without V8's quote of the text (`"TOPSECRET-"...`): the file may be a symlink to a secret.
    const reason = (error as Error).message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '');
    return { exists: true, agents: [], error: `${AGENTS_FILE}: invalid JSON (${reason})` };
  }
  const list = Array.isArray(parsed) ? parsed : isRecord(parsed) && Array.isArray(parsed.agents) ? (parsed.agents as unknown[]) : null;
  if (!list) {
    return { exists: true, agents: [], error: `${AGENTS_FILE}: expected an array of agents or { "agents": [...] }` };
  }
  const agents = new Map<string, DeclaredAgent>();
  const skipped: number[] = [];
  list.forEach((entry, index) => {
    const id = isRecord(entry) ? (typeof entry.id === 'string' ? entry.id : entry.agentId) : undefined;
    if (!isRecord(entry) || typeof id !== 'string' || !AGENT_ID_REGEX.test(id) || agents.has(id)) {
      skipped.push(index);
      return;
    }
    const name = typeof entry.name === 'string' && entry.name !== '' ? entry.name : id;
    agents.set(id, { id, name });
  });
  return {
    exists: true,
    agents: [...agents.values()],
    error: skipped.length === 0 ? null : `${AGENTS_FILE}: ignored entries at index ${skipped.join(', ')} (no valid unique id)`,
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
