/**
 * Conditions on a tool's arguments (docs/api.md#conditions-on-a-tools-arguments), compiled once per policy into checks a decision
 * runs in a few comparisons. Pure. A check never quotes the value it refused: messages say what is
 * allowed, the value sent may be a secret.
 */
import type { Condition, ToolConditions } from '../../schemas/index.js';
import { normalizeIssueRef } from '../../schemas/requester.js';

/** The argument that names a ticket: compared as a ticket number (`82`, `"82"` and `"#82"` are one ticket). */
export const ISSUE_REF = 'issueRef';

/** Values a refusal message lists at most: the rest are counted. */
const LISTED_VALUES = 10;
/** Characters of one listed value a message shows at most. */
const LISTED_VALUE_LENGTH = 80;

/**
 * What makes a `prefix` itself unusable: the shell's control operators and substitutions (`;` `&` `|`
 * backtick `$(` `>` `<`), line breaks, and any other control character or whitespace than the space and
 * the tab, which a shell could read as a separator where the words here would not.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses.
const UNSAFE_COMMAND = /[;&|`<>\u0000-\u0008\n-\u001f\u007f-\u009f\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]|\$\(/;
/**
 * A word allowed after a prefix: characters no POSIX shell expands, quotes, globs or splits (no `$`,
 * quote, backslash, brace, bracket, `*` `?` `~` `!` `#` or non-ASCII), so bash runs it as written.
 */
const PLAIN_WORD = /^[A-Za-z0-9_\-./:=@%+,]+$/;
/** A `..` path segment, however the tool splits paths and option values (`../x`, `--out=..`, `a:..`). */
const PARENT_SEGMENT = /(?:^|[/=:,@])\.\.(?:$|[/=:,@])/;
const WORD_SEPARATOR = /[ \t]+/;
/** A ticket number as `notIn` can compare it: ASCII digits, no leading zero, no sign, point or inner space. */
const PLAIN_TICKET = /^(?:0|[1-9][0-9]*)$/;

/** One compiled condition: its argument, and whether a call's arguments meet it. */
export interface ArgumentCheck {
  readonly argument: string;
  /** `argument` under {@link foldCase}, to find its other spellings in a call. */
  readonly folded: string;
  /** What is allowed, for a refusal message: "must be one of QA, DevFrontend". */
  readonly allowed: string;
  /** True when the call meets the condition; `value` is undefined when the argument is missing. */
  readonly accepts: (value: unknown, present: boolean) => boolean;
}

/** The compiled conditions of one tool: all must hold. */
export type ToolChecks = readonly ArgumentCheck[];

/** What a call's arguments give against a tool's checks. */
export type ArgumentsVerdict =
  | { readonly kind: 'ok' }
  | { readonly kind: 'refused'; readonly check: ArgumentCheck }
  /** `issueRef` present but neither a string nor a number (docs/api.md#ephemeral-ticket-assistant-policies). */
  | { readonly kind: 'invalid_arguments' };

const OK: ArgumentsVerdict = { kind: 'ok' };
const INVALID: ArgumentsVerdict = { kind: 'invalid_arguments' };

/** Whether a prefix holds a shell control sequence or a separator a shell may read differently. */
export function unsafeCommand(value: string): boolean {
  return UNSAFE_COMMAND.test(value);
}

/**
 * Whether `word`, written after a prefix, means itself to any POSIX shell and to the command: plain
 * characters only, no `..` segment, and an option (`-x`) only after a prefix that ends with `--`.
 */
export function plainArgumentWord(word: string, optionsAllowed: boolean): boolean {
  return PLAIN_WORD.test(word) && !PARENT_SEGMENT.test(word) && (optionsAllowed || !word.startsWith('-'));
}

/** The words of a command: split on runs of spaces and tabs, leading and trailing ones ignored. */
export function wordsOf(value: string): string[] {
  const trimmed = value.replace(/^[ \t]+|[ \t]+$/g, '');
  return trimmed === '' ? [] : trimmed.split(WORD_SEPARATOR);
}

/** Runs `checks` on a call's arguments (undefined: the call sent none). */
export function checkArguments(checks: ToolChecks, args: Readonly<Record<string, unknown>> | undefined): ArgumentsVerdict {
  for (const check of checks) {
    // Own properties only: an argument named `constructor` must not find Object.prototype's.
    const present = args !== undefined && Object.hasOwn(args, check.argument);
    const value = present ? args[check.argument] : undefined;
    if (present && check.argument === ISSUE_REF && typeof value !== 'string' && typeof value !== 'number') return INVALID;
    // JSON.parse rounds 9007199254740993 to …992, while Python or Go read the integer sent.
    if (typeof value === 'number' && !(Math.abs(value) <= Number.MAX_SAFE_INTEGER)) return { kind: 'refused', check };
    if (!check.accepts(value, present)) return { kind: 'refused', check };
  }
  const twin = args === undefined ? undefined : twinOfChecked(checks, args);
  return twin === undefined ? OK : { kind: 'refused', check: twin };
}

/**
 * The check whose argument has another spelling among `args` under case folding (`agentid` beside
 * `agentId`), or undefined: a server may read names without regard to case, as Go's encoding/json does.
 */
