/**
 * Pure logic of the draft preview (docs/api.md#policy-as-code-idea-pdp-and-previews): the whole policy document a save of the draft
 * would leave on disk, and the French sentences of what it would have changed among recent calls.
 * No DOM, unit-tested without a browser.
 */
import type { CatalogResponse, PermissionsView } from '../../../schemas/api.js';
import type { PreviewResponse, ReplayChange } from '../../../schemas/policy-as-code.js';
import { compareIds } from '../../../schemas/ids.js';
import type { PolicyDocument } from '../../../schemas/policy.js';
import { visibleText } from './agent-names.js';
import type { PolicyConditions } from '../../../schemas/conditions.js';
import { conditionsToSave, rowsOf, type ConditionRows } from './conditions-model.js';
import { limitsToSave, withLimits, type LimitRows } from './limits-model.js';
import type { PolicyLimits } from '../../../schemas/limits.js';
import { conditionsOf, listsToSave, sameTarget, type TargetKey, type WriteLists } from './model.js';

/** The part of a draft the document depends on. */
export interface DraftLists {
  target: TargetKey;
  allowed: ReadonlySet<string>;
  ask: ReadonlySet<string>;
  /** Absent: the target keeps no condition. */
  conditions?: ConditionRows;
  /** Absent: the target keeps no usage limit. */
  limits?: LimitRows;
}

/**
 * One policy as the document holds it: `askTools` only when something is on ask, `conditions`
 * only when there are some (sorted, so that equal policies give the same text).
 */
function lists(
  allowedTools: readonly string[],
  askTools: readonly string[] | undefined,
  conditions: PolicyConditions,
  limits: Readonly<PolicyLimits> = {},
): WriteLists {
  const written: WriteLists =
    askTools === undefined || askTools.length === 0
      ? { allowedTools: [...allowedTools] }
      : { allowedTools: [...allowedTools], askTools: [...askTools] };
  const sorted = conditionsToSave(rowsOf(conditions), new Set([...allowedTools, ...(askTools ?? [])]));
  const conditioned = Object.keys(sorted).length === 0 ? written : { ...written, conditions: sorted };
  // Limits replay in the preview (docs/api.md#usage-limits): a document without them would count the refusals they made as allowed.
  const limited = withLimits(conditioned, limits);
  return Object.keys(limited.limits).length === 0 ? conditioned : limited;
}

/**
 * The saved document as the view describes it: the custom project default and every override.
 * Names outside the catalog are left out: `/decide` denies them whatever the lists say
 * (`unknown_tool`), so they change no decision and would only add warnings.
 */
export function savedDocument(view: PermissionsView): PolicyDocument {
  const document: PolicyDocument = { version: 1 };
  if (view.projectDefault.mode === 'custom')
    document.projectDefault = lists(
      view.projectDefault.allowedTools,
      view.projectDefault.askTools,
      conditionsOf(view.projectDefault),
      view.projectDefault.limits,
    );
  document.agents = view.agents
    .filter((agent) => agent.mode === 'override')
    .map((agent) => ({ agentId: agent.agentId, policy: lists(agent.allowedTools, agent.askTools, conditionsOf(agent), agent.limits) }));
  return document;
}

/**
 * The document a save of `draft` would leave: the saved one with the draft's target replaced by
 * the lists the save sends ({@link listsToSave}, the same function), as the service's `PUT` of
 * one target does.
 */
export function proposedDocument(catalog: CatalogResponse, view: PermissionsView, draft: DraftLists): PolicyDocument {
  const document = savedDocument(view);
  const saved = listsToSave(catalog, draft.allowed, draft.ask);
  const listed = new Set([...draft.allowed, ...draft.ask]);
  const written = lists(
    saved.allowedTools,
    saved.askTools,
    conditionsToSave(draft.conditions ?? new Map<string, never[]>(), listed),
    limitsToSave(draft.limits ?? new Map<string, never>(), listed),
  );
  if (draft.target.kind === 'default') return { ...document, projectDefault: written };
  const agentId = draft.target.agentId;
  const others = (document.agents ?? []).filter((agent) => !sameTarget({ kind: 'agent', agentId: agent.agentId }, draft.target));
  // The view lists agents by id: the replaced override keeps its place, so an unchanged draft gives the same document.
  const agents = [...others, { agentId, policy: written }].sort((a, b) => compareIds(a.agentId, b.agentId));
  return { ...document, agents };
}

/** How many calls groups a line names before "et N autres". */
export const PREVIEW_TOP = 3;

function calls(count: number): string {
  return count > 1 ? `${count} appels récents` : `${count} appel récent`;
}

/** "QA · idea_memory_write ×12, Git · idea_ticket_create ×3 et 2 autres" (biggest first, as the service sorts them). */
function topCalls(changes: readonly ReplayChange[]): string {
  const shown = changes.slice(0, PREVIEW_TOP).map((change) => `${visibleText(change.requester)} · ${change.tool} ×${change.calls}`);
  const rest = changes.length - shown.length;
  return rest > 0 ? `${shown.join(', ')} et ${rest} autre${rest > 1 ? 's' : ''}` : shown.join(', ');
}

export interface PreviewLine {
  kind: 'refused' | 'allowed' | 'ask' | 'unchanged' | 'unknown';
  text: string;
}

/**
 * The sentences of a preview: refused calls first (the risky change), then newly allowed ones,
 * then those that would ask, then ask → deny; « Aucun appel récent ne change. » when none differs.
 */
export function previewLines(response: Pick<PreviewResponse, 'replay'>): PreviewLine[] {
  const changed = response.replay.changed;
  const sum = (list: readonly ReplayChange[]): number => list.reduce((total, change) => total + change.calls, 0);
  const lines: PreviewLine[] = [];
  const refused = changed.filter((change) => change.before === 'allow' && change.after === 'deny');
  if (refused.length > 0)
    lines.push({ kind: 'refused', text: `Ce changement aurait refusé ${calls(sum(refused))} : ${topCalls(refused)}.` });
  const allowed = changed.filter((change) => change.before !== 'allow' && change.after === 'allow');
  if (allowed.length > 0)
    lines.push({ kind: 'allowed', text: `Ce changement aurait autorisé ${calls(sum(allowed))} : ${topCalls(allowed)}.` });
  const asked = changed.filter((change) => change.before !== 'ask' && change.after === 'ask');
  if (asked.length > 0) {
    lines.push({ kind: 'ask', text: `Ce changement aurait demandé votre accord pour ${calls(sum(asked))} : ${topCalls(asked)}.` });
  }
  const askToDeny = changed.filter((change) => change.before === 'ask' && change.after === 'deny');
  if (askToDeny.length > 0) {
    const count = sum(askToDeny);
    const verb = count > 1 ? 'demandaient votre accord auraient été refusés' : 'demandait votre accord aurait été refusé';
    lines.push({ kind: 'refused', text: `${calls(count)} qui ${verb} : ${topCalls(askToDeny)}.` });
  }
  // A tool's first condition names arguments the ring did not keep for its earlier calls: not guessed.
  const unknown = response.replay.counts.notReplayable ?? 0;
  if (lines.length === 0 && unknown === 0) lines.push({ kind: 'unchanged', text: 'Aucun appel récent ne change.' });
  if (unknown > 0) {
    const verb = unknown > 1 ? 'ne peuvent pas être rejoués' : 'ne peut pas être rejoué';
    lines.push({
      kind: 'unknown',
      text: `${calls(unknown)} ${verb} : ${unknown > 1 ? 'ils ont été gardés' : 'il a été gardé'} sans les arguments que la condition lit.`,
    });
  }
  return lines;
}
