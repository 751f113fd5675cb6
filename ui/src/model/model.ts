/**
 * Pure logic of the permissions panel (no DOM): row states, counters and French wording, the
 * allowlist a save sends. Kept apart so it is unit-tested without a browser.
 *
 * The read/write classification comes from `GET /catalog` (the backend is canonical); nothing
 * here hardcodes which tool is a read tool.
 */
import type { CatalogResponse, PermissionsView, AgentPermissions } from '../../../schemas/api.js';
import type { PolicyConditions } from '../../../schemas/conditions.js';
import type { PolicyLimits } from '../../../schemas/limits.js';

export type CatalogTool = CatalogResponse['tools'][number];
export type Access = CatalogTool['access'];

/** Which policy the editor shows: the project default or one agent (by id). */
export type TargetKey = { kind: 'default' } | { kind: 'agent'; agentId: string };

/** The state a tool row displays, worded exactly as the ticket's labels. */
export type RowState =
  'Autorisé' | 'Refusé' | 'Hérité' | 'Ajouté' | 'Retiré' | 'Sur demande' | 'Sur demande (hérité)' | 'Autorisé (temporaire)';

/**
 * What a policy says of one tool: allowed, asked (runs with the user's approval,
 * docs/api.md#approvals-and-temporary-grants), or denied.
 */
export type ToolState = 'allow' | 'ask' | 'deny';

export function toolState(name: string, allowed: ReadonlySet<string>, ask: ReadonlySet<string>): ToolState {
  return allowed.has(name) ? 'allow' : ask.has(name) ? 'ask' : 'deny';
}

/** The DOM id of a tool's checkbox (the focus follows it across re-renders). */
export function toolControlId(name: string): string {
  return `tool-${name}`;
}

/** The DOM id of a tool's "Sur demande" toggle. */
export function askToggleId(name: string): string {
  return `ask-${name}`;
}

/** The accessible name of a tool's "Sur demande" toggle: "Sur demande : Créer un ticket, idea_ticket_create". */
export function askToggleLabel(tool: Pick<CatalogTool, 'label' | 'name'>): string {
  return `Sur demande : ${checkboxLabel(tool)}`;
}

/** The items of a group's toolbar, in order: the group button, its two actions, then "Autres actions". */
export const TOOLBAR_ITEMS = ['group-toggle', 'group-all', 'group-none', 'group-more'] as const;

export const DEFAULT_TARGET: TargetKey = { kind: 'default' };

/** A stable string for a target, usable as a map key or a DOM id suffix. */
export function targetId(target: TargetKey): string {
  return target.kind === 'default' ? 'default' : `agent:${target.agentId}`;
}

export function sameTarget(a: TargetKey, b: TargetKey): boolean {
  return targetId(a) === targetId(b);
}

/** French agreement of "autorisé" with a count (0 and 1 are singular in French). */
export function autorise(count: number): string {
  return count > 1 ? 'autorisés' : 'autorisé';
}

/**
 * "9 lecture autorisés · 2 écriture autorisés", then " (dont 1 temporaire)" when a live grant
 * allows a tool the policy does not, then " · 3 sur demande" when tools are on ask.
 */
export function summaryText(
  catalog: CatalogResponse,
  allowed: ReadonlySet<string>,
  ask: ReadonlySet<string> = new Set(),
  granted: ReadonlySet<string> = new Set(),
): string {
  let read = 0;
  let write = 0;
  let asked = 0;
  let temporary = 0;
  for (const tool of catalog.tools) {
    const byGrant = !allowed.has(tool.name) && granted.has(tool.name);
    if (!allowed.has(tool.name) && !byGrant) {
      if (ask.has(tool.name)) asked += 1;
      continue;
    }
    if (byGrant) temporary += 1;
    if (tool.access === 'read') read += 1;
    else write += 1;
  }
  const dont = temporary > 0 ? ` (dont ${temporary} temporaire${temporary > 1 ? 's' : ''})` : '';
  return `${read} lecture ${autorise(read)} · ${write} écriture ${autorise(write)}${dont}${asked > 0 ? ` · ${asked} sur demande` : ''}`;
}

