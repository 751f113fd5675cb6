/**
 * Usage limits on a tool row (docs/api.md#usage-limits), pure part: the French text a limited row
 * says, « au plus 20 appels par heure », the editable form of a limit (possibly invalid while the
 * user types), its problems in French, the limits a save sends, and the raised limit « Relever la
 * limite » proposes. No DOM, unit-tested without a browser.
 */
import { MAX_LIMIT_CALLS, windowSeconds, type Limit, type PolicyLimits } from '../../../schemas/limits.js';
import type { PermissionsView } from '../../../schemas/api.js';
import type { TargetKey } from './model.js';

const UNITS = { s: ['seconde', 'secondes'], m: ['minute', 'minutes'], h: ['heure', 'heures'], d: ['jour', 'jours'] } as const;

export type LimitUnit = keyof typeof UNITS;

/** The units the editor offers, in order, with their French names. */
export const LIMIT_UNITS: readonly { id: LimitUnit; label: string }[] = [
  { id: 's', label: 'secondes' },
  { id: 'm', label: 'minutes' },
  { id: 'h', label: 'heures' },
  { id: 'd', label: 'jours' },
];

/** « par heure », « par 10 minutes », « par jour »: the window of a limit in French. */
export function perText(per: string): string {
  const count = Number(per.slice(0, -1));
  const letter = per.at(-1);
  const unit = letter === 'm' || letter === 'h' || letter === 'd' ? UNITS[letter] : UNITS.s;
  return count === 1 ? `par ${unit[0]}` : `par ${count} ${unit[1]}`;
}

/** « au plus 20 appels par heure » (« au plus 1 appel par jour »). */
export function limitText(limit: Limit): string {
  return `au plus ${limit.max} appel${limit.max === 1 ? '' : 's'} ${perText(limit.per)}`;
}

/** The saved limits of the selected target (effective, for an agent that inherits); {} without any. */
export function savedLimits(view: PermissionsView | null, target: TargetKey): Readonly<PolicyLimits> {
  if (view === null) return {};
  if (target.kind === 'default') return view.projectDefault.limits ?? {};
  return view.agents.find((agent) => agent.agentId === target.agentId)?.limits ?? {};
}

/** One tool's limit as the editor holds it: the texts typed (a row may be invalid while typed). */
export interface LimitRow {
  max: string;
  count: string;
  unit: LimitUnit;
}

/** The limits of a target being edited, by tool. */
export type LimitRows = Map<string, LimitRow>;

/** The row of a valid limit: `"10m"` is count 10, unit m. */
export function rowOfLimit(limit: Limit): LimitRow {
  const letter = limit.per.at(-1);
  const unit: LimitUnit = letter === 'm' || letter === 'h' || letter === 'd' ? letter : 's';
  return { max: String(limit.max), count: limit.per.slice(0, -1), unit };
}

export function limitRowsOf(limits: Readonly<PolicyLimits> | undefined): LimitRows {
  return new Map(Object.entries(limits ?? {}).map(([tool, limit]) => [tool, rowOfLimit(limit)]));
}

export function copyLimitRows(rows: LimitRows): LimitRows {
  return new Map([...rows].map(([tool, row]) => [tool, { ...row }]));
}

/** A whole number typed in a field (spaces around and thin spaces of « 1 000 » allowed), else NaN. */
function wholeNumber(text: string): number {
  const compact = text.replace(/[\s\u202f\u00a0]/g, '');
  return /^\d{1,7}$/.test(compact) ? Number(compact) : Number.NaN;
}

/** « 100 000 », as French writes it (a narrow no-break space between thousands). */
export function frenchNumber(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, '\u202f');
}

/** Why a row cannot be saved, in French (which field first), or null. */
export function limitRowProblem(row: LimitRow): { field: 'max' | 'count'; text: string } | null {
  const max = wholeNumber(row.max);
  if (row.max.trim() === '')
    return { field: 'max', text: `Indiquez le nombre d\u2019appels (un entier de 1 à ${frenchNumber(MAX_LIMIT_CALLS)}).` };
  if (!Number.isInteger(max) || max < 1 || max > MAX_LIMIT_CALLS)
    return { field: 'max', text: `Nombre d\u2019appels : un entier de 1 à ${frenchNumber(MAX_LIMIT_CALLS)}.` };
  const count = wholeNumber(row.count);
  if (row.count.trim() === '') return { field: 'count', text: 'Indiquez la durée de la fenêtre (un entier à partir de 1).' };
  if (!Number.isInteger(count) || count < 1) return { field: 'count', text: 'Durée de la fenêtre : un entier à partir de 1.' };
  if (windowSeconds(`${count}${row.unit}`) === undefined) return { field: 'count', text: 'Fenêtre trop longue : 7 jours au plus.' };
  return null;
}

/** The limit a valid row stands for; null while it is invalid. */
export function limitOfRow(row: LimitRow): Limit | null {
  if (limitRowProblem(row) !== null) return null;
  return { max: wholeNumber(row.max), per: `${wholeNumber(row.count)}${row.unit}` };
}

/** The first problem among the limits of the listed tools, said with its tool; null when all can be saved. */
export function firstLimitProblem(rows: LimitRows, listed: ReadonlySet<string>): string | null {
  for (const [tool, row] of rows) {
    if (!listed.has(tool)) continue;
    const problem = limitRowProblem(row);
    if (problem !== null) return `Limite invalide sur ${tool} : ${problem.text}`;
  }
  return null;
}

