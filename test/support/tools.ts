/**
 * The 25 tools as the contract lists them (docs/api.md#the-tool-catalog), copied by hand rather than read from
 * schemas/catalog.ts: the tests check the service against the contract, not against itself.
 */

/** The 9 read tools (the canonical read-only set), in catalog order. */
export const READ_TOOLS: readonly string[] = [
  'idea_list_agents',
  'idea_context_read',
  'idea_memory_read',
  'idea_skill_read',
  'idea_workstate_read',
  'idea_ticket_read',
  'idea_ticket_list',
  'idea_ticket_read_carnet',
  'idea_sprint_list',
];

/** The 16 write/action tools, in catalog order. */
export const WRITE_TOOLS: readonly string[] = [
  'idea_ask_agent',
  'idea_launch_agent',
  'idea_stop_agent',
  'idea_update_context',
  'idea_context_propose',
  'idea_memory_write',
  'idea_ticket_create',
  'idea_ticket_update',
  'idea_ticket_update_status',
  'idea_ticket_update_priority',
  'idea_ticket_update_carnet',
  'idea_ticket_link',
  'idea_ticket_unlink',
  'idea_run_in_background',
  'idea_workstate_set',
  'idea_create_skill',
];

/** The 8 tools that act on one ticket (`arguments.issueRef`), in catalog order. */
export const ISSUE_SCOPED_TOOLS: readonly string[] = [
  'idea_ticket_read',
  'idea_ticket_read_carnet',
  'idea_ticket_update',
  'idea_ticket_update_status',
  'idea_ticket_update_priority',
  'idea_ticket_update_carnet',
  'idea_ticket_link',
  'idea_ticket_unlink',
];

/** All 25 tools in catalog order. */
export const ALL_TOOLS: readonly string[] = [...READ_TOOLS, ...WRITE_TOOLS];

/** Sorts names in catalog order (the order every list of the API uses), unknown names dropped. */
export function inCatalogOrder(names: Iterable<string>): string[] {
  return [...new Set(names)].filter((name) => ALL_TOOLS.includes(name)).sort((a, b) => ALL_TOOLS.indexOf(a) - ALL_TOOLS.indexOf(b));
}