/** The visible group counter, "3/7 autorisés" (then " · 1 sur demande"). */
export function counterText(allowed: number, total: number, asked = 0): string {
  return `${allowed}/${total} ${autorise(allowed)}${asked > 0 ? ` · ${asked} sur demande` : ''}`;
}

/** The accessible name of a group button, "Tickets, 1 sur 7 autorisé" (then ", 1 sur demande"). */
export function groupAccessibleName(label: string, allowed: number, total: number, asked = 0): string {
  return `${label}, ${allowed} sur ${total} ${autorise(allowed)}${asked > 0 ? `, ${asked} sur demande` : ''}`;
}

/** The full label of a tool checkbox, "Modifier le carnet d'un ticket, idea_ticket_update_carnet". */
export function checkboxLabel(tool: Pick<CatalogTool, 'label' | 'name'>): string {
  return `${tool.label}, ${tool.name}`;
}

/**
 * The state of one row. The project default and an agent that inherits show the plain effective
 * state ("Hérité" for an inherited grant); an override is compared with the project default. A
 * live temporary grant of a tool the policy does not allow reads "Autorisé (temporaire)".
 */
export function rowState(
  target: TargetKey,
  overriding: boolean,
  allowed: boolean,
  allowedByDefault: boolean,
  asked = false,
  granted = false,
): RowState {
  if (!allowed && granted) return 'Autorisé (temporaire)';
  if (target.kind === 'default') return allowed ? 'Autorisé' : asked ? 'Sur demande' : 'Refusé';
  if (!overriding) return allowed ? 'Hérité' : asked ? 'Sur demande (hérité)' : 'Refusé';
  if (allowed) return allowedByDefault ? 'Autorisé' : 'Ajouté';
  if (asked) return 'Sur demande';
  return allowedByDefault ? 'Retiré' : 'Refusé';
}

/** "Diffère du défaut : +2 écriture, -1 lecture", or null when the override equals the default. */
export function differenceText(
  catalog: CatalogResponse,
  allowed: ReadonlySet<string>,
  defaultAllowed: ReadonlySet<string>,
  ask: ReadonlySet<string> = new Set(),
  defaultAsk: ReadonlySet<string> = new Set(),
): string | null {
  const parts: string[] = [];
  const asked = catalog.tools.filter((tool) => !allowed.has(tool.name) && ask.has(tool.name) && !defaultAsk.has(tool.name)).length;
  const unasked = catalog.tools.filter((tool) => defaultAsk.has(tool.name) && !ask.has(tool.name)).length;
  for (const access of ['write', 'read'] as const) {
    const tools = catalog.tools.filter((tool) => tool.access === access);
    const added = tools.filter((tool) => allowed.has(tool.name) && !defaultAllowed.has(tool.name)).length;
    const removed = tools.filter((tool) => !allowed.has(tool.name) && defaultAllowed.has(tool.name)).length;
    const word = access === 'read' ? 'lecture' : 'écriture';
    if (added > 0) parts.push(`+${added} ${word}`);
    if (removed > 0) parts.push(`-${removed} ${word}`);
  }
  if (asked > 0) parts.push(`+${asked} sur demande`);
  if (unasked > 0) parts.push(`-${unasked} sur demande`);
  return parts.length === 0 ? null : `Diffère du défaut : ${parts.join(', ')}`;
}

/** The allowlist a save sends: catalog tools only, in catalog order (unknown names are dropped). */
export function allowlistToSave(catalog: CatalogResponse, allowed: ReadonlySet<string>): string[] {
  return catalog.tools.filter((tool) => allowed.has(tool.name)).map((tool) => tool.name);
}

/**
 * The lists of a write; `askTools` only when some tool is on ask (absent means none). `conditions`,
 * when present, replaces the target's conditions (docs/api.md#conditions-on-a-tools-arguments), `{}` removing them all.
 */