/**
 * The limits a save sends: valid rows of tools still listed (the API refuses a limit on a tool
 * outside allowedTools/askTools), sorted by tool so two equal sets compare equal.
 */
export function limitsToSave(rows: LimitRows, listed: ReadonlySet<string>): PolicyLimits {
  const result: PolicyLimits = {};
  for (const tool of [...rows.keys()].sort()) {
    const row = rows.get(tool);
    const limit = row === undefined || !listed.has(tool) ? null : limitOfRow(row);
    if (limit !== null) result[tool] = limit;
  }
  return result;
}

/** The same limits on the listed tools, whatever the order. */
export function sameLimits(
  a: Readonly<PolicyLimits> | undefined,
  b: Readonly<PolicyLimits> | undefined,
  listed?: ReadonlySet<string>,
): boolean {
  const all = listed ?? new Set([...Object.keys(a ?? {}), ...Object.keys(b ?? {})]);
  return JSON.stringify(limitsToSave(limitRowsOf(a), all)) === JSON.stringify(limitsToSave(limitRowsOf(b), all));
}

/** Rows that are not exactly the saved limits of the listed tools: an invalid row counts as a change. */
export function limitsDiffer(rows: LimitRows, saved: Readonly<PolicyLimits> | undefined, listed: ReadonlySet<string>): boolean {
  if (firstLimitProblem(rows, listed) !== null) return true;
  return JSON.stringify(limitsToSave(rows, listed)) !== JSON.stringify(limitsToSave(limitRowsOf(saved), listed));
}

/** `lists` with `limits`: those of the tools the lists name (the API refuses the others). */
export function withLimits<T extends { allowedTools: string[]; askTools?: string[] }>(
  lists: T,
  limits: Readonly<PolicyLimits>,
): T & { limits: PolicyLimits } {
  const listed = new Set([...lists.allowedTools, ...(lists.askTools ?? [])]);
  return { ...lists, limits: limitsToSave(limitRowsOf(limits), listed) };
}

/** What a new limit starts at: the example of the docs, 20 calls per hour. */
export const NEW_LIMIT: LimitRow = { max: '20', count: '1', unit: 'h' };

/**
 * The limit « Relever la limite » proposes: twice the calls in the same window (at least one
 * more, at most 100,000); null when the limit is already at 100,000.
 */
export function raisedLimit(limit: Limit): Limit | null {
  if (limit.max >= MAX_LIMIT_CALLS) return null;
  return { max: Math.min(MAX_LIMIT_CALLS, Math.max(limit.max + 1, limit.max * 2)), per: limit.per };
}

/** The French of the service's `invalid_limits` problems (`details.problems = [{ tool, message }]`). */
export function limitProblemsText(details: Record<string, unknown> | undefined): string {
  const problems = Array.isArray(details?.problems) ? (details.problems as unknown[]) : [];
  const parts = problems.slice(0, 5).map((problem) => {
    const { tool, message } = (typeof problem === 'object' && problem !== null ? problem : {}) as { tool?: unknown; message?: unknown };
    const text = typeof message === 'string' ? message : '';
    const why = text.includes('neither allowedTools nor askTools')
      ? 'ce tool n\u2019est ni autorisé ni sur demande'
      : /\bmax expects\b/.test(text)
        ? `nombre d\u2019appels attendu : un entier de 1 à ${frenchNumber(MAX_LIMIT_CALLS)}`
        : /\bper expects\b/.test(text)
          ? 'fenêtre attendue : de 1 seconde à 7 jours (par exemple 1h)'
          : 'limite mal formée';
    return `${typeof tool === 'string' ? tool : '?'} : ${why}`;
  });
  return parts.length === 0 ? '' : ` (${parts.join(' ; ')})`;
}

/** The French of a schema refusal (`invalid_request`) that points into `limits` (`/limits/<tool>/max`). */
export function limitRequestText(details: Record<string, unknown> | undefined): string {
  const errors = Array.isArray(details?.errors) ? (details.errors as unknown[]) : [];
  const parts: string[] = [];
  for (const error of errors) {
    const path = (typeof error === 'object' && error !== null ? (error as { path?: unknown }).path : undefined) ?? '';
    const match = typeof path === 'string' ? /^\/limits\/([^/]+)(?:\/(max|per))?$/.exec(path) : null;
    if (match === null) continue;
    const tool = (match[1] ?? '').replace(/~1/g, '/').replace(/~0/g, '~');
    const field = match[2];
    const why =
      field === 'max'
        ? `nombre d\u2019appels attendu : un entier de 1 à ${frenchNumber(MAX_LIMIT_CALLS)}`
        : field === 'per'
          ? 'fenêtre attendue : un entier suivi de s, m, h ou d'
          : 'limite mal formée';
    const part = `limite de ${tool} : ${why}`;
    if (!parts.includes(part)) parts.push(part);
  }
  return parts.length === 0 ? '' : ` (${parts.join(' ; ')})`;
}

/** The DOM ids of a tool's limit fields (the focus follows them across re-renders). */
export function limitIds(tool: string) {
  const base = `limit-${tool}`;
  return {
    section: `${base}-section`,
    title: `${base}-title`,
    add: `${base}-add`,
    max: `${base}-max`,
    count: `${base}-count`,
    unit: `${base}-unit`,
    summary: `${base}-summary`,
    problem: `${base}-problem`,
    remove: `${base}-remove`,
    /** The line under the row: « au plus 20 appels par heure ». */
    line: `limit-${tool}`,
  };
}
