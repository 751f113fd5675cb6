/**
 * Conditions on a tool's arguments (docs/api.md#conditions-on-a-tools-arguments), pure part: the French text a row shows, the
 * editable rows of the inline editor (possibly incomplete), their problems, and the conditions a
 * save sends. No DOM, unit-tested without a browser.
 */
import {
  ARGUMENT_NAME_REGEX,
  MAX_CONDITION_VALUES,
  MAX_CONDITION_VALUE_LENGTH,
  type Condition,
  type ConditionOperator,
  type PolicyConditions,
  type ToolConditions,
} from '../../../schemas/conditions.js';

export type ConditionValue = string | number;

/** One condition as the editor holds it: incomplete while the user composes it. */
export interface ConditionRow {
  argument: string;
  operator: ConditionOperator;
  values: ConditionValue[];
}

/** The conditions of a target being edited, by tool (rows in the user's order). */
export type ConditionRows = Map<string, ConditionRow[]>;

/** The operators in the order the editor offers them, with their French labels. */
export const OPERATORS: readonly { id: ConditionOperator; label: string }[] = [
  { id: 'in', label: 'est l\u2019une des valeurs' },
  { id: 'notIn', label: 'n\u2019est aucune des valeurs' },
  { id: 'prefix', label: 'commence par' },
  { id: 'absent', label: 'est absent' },
];

export function operatorLabel(operator: ConditionOperator): string {
  return OPERATORS.find((entry) => entry.id === operator)?.label ?? operator;
}