export interface WriteLists {
  allowedTools: string[];
  askTools?: string[];
  conditions?: PolicyConditions;
  /** When present, replaces the target's usage limits (docs/api.md#usage-limits), `{}` removing them all. */
  limits?: PolicyLimits;
}

/**
 * What a save sends: a tool allowed is never also on ask (the API refuses a name in both), and
 * given `conditions`, those of the tools still listed (the API refuses a condition on another).
 */
export function listsToSave(
  catalog: CatalogResponse,
  allowed: ReadonlySet<string>,
  ask: ReadonlySet<string>,
  conditions?: PolicyConditions,
): WriteLists {
  const allowedTools = allowlistToSave(catalog, allowed);
  const askTools = catalog.tools.filter((tool) => ask.has(tool.name) && !allowed.has(tool.name)).map((tool) => tool.name);
  const lists: WriteLists = askTools.length === 0 ? { allowedTools } : { allowedTools, askTools };
  if (conditions === undefined) return lists;
  const listed = new Set([...allowedTools, ...askTools]);
  return { ...lists, conditions: Object.fromEntries(Object.entries(conditions).filter(([tool]) => listed.has(tool))) };
}

/** A view entry's conditions (`{}` when it has none, or from a service without them). */
export function conditionsOf(entry: object): PolicyConditions {
  return (entry as { conditions?: PolicyConditions | undefined }).conditions ?? {};
}

/** The argument names the catalog knows a tool takes (docs/api.md#conditions-on-a-tools-arguments), offered by the editor. */
export function argumentsOf(tool: object | undefined): string[] {
  return (tool as { arguments?: string[] | undefined } | undefined)?.arguments ?? [];
}

export function sameSet(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const item of a) if (!b.has(item)) return false;
  return true;
}

export interface ToolGroupView {
  id: string;
  label: string;
  /** `read` when every tool of the group is a read tool: such groups are folded for agents. */
  access: Access;
  tools: CatalogTool[];
}

/** The catalog's groups in order, each with its tools (groups without tools are left out). */
export function groupTools(catalog: CatalogResponse): ToolGroupView[] {
  return catalog.groups
    .map((group) => {
      const tools = catalog.tools.filter((tool) => tool.group === group.id);
      const access: Access = tools.every((tool) => tool.access === 'read') ? 'read' : 'write';
      return { id: group.id, label: group.label, access, tools };
    })
    .filter((group) => group.tools.length > 0);
}

/** Groups start open except read groups of an agent (less noise; write groups are the risky decisions). */
export function groupOpenByDefault(target: TargetKey, access: Access): boolean {
  return target.kind === 'default' || access === 'write';
}

export function findAgent(view: PermissionsView, agentId: string): AgentPermissions | undefined {
  return view.agents.find((agent) => agent.agentId === agentId);
}

/** What the service currently holds for a target: saved allowlist, override flag, unknown names. */
export interface SavedTarget {
  allowed: Set<string>;
  /** Tools on ask (effective, for an agent that inherits). */
  ask: Set<string>;
  /** The target has its own allowlist (custom default, or an agent override). */
  overriding: boolean;
  unknownTools: string[];
  redundant: boolean;
  /** Conditions on arguments (effective, for an agent that inherits). */
  conditions: PolicyConditions;
}

export function savedTarget(view: PermissionsView, target: TargetKey): SavedTarget | undefined {
  if (target.kind === 'default') {
    return {
      allowed: new Set(view.projectDefault.allowedTools),
      ask: new Set(view.projectDefault.askTools ?? []),
      overriding: view.projectDefault.mode === 'custom',
      unknownTools: view.projectDefault.unknownTools,
      redundant: false,
      conditions: conditionsOf(view.projectDefault),
    };
  }
  const agent = findAgent(view, target.agentId);
  if (agent === undefined) return undefined;
  return {
    allowed: new Set(agent.allowedTools),
    ask: new Set(agent.askTools ?? []),
    overriding: agent.mode === 'override',
    unknownTools: agent.unknownTools,
    redundant: agent.redundant,
    conditions: conditionsOf(agent),
  };
}
