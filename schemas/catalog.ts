/**
 * The canonical catalog of IdeA MCP tools (docs/api.md#the-tool-catalog): the single source of truth for tool
 * names, access classes, groups and French labels. The server, the client SDK, the UI and
 * the tests all read it from here.
 */

/** Every tool is exactly one of these: `read` tools are in the canonical read-only default. */
export type ToolAccess = 'read' | 'write';

export const TOOL_GROUPS = [
  { id: 'project-read', label: 'Lecture projet' },
  { id: 'ticket-read', label: 'Lecture tickets' },
  { id: 'delegation', label: 'Délégation agents' },
  { id: 'context-memory', label: 'Contexte et mémoire' },
  { id: 'tickets', label: 'Tickets' },
  { id: 'work-exec', label: 'Travail et exécution' },
  { id: 'skills', label: 'Skills' },
] as const;

export type ToolGroupId = (typeof TOOL_GROUPS)[number]['id'];

/**
 * One catalog entry. `access` and `group` are required, non-optional fields: a tool cannot be
 * added to {@link TOOL_CATALOG} without choosing its access class (the `satisfies` below fails
 * to compile otherwise, and `test/catalog.test.ts` checks it at run time too).
 */
export interface ToolDefinition {
  readonly name: string;
  readonly access: ToolAccess;
  readonly group: ToolGroupId;
  readonly label: string;
  /** The tool acts on one ticket named by its `issueRef` argument (bound by ephemeral policies). */
  readonly issueScoped: boolean;
}

export const TOOL_CATALOG = [
  { name: 'idea_list_agents', access: 'read', group: 'project-read', label: 'Lister les agents', issueScoped: false },
  { name: 'idea_context_read', access: 'read', group: 'project-read', label: "Lire le contexte d'un agent", issueScoped: false },
  { name: 'idea_memory_read', access: 'read', group: 'project-read', label: 'Lire la mémoire projet', issueScoped: false },
  { name: 'idea_skill_read', access: 'read', group: 'project-read', label: 'Lire un skill', issueScoped: false },
  { name: 'idea_workstate_read', access: 'read', group: 'project-read', label: "Lire l'état de travail", issueScoped: false },
  { name: 'idea_ticket_read', access: 'read', group: 'ticket-read', label: 'Lire un ticket', issueScoped: true },
  { name: 'idea_ticket_list', access: 'read', group: 'ticket-read', label: 'Lister les tickets', issueScoped: false },
  { name: 'idea_ticket_read_carnet', access: 'read', group: 'ticket-read', label: "Lire le carnet d'un ticket", issueScoped: true },
  { name: 'idea_sprint_list', access: 'read', group: 'ticket-read', label: 'Lister les sprints', issueScoped: false },
  { name: 'idea_ask_agent', access: 'write', group: 'delegation', label: 'Déléguer une demande à un agent', issueScoped: false },
  { name: 'idea_launch_agent', access: 'write', group: 'delegation', label: 'Lancer un agent', issueScoped: false },
  { name: 'idea_stop_agent', access: 'write', group: 'delegation', label: 'Arrêter un agent', issueScoped: false },
  { name: 'idea_update_context', access: 'write', group: 'context-memory', label: "Modifier le contexte d'un agent", issueScoped: false },
  { name: 'idea_context_propose', access: 'write', group: 'context-memory', label: 'Proposer du contexte', issueScoped: false },
  { name: 'idea_memory_write', access: 'write', group: 'context-memory', label: 'Écrire la mémoire projet', issueScoped: false },
  { name: 'idea_ticket_create', access: 'write', group: 'tickets', label: 'Créer un ticket', issueScoped: false },
  { name: 'idea_ticket_update', access: 'write', group: 'tickets', label: 'Modifier un ticket', issueScoped: true },
  { name: 'idea_ticket_update_status', access: 'write', group: 'tickets', label: "Changer le statut d'un ticket", issueScoped: true },
  { name: 'idea_ticket_update_priority', access: 'write', group: 'tickets', label: "Changer la priorité d'un ticket", issueScoped: true },
  { name: 'idea_ticket_update_carnet', access: 'write', group: 'tickets', label: "Modifier le carnet d'un ticket", issueScoped: true },
  { name: 'idea_ticket_link', access: 'write', group: 'tickets', label: 'Lier des tickets', issueScoped: true },
  { name: 'idea_ticket_unlink', access: 'write', group: 'tickets', label: 'Délier des tickets', issueScoped: true },
  {
    name: 'idea_run_in_background',
    access: 'write',
    group: 'work-exec',
    label: 'Exécuter une commande en arrière-plan',
    issueScoped: false,
  },
  { name: 'idea_workstate_set', access: 'write', group: 'work-exec', label: "Écrire l'état de travail", issueScoped: false },
  { name: 'idea_create_skill', access: 'write', group: 'skills', label: 'Créer un skill', issueScoped: false },
] as const satisfies readonly ToolDefinition[];