/** What the service refuses in a `prefix`: such a value never matches, so a prefix cannot be chained. */
const SHELL_CONTROL = /[;&|`<>\n\r]|\$\(/;

export function operatorOf(condition: Condition): ConditionOperator {
  if ('in' in condition) return 'in';
  if ('notIn' in condition) return 'notIn';
  if ('prefix' in condition) return 'prefix';
  return 'absent';
}

export function valuesOf(condition: Condition): ConditionValue[] {
  if ('in' in condition) return [...condition.in];
  if ('notIn' in condition) return [...condition.notIn];
  if ('prefix' in condition) return [...condition.prefix];
  return [];
}

/** The rows of a policy's conditions (a copy: the editor changes them freely). */
export function rowsOf(conditions: PolicyConditions | undefined): ConditionRows {
  const rows: ConditionRows = new Map();
  for (const [tool, byArgument] of Object.entries(conditions ?? {})) {
    rows.set(
      tool,
      Object.entries(byArgument).map(([argument, condition]) => ({
        argument,
        operator: operatorOf(condition),
        values: valuesOf(condition),
      })),
    );
  }
  return rows;
}

export function copyRows(rows: ConditionRows): ConditionRows {
  return new Map([...rows].map(([tool, list]) => [tool, list.map((row) => ({ ...row, values: [...row.values] }))]));
}

/** The condition a complete row stands for; null while it is incomplete. */
export function conditionOf(row: ConditionRow): Condition | null {
  if (row.operator === 'absent') return { absent: true };
  if (row.values.length === 0 || row.values.length > MAX_CONDITION_VALUES) return null;
  if (row.operator === 'prefix') {
    const strings = row.values.filter((value): value is string => typeof value === 'string');
    return strings.length === row.values.length ? { prefix: strings } : null;
  }
  return row.operator === 'in' ? { in: [...row.values] } : { notIn: [...row.values] };
}

/** Why a row cannot be saved, in French, or null. `rows` are the other rows of the same tool. */
export function rowProblem(row: ConditionRow, rows: readonly ConditionRow[]): string | null {
  if (row.argument === '') return 'Choisissez un argument.';
  if (!ARGUMENT_NAME_REGEX.test(row.argument))
    return 'Nom d\u2019argument invalide : lettres, chiffres et _ (64 au plus), sans chiffre en tête.';
  if (rows.filter((other) => other.argument === row.argument).length > 1) return `L\u2019argument ${row.argument} a déjà une condition.`;
  if (row.operator === 'absent') return null;
  if (row.values.length === 0) return 'Ajoutez au moins une valeur (tapez-la puis Entrée).';
  if (row.operator === 'prefix' && row.values.some((value) => typeof value !== 'string'))
    return '« commence par » n\u2019accepte que du texte.';
  return null;
}

/** The first problem among the rows of the listed tools, said with its tool; null when all can be saved. */
export function firstProblem(rows: ConditionRows, listed: ReadonlySet<string>): string | null {
  for (const [tool, list] of rows) {
    if (!listed.has(tool)) continue;
    for (const row of list) {
      const problem = rowProblem(row, list);
      if (problem !== null) return `Condition incomplète sur ${tool}${row.argument === '' ? '' : ` (${row.argument})`} : ${problem}`;
    }
  }
  return null;
}

/**
 * The conditions a save sends: complete rows of tools still listed (the API refuses a condition
 * on a tool outside allowedTools/askTools), tools and arguments sorted so two equal sets compare equal.
 */
export function conditionsToSave(rows: ConditionRows, listed: ReadonlySet<string>): PolicyConditions {
  const result: PolicyConditions = {};
  for (const tool of [...rows.keys()].sort()) {
    if (!listed.has(tool)) continue;
    const list = rows.get(tool) ?? [];
    const byArgument: ToolConditions = {};
    for (const row of [...list].sort((a, b) => (a.argument < b.argument ? -1 : a.argument > b.argument ? 1 : 0))) {
      const condition = conditionOf(row);
      if (condition !== null && rowProblem(row, list) === null) byArgument[row.argument] = condition;
    }
    if (Object.keys(byArgument).length > 0) result[tool] = byArgument;
  }
  return result;
}

/** The same conditions, whatever the order of tools and arguments. */
export function sameConditions(a: PolicyConditions | undefined, b: PolicyConditions | undefined): boolean {
  const sorted = (conditions: PolicyConditions | undefined): string => {
    const all = new Set(Object.keys(conditions ?? {}));
    return JSON.stringify(conditionsToSave(rowsOf(conditions), all));
  };
  return sorted(a) === sorted(b);
}

/** Rows that are not exactly the saved conditions: an incomplete row counts as a change. */
export function rowsDiffer(rows: ConditionRows, saved: PolicyConditions | undefined, listed: ReadonlySet<string>): boolean {
  if (firstProblem(rows, listed) !== null) return true;
  const savedListed = conditionsToSave(rowsOf(saved), listed);
  return JSON.stringify(conditionsToSave(rows, listed)) !== JSON.stringify(savedListed);
}

/** A ticket as IdeA writes it: `82`, `"82"` and `"#82"` are the same ticket, shown `#82`. */
function ticketText(value: ConditionValue): string {
  const text = String(value).trim();
  return /^#?\d+$/.test(text) ? `#${text.replace(/^#/, '')}` : text;
}

/** One value as a chip or a sentence shows it: a string that reads like a number is quoted (it is not the number). */
export function valueText(argument: string, value: ConditionValue): string {
  if (argument === 'issueRef') return ticketText(value);
  if (typeof value === 'number') return String(value);
  if (value === '' || value.trim() !== value || /^-?\d+(\.\d+)?$/.test(value)) return JSON.stringify(value);
  return value;
}

function listText(argument: string, values: readonly ConditionValue[], or = false): string {
  const texts = values.map((value) => valueText(argument, value));
  if (!or || texts.length < 2) return texts.join(', ');
  return `${texts.slice(0, -1).join(', ')} ou ${texts[texts.length - 1] ?? ''}`;
}

/**
 * One condition in French, as a row says it: « seulement pour les agents QA, DevFrontend »,
 * « seulement les commandes npm test, npm run lint », « seulement les tickets #82, #90 »…
 */
export function conditionText(argument: string, condition: Condition): string {
  const operator = operatorOf(condition);
  if (operator === 'absent') return `seulement sans l\u2019argument ${argument}`;
  const values = valuesOf(condition);
  const list = listText(argument, values);
  const one = values.length === 1;
  if (argument === 'agentId' && operator !== 'prefix') {
    const agents = one ? `l\u2019agent ${list}` : `les agents ${list}`;
    return operator === 'in' ? `seulement pour ${agents}` : `sauf pour ${agents}`;
  }
  if (argument === 'issueRef' && operator !== 'prefix') {
    const tickets = one ? `le ticket ${list}` : `les tickets ${list}`;
    return operator === 'in' ? `seulement ${tickets}` : `sauf ${tickets}`;
  }
  if (argument === 'command') {
    // A prefix allows a family of commands ("npm test -- --run x"): always plural.
    if (operator === 'prefix') return `seulement les commandes ${list}`;
    const exact = one ? `la commande exacte ${list}` : `les commandes exactes ${list}`;
    return operator === 'in' ? `seulement ${exact}` : `sauf ${exact}`;
  }
  const orList = listText(argument, values, true);
  if (operator === 'prefix') return `seulement si ${argument} commence par ${orList}`;
  return operator === 'in' ? `seulement si ${argument} vaut ${orList}` : `sauf si ${argument} vaut ${orList}`;
}

/** All conditions of a tool, joined by « · » (all must hold), or null when it has none. */
export function toolConditionsText(conditions: ToolConditions | undefined): string | null {
  const entries = Object.entries(conditions ?? {});
  if (entries.length === 0) return null;
  return entries.map(([argument, condition]) => conditionText(argument, condition)).join(' · ');
}

/** The outcome of typing a value and pressing Enter: the value to add, or why it is refused. */
export type TypedValue = { value: ConditionValue } | { problem: string };

/**
 * A typed value: trimmed (a chip cannot show surrounding spaces), a ticket written `#82`, never
 * twice, never a prefix holding a shell control sequence (it could never match).
 */
export function typedValue(row: ConditionRow, text: string): TypedValue {
  const trimmed = text.trim();
  if (trimmed === '') return { problem: 'Tapez une valeur avant Entrée.' };
  if (trimmed.length > MAX_CONDITION_VALUE_LENGTH)
    return { problem: `Valeur trop longue (${MAX_CONDITION_VALUE_LENGTH} caractères au plus).` };
  if (row.values.length >= MAX_CONDITION_VALUES) return { problem: `${MAX_CONDITION_VALUES} valeurs au plus par condition.` };
  let value: ConditionValue = trimmed;
  if (row.argument === 'issueRef' && row.operator !== 'prefix') {
    if (!/^#?\d+$/.test(trimmed)) return { problem: 'Un ticket s\u2019écrit #82 ou 82.' };
    value = ticketText(trimmed);
  }
  if (row.operator === 'prefix' && SHELL_CONTROL.test(trimmed))
    return { problem: 'Un préfixe ne peut pas contenir ; & | ` $( > < : il ne correspondrait à aucun appel.' };
  const shown = valueText(row.argument, value);
  if (row.values.some((existing) => valueText(row.argument, existing) === shown)) return { problem: `${shown} est déjà dans la liste.` };
  return { value };
}

/** A warning (not an error) when the catalog does not know the argument for this tool. */
export function unknownArgumentWarning(argument: string, known: readonly string[]): string | null {
  if (argument === '' || known.includes(argument) || !ARGUMENT_NAME_REGEX.test(argument)) return null;
  return `Argument inconnu du catalogue pour ce tool : un appel qui ne le porte pas sera refusé.`;
}

/** The argument a new row starts with: the first known one without a condition yet. */
export function nextArgument(known: readonly string[], rows: readonly ConditionRow[]): string {
  return known.find((argument) => !rows.some((row) => row.argument === argument)) ?? '';
}

/** The operator a new row starts with: `prefix` for a command, `in` otherwise. */
export function defaultOperator(argument: string): ConditionOperator {
  return argument === 'command' ? 'prefix' : 'in';
}

/** « 1 condition », « 2 conditions » (the « Conditions » button's count). */
export function conditionCount(count: number): string {
  return count > 1 ? `${count} conditions` : `${count} condition`;
}

/** The DOM ids of a tool's « Conditions » button and editor (the focus follows them across re-renders). */
export function conditionIds(tool: string) {
  const base = `cond-${tool}`;
  return {
    toggle: `${base}-toggle`,
    editor: `${base}-editor`,
    title: `${base}-title`,
    add: `${base}-add`,
    close: `${base}-close`,
    datalist: `${base}-arguments`,
    argument: (index: number) => `${base}-${index}-argument`,
    operator: (index: number) => `${base}-${index}-operator`,
    value: (index: number) => `${base}-${index}-value`,
    chip: (index: number, valueIndex: number) => `${base}-${index}-chip-${valueIndex}`,
    remove: (index: number) => `${base}-${index}-remove`,
    problem: (index: number) => `${base}-${index}-problem`,
    hint: (index: number) => `${base}-${index}-hint`,
  };
}