function twinOfChecked(checks: ToolChecks, args: Readonly<Record<string, unknown>>): ArgumentCheck | undefined {
  for (const key in args) {
    if (!Object.hasOwn(args, key) || checks.some((check) => check.argument === key)) continue;
    const folded = foldCase(key);
    const twin = checks.find((check) => check.folded === folded);
    if (twin !== undefined) return twin;
  }
  return undefined;
}

/** Unicode case folding as far as a name is concerned: `ſ`, the Kelvin sign `K` and `ß` fold to `s`, `k` and `ss`. */
export function foldCase(name: string): string {
  return name.toUpperCase().toLowerCase();
}

/** Compiles the conditions of one tool, in the order they are written. */
export function compileToolConditions(conditions: ToolConditions): ToolChecks {
  return Object.freeze(Object.entries(conditions).map(([argument, condition]) => compileCondition(argument, condition)));
}

function compileCondition(argument: string, condition: Condition): ArgumentCheck {
  const folded = foldCase(argument);
  if ('absent' in condition) return { argument, folded, allowed: 'must not be given', accepts: (_value, present) => !present };
  if ('prefix' in condition) {
    const prefixes = condition.prefix.map(wordsOf);
    return {
      argument,
      folded,
      allowed: `must be a command starting with one of ${listed(condition.prefix)}, then only words of letters, digits and _ - . / : = @ % + , (no .. segment; options only after --)`,
      accepts: (value) => typeof value === 'string' && startsWithOne(wordsOf(value), prefixes),
    };
  }
  if ('notIn' in condition && argument === ISSUE_REF) {
    // "01", "# 1" or "１" is ticket 1 to a tool that reads it as a number: only a plain ticket number can be told apart,
    // and a listed "#082" refuses ticket 82 too.
    const refused = new Set(condition.notIn.map((value) => ticketOf(value).replace(/^0+(?=[0-9])/, '')));
    return {
      argument,
      folded,
      allowed: `must be a ticket number (e.g. "#82") and none of ${listed(condition.notIn)}`,
      accepts: (value) => {
        if (typeof value !== 'string' && typeof value !== 'number') return false;
        const ticket = ticketOf(value);
        return PLAIN_TICKET.test(ticket) && !refused.has(ticket);
      },
    };
  }
  const isIn = 'in' in condition;
  const values = isIn ? condition.in : condition.notIn;
  const member = argument === ISSUE_REF ? ticketMembership(values) : exactMembership(values);
  return isIn
    ? { argument, folded, allowed: `must be one of ${listed(values)}`, accepts: member }
    : {
        argument,
        folded,
        allowed: `must be given and be none of ${listed(values)}`,
        accepts: (value, present) => present && (typeof value === 'string' || typeof value === 'number') && !member(value),
      };
}

/** Equal by type and value: the string "1" is not the number 1. */
function exactMembership(values: readonly (string | number)[]): (value: unknown) => boolean {
  const strings = new Set(values.filter((value) => typeof value === 'string'));
  const numbers = new Set(values.filter((value) => typeof value === 'number'));
  return (value) => (typeof value === 'string' ? strings.has(value) : typeof value === 'number' && numbers.has(value));
}

/** Equal as ticket numbers: `82`, `"82"` and `"#82"` are the same ticket. */
function ticketMembership(values: readonly (string | number)[]): (value: unknown) => boolean {
  const tickets = new Set(values.map(ticketOf));
  return (value) => (typeof value === 'string' || typeof value === 'number') && tickets.has(ticketOf(value));
}

/** The ticket a reference names, `#` and surrounding whitespace removed. */
export function ticketOf(value: string | number): string {
  return normalizeIssueRef(String(value));
}

/** True when `words` begin with all the words of one prefix and every word after it is plain. */
function startsWithOne(words: readonly string[], prefixes: readonly (readonly string[])[]): boolean {
  return prefixes.some((prefix) => {
    if (prefix.length === 0 || prefix.length > words.length || !prefix.every((word, index) => words[index] === word)) return false;
    const optionsAllowed = prefix[prefix.length - 1] === '--';
    for (let index = prefix.length; index < words.length; index += 1) {
      if (!plainArgumentWord(words[index] ?? '', optionsAllowed)) return false;
    }
    return true;
  });
}

/** The values a message lists: the first {@link LISTED_VALUES}, each cut, then how many more. */
function listed(values: readonly (string | number)[]): string {
  const shown = values
    .slice(0, LISTED_VALUES)
    .map((value) =>
      typeof value === 'string' && value.length > LISTED_VALUE_LENGTH ? `${value.slice(0, LISTED_VALUE_LENGTH)}…` : String(value),
    );
  const more = values.length - shown.length;
  return `${shown.join(', ')}${more > 0 ? ` (and ${more} more)` : ''}`;
}

/** Why a condition as written can never be met, or undefined: checked when a policy is validated. */
export function conditionProblem(condition: Condition): string | undefined {
  if ('prefix' in condition) {
    const bad = condition.prefix.find((prefix) => unsafeCommand(prefix) || wordsOf(prefix).length === 0);
    if (bad !== undefined) return 'a prefix must hold words and no ; & | ` $( > < line break or control character (it could never match)';
  }
  const values = 'in' in condition ? condition.in : 'notIn' in condition ? condition.notIn : [];
  if (values.some((value) => typeof value === 'number' && !(Math.abs(value) <= Number.MAX_SAFE_INTEGER))) {
    return 'a number beyond ±2^53 cannot be compared exactly (write it as a string)';
  }
  return undefined;
}
