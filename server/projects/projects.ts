/**
 * What the services ask of the served projects (the registry implements it): each service is
 * handed this one port instead of a closure per question, so its constructor shows what it reads.
 */
import type { PolicyConditions } from '../../schemas/index.js';
import type { PolicyEvent } from '../../schemas/events.js';
import type { CompiledPolicy } from '../domain/compile.js';
import type { ProjectCatalog } from '../domain/project-catalog.js';
import type { CompiledServers } from '../domain/servers-file.js';

export interface Projects {
  /** Whether the service serves `project` now. */
  has(project: string): boolean;
  /** Its compiled policy, or undefined when the service does not serve it. */
  policyOf(project: string): CompiledPolicy | undefined;
  /** `.ideai/mcp-servers.json` as read, or undefined when the service does not serve it. */
  serversOf(project: string): CompiledServers | undefined;
  /** The identity of its folder as last seen (folder-identity.ts): state kept for a folder never passes to one made again. */
  folderOf(project: string): string | undefined;
  /**
   * The tools a write or a grant may name: the IdeA catalog plus its declared servers' tools (the
   * IdeA catalog alone when unknown or invalid).
   */
  catalogOf(project: string): ProjectCatalog;
  /** Whether `tool` is on ask for the agent `agentId` in its valid policy. */
  isOnAsk(project: string, agentId: string, tool: string): boolean;
  /** Whether its policy has an override for `agentId` or its agents file lists it. */
  isDeclared(project: string, agentId: string): boolean;
  /** The conditions `tools` have for `agentId` now; undefined when its policy is invalid or it is unknown. */
  conditionsOf(project: string, agentId: string, tools: readonly string[]): PolicyConditions | undefined;
  /** Runs `task` once the project's files were checked for a change not yet heard (at once when unknown). */
  freshly<T>(project: string, task: () => T): Promise<T>;
  /** Every project served now with its revision and status, in id order. */
  summaries(): PolicyEvent[];
  /** Folders that exist but cannot be watched now, by errno code. */
  unwatchedFolders(): ReadonlyMap<string, number>;
}
