/**
 * What the recent-decisions ring keeps of a call's arguments (docs/api.md#conditions-on-a-tools-arguments): for a tool a policy
 * of the project conditions, the values of its conditioned arguments (and `issueRef`), strings cut
 * at {@link MAX_KEPT_VALUE_LENGTH} characters, so that a preview can decide the call again; nothing
 * else. Kept as one interned JSON string in the ring's name table, so its records stay 32 bytes.
 */

/** Characters of a kept string value: enough for a command line a prefix names, bounded on disk. */
export const MAX_KEPT_VALUE_LENGTH = 120;

/** A kept value: a string (cut), a number, or `null` for a value of another type (every condition refuses it). */
export type KeptValue = string | number | null;

export interface CallDetails {
  /** The argument names whose values were kept, present or not. */
  readonly kept: readonly string[];
  /** The values of those present in the call. */
  readonly values: Readonly<Record<string, KeptValue>>;
  /** With `argument_not_allowed`: the argument that refused. */
  readonly refused?: string | undefined;
}

/** The details of a call, keeping `names` only. */
export function callDetailsOf(
  args: Readonly<Record<string, unknown>> | undefined,
  names: readonly string[],
  refused: string | undefined,
): CallDetails {
  const values: Record<string, KeptValue> = {};
  if (args !== undefined) {
    for (const name of names) {
      if (!Object.hasOwn(args, name)) continue;
      const value = args[name];
      values[name] = typeof value === 'string' ? value.slice(0, MAX_KEPT_VALUE_LENGTH) : typeof value === 'number' ? value : null;
    }
  }
  return refused === undefined ? { kept: names, values } : { kept: names, values, refused };
}

/**
 * The ring's text for the details. A plain issueRef is kept as it was before conditions existed (the
 * text itself); details are JSON, which starts with `{`, so an issueRef that starts with `{` is kept as details too.
 */
export function encodeDetails(details: CallDetails): string {
  return JSON.stringify(
    details.refused === undefined ? { k: details.kept, v: details.values } : { k: details.kept, v: details.values, r: details.refused },
  );
}

/** The details a ring's text holds (a plain issueRef: `issueRef` kept with that value), or undefined when it is not one of ours. */
export function decodeDetails(text: string): CallDetails | undefined {
  if (!text.startsWith('{')) return { kept: ['issueRef'], values: { issueRef: text } };
  try {
    const parsed = JSON.parse(text) as { k?: unknown; v?: unknown; r?: unknown };
    const kept: unknown = parsed.k;
    if (!isStringArray(kept)) return undefined;
    if (typeof parsed.v !== 'object' || parsed.v === null || Array.isArray(parsed.v)) return undefined;
    const values: Record<string, KeptValue> = {};
    for (const [name, value] of Object.entries(parsed.v as Record<string, unknown>)) {
      if (typeof value === 'string' || typeof value === 'number' || value === null) values[name] = value;
    }
    return { kept, values, ...(typeof parsed.r === 'string' ? { refused: parsed.r } : {}) };
  } catch {
    return undefined;
  }
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
