/**
 * Pure part of the other MCP servers in the panel (docs/api.md#other-mcp-servers-tools): the state
 * of « Tools inconnus » and of the « Déclarer » form, the French wording of a server's hints, and
 * what the form is prefilled with. The hints are the server's word, never a permission: they only
 * prefill a choice the user makes.
 */
import type { ServersResponse, ToolAnnotations } from '../../../schemas/servers.js';
import type { FrenchError } from './errors-fr.js';

export type ServerEntry = ServersResponse['servers'][number];
export type DiscoveredEntry = ServerEntry['discovered'][number];
export type DeclaredAccess = 'read' | 'write';

/** The « Déclarer » form of one discovered tool. */
export interface DeclareForm {
  server: string;
  tool: string;
  /** Null until chosen, when the server gave no hint: never declared by default. */
  access: DeclaredAccess | null;
  /** The class shown was prefilled from the server's hint (said beside it). */
  prefilled: DeclaredAccess | null;
  label: string;
  /** The server is not in `.ideai/mcp-servers.json` yet: its label is asked for too. */
  newServer: boolean;
  serverLabel: string;
  problem: FrenchError | null;
}

export interface ServersPanel {
  /** The list has been read once for the open project. */
  loaded: boolean;
  servers: ServerEntry[];
  loadError: FrenchError | null;
  form: DeclareForm | null;
  busy: boolean;
  /** What the last declaration did, said above the server groups. */
  notice: string | null;
}

export function emptyServers(): ServersPanel {
  return { loaded: false, servers: [], loadError: null, form: null, busy: false, notice: null };
}

/** The name a declared tool takes in policies and `/decide`. */
export const qualified = (server: string, tool: string): string => `${server}/${tool}`;

/** What the server says of a tool, in French: « indiqué lecture seule par le serveur »… */
export function hintText(annotations: ToolAnnotations): string {
  if (annotations.readOnlyHint === true) return 'indiqué lecture seule par le serveur';
  if (annotations.destructiveHint === true) return 'indiqué destructif par le serveur';
  if (annotations.readOnlyHint === false && annotations.destructiveHint === false) return 'indiqué écriture non destructive par le serveur';
  if (annotations.readOnlyHint === false) return 'indiqué écriture par le serveur';
  return 'aucune indication du serveur';
}

/** The class a hint suggests (MCP: a tool that is not read-only may be destructive), or null without one. */
export function accessFromHint(annotations: ToolAnnotations): DeclaredAccess | null {
  if (annotations.readOnlyHint === true) return 'read';
  if (annotations.readOnlyHint === false || annotations.destructiveHint === true) return 'write';
  return null;
}

/** The form of `tool`, prefilled from its hint; its label from the server's title. */
export function declareFormFor(server: ServerEntry, tool: DiscoveredEntry): DeclareForm {
  const suggested = accessFromHint(tool.annotations);
  return {
    server: server.id,
    tool: tool.name,
    access: suggested,
    prefilled: suggested,
    label: '',
    newServer: server.tools.length === 0,
    serverLabel: '',
    problem: null,
  };
}

/** The body of the write: empty texts are left out (the file then keeps or shows the tool's own name). */
export function declareBody(form: DeclareForm & { access: DeclaredAccess }): {
  access: DeclaredAccess;
  label?: string;
  serverLabel?: string;
} {
  const label = form.label.trim();
  const serverLabel = form.serverLabel.trim();
  return {
    access: form.access,
    ...(label === '' ? {} : { label }),
    ...(form.newServer && serverLabel !== '' ? { serverLabel } : {}),
  };
}

export const accessWord = (access: DeclaredAccess): string => (access === 'read' ? 'lecture' : 'écriture');

/** « fs/write_file déclaré en écriture : refusé par défaut, à accorder agent par agent. » */
export function declaredText(name: string, access: DeclaredAccess, reapplied: boolean): string {
  const effect = access === 'read' ? 'autorisé par défaut aux agents en lecture seule' : 'refusé par défaut, à accorder agent par agent';
  return `${name} déclaré en ${accessWord(access)} : ${effect}.${reapplied ? ' (Enregistré sur la version actuelle du fichier.)' : ''}`;
}

/** The servers with tools to declare, and how many tools in all. */
export function undeclared(servers: readonly ServerEntry[]): { servers: ServerEntry[]; count: number } {
  const withTools = servers.filter((server) => server.discovered.length > 0);
  return { servers: withTools, count: withTools.reduce((sum, server) => sum + server.discovered.length, 0) };
}

/** « Fichiers (fs) », or the id alone when it is its own label. */
export function serverName(server: Pick<ServerEntry, 'id' | 'label'>): string {
  return server.label === server.id ? server.id : `${server.label} (${server.id})`;
}

/** The DOM id of a discovered tool's « Déclarer » button (the focus comes back to it). */
export function declareButtonId(server: string, tool: string): string {
  return `declare-${server}/${tool}`;
}
