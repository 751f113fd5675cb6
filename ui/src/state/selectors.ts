/**
 * What the views and the controllers derive from the state: the saved and shown lists of the
 * selected target, whether it can be edited, names of targets. Pure functions of the state.
 */
import { overrideRefusal as idRefusal } from '../model/agent-names.js';
import type { Grant } from '../../../schemas/approvals.js';
import { rowsOf, type ConditionRows } from '../model/conditions-model.js';
import { findAgent, groupOpenByDefault, sameTarget, savedTarget, targetId, type SavedTarget, type TargetKey } from '../model/model.js';
import type { PanelState } from './state.js';

/** The saved state of the selected target (undefined while loading or if it vanished). */
export function saved(state: PanelState): SavedTarget | undefined {
  return state.view === null ? undefined : savedTarget(state.view, state.target);
}

/** The allowlist the editor shows: the draft if there is one, else the saved state. */
export function shownAllowed(state: PanelState): Set<string> {
  const draft = state.draft;
  if (draft !== null && sameTarget(draft.target, state.target)) return draft.allowed;
  return saved(state)?.allowed ?? new Set();
}

/** The tools on ask the editor shows: the draft's if there is one, else the saved state's. */
export function shownAsk(state: PanelState): Set<string> {
  const draft = state.draft;
  if (draft !== null && sameTarget(draft.target, state.target)) return draft.ask;
  return saved(state)?.ask ?? new Set();
}

/** The conditions the editor shows, by tool: the draft's rows if there is one, else the saved ones. */
export function shownConditions(state: PanelState): ConditionRows {
  const draft = state.draft;
  if (draft !== null && sameTarget(draft.target, state.target)) return draft.conditions;
  return rowsOf(saved(state)?.conditions);
}

/** The tools the shown policy lists (allowed or on ask): only they may carry conditions. */
export function shownListed(state: PanelState): Set<string> {
  return new Set([...shownAllowed(state), ...shownAsk(state)]);
}

/** The tool whose « Conditions » editor is open for the selected target, or null. */
export function openConditions(state: PanelState): string | null {
  const open = state.conditionsOpen;
  return open !== null && open.target === targetId(state.target) ? open.tool : null;
}

/** Whether the shown target is (or is about to be) its own allowlist rather than inherited. */
export function overriding(state: PanelState): boolean {
  const draft = state.draft;
  // A draft of an agent is always an override, even when its saved override was deleted elsewhere.
  const drafted = draft !== null && draft.target.kind === 'agent' && sameTarget(draft.target, state.target);
  return (saved(state)?.overriding ?? false) || drafted;
}

/** The policy can be changed now: admin token checked, a valid file, and data that is not stale. */
export function canWrite(state: PanelState): boolean {
  const { token, role, view, loadError } = state;
  return token !== null && role === 'admin' && view !== null && view.status === 'ok' && loadError === null;
}

/** Why the selected agent cannot get an override (a misleading id), or null. */
export function overrideRefusal(state: PanelState): string | null {
  return state.target.kind === 'agent' ? idRefusal(state.target.agentId) : null;
}

/** Checkboxes appear only here: an agent that inherits is read-only until "Créer un override". */
export function editable(state: PanelState): boolean {
  if (!canWrite(state) || saved(state) === undefined) return false;
  return state.target.kind === 'default' || overriding(state);
}

export function dirty(state: PanelState): boolean {
  return state.draft !== null;
}

/** The data shown is from an earlier load that the last reload could not refresh. */
export function stale(state: PanelState): boolean {
  return state.view !== null && state.loadError !== null;
}

export function groupOpen(state: PanelState, groupId: string, access: 'read' | 'write'): boolean {
  return state.openGroups.get(`${targetId(state.target)}|${groupId}`) ?? groupOpenByDefault(state.target, access);
}

export function defaultAllowed(state: PanelState): Set<string> {
  return new Set(state.view?.projectDefault.allowedTools ?? []);
}

export function defaultAsk(state: PanelState): Set<string> {
  return new Set(state.view?.projectDefault.askTools ?? []);
}

export function targetName(state: PanelState, target: TargetKey): string {
  if (target.kind === 'default') return 'Défaut projet';
  const agent = state.view === null ? undefined : findAgent(state.view, target.agentId);
  return agent?.name ?? target.agentId;
}

/** An agent's display name from its id. */
export function agentName(state: PanelState, agentId: string): string {
  return targetName(state, { kind: 'agent', agentId });
}

/** The DOM id of a target's button in the target column. */
export function targetButtonId(target: TargetKey): string {
  return target.kind === 'default' ? 'target-default' : `target-agent-${encodeURIComponent(target.agentId)}`;
}

/** Answering requests and revoking grants need the admin token (the decide token only reads). */
export function canAnswer(state: PanelState): boolean {
  return state.token !== null && state.role === 'admin';
}

/** The live grant that lets `agentId` call `tool`, if any. */
export function grantFor(state: PanelState, agentId: string, tool: string, now: number = Date.now()): Grant | undefined {
  return state.requests.grants.find(
    (grant) => grant.requester === agentId && grant.tools.includes(tool) && Date.parse(grant.expiresAt) > now,
  );
}

/** The tools a live grant lets the selected agent call although its policy does not allow them. */
export function grantedTools(state: PanelState): Set<string> {
  const target = state.target;
  const granted = new Set<string>();
  if (target.kind !== 'agent') return granted;
  const allowed = shownAllowed(state);
  for (const tool of state.catalog?.tools ?? []) {
    if (!allowed.has(tool.name) && grantFor(state, target.agentId, tool.name) !== undefined) granted.add(tool.name);
  }
  return granted;
}

/** "Modifications non enregistrées pour « QA ». Les abandonner ?" */
export function abandonMessage(state: PanelState): string {
  return `Modifications non enregistrées pour « ${targetName(state, state.draft?.target ?? state.target)} ». Les abandonner ?`;
}

/** The item that holds the Tab stop of a group's toolbar (0, the group button, when not editable). */
export function toolbarStop(state: PanelState, groupId: string): number {
  return editable(state) ? (state.toolbarFocus.get(groupId) ?? 0) : 0;
}