/** The exact name of a catalog tool. */
export type ToolName = (typeof TOOL_CATALOG)[number]['name'];

/** A catalog entry typed with its literal name. */
export type CatalogTool = ToolDefinition & { readonly name: ToolName };

const TOOLS_BY_NAME: ReadonlyMap<string, CatalogTool> = new Map(TOOL_CATALOG.map((tool) => [tool.name, tool]));
const CATALOG_INDEX: ReadonlyMap<string, number> = new Map(TOOL_CATALOG.map((tool, index) => [tool.name, index]));

/** The catalog entry of `name`, or `undefined` for a name that is not in the catalog. */
export function findTool(name: string): CatalogTool | undefined {
  return TOOLS_BY_NAME.get(name);
}

/** True when `name` is exactly the name of a catalog tool. */
export function isToolName(name: string): name is ToolName {
  return TOOLS_BY_NAME.has(name);
}

/** The canonical read-only set: every `read` tool, in catalog order. */
export const READ_ONLY_DEFAULT: readonly ToolName[] = TOOL_CATALOG.filter((tool) => tool.access === 'read').map((tool) => tool.name);

/** Sorts tool names in catalog order (unknown names are not expected here). */
export function sortByCatalogOrder<T extends string>(names: Iterable<T>): T[] {
  return [...names].sort((a, b) => (CATALOG_INDEX.get(a) ?? Number.MAX_SAFE_INTEGER) - (CATALOG_INDEX.get(b) ?? Number.MAX_SAFE_INTEGER));
}

/**
 * The arguments each tool is known to take, by IdeA's names (docs/api.md#conditions-on-a-tools-arguments): what the panel offers
 * in a condition and what `idea-pdp check` compares a condition with. The one place to adjust when a
 * tool's arguments change; a tool missing here does not compile.
 */
export const TOOL_ARGUMENTS: Readonly<Record<ToolName, readonly string[]>> = {
  idea_list_agents: [],
  idea_context_read: ['agentId'],
  idea_memory_read: ['key'],
  idea_skill_read: ['name'],
  idea_workstate_read: ['agentId'],
  idea_ticket_read: ['issueRef'],
  idea_ticket_list: ['status', 'sprint'],
  idea_ticket_read_carnet: ['issueRef'],
  idea_sprint_list: [],
  idea_ask_agent: ['agentId', 'message'],
  idea_launch_agent: ['agentId', 'prompt'],
  idea_stop_agent: ['agentId'],
  idea_update_context: ['agentId', 'content'],
  idea_context_propose: ['target', 'content'],
  idea_memory_write: ['key', 'content'],
  idea_ticket_create: ['title', 'description', 'priority', 'sprint'],
  idea_ticket_update: ['issueRef', 'title', 'description'],
  idea_ticket_update_status: ['issueRef', 'status'],
  idea_ticket_update_priority: ['issueRef', 'priority'],
  idea_ticket_update_carnet: ['issueRef', 'content'],
  idea_ticket_link: ['issueRef', 'targetRef', 'kind'],
  idea_ticket_unlink: ['issueRef', 'targetRef'],
  idea_run_in_background: ['command', 'cwd', 'label'],
  idea_workstate_set: ['state'],
  idea_create_skill: ['name', 'content'],
};

/** The arguments `name` is known to take (none for a name outside the catalog). */
export function knownArguments(name: string): readonly string[] {
  return isToolName(name) ? TOOL_ARGUMENTS[name] : [];
}
