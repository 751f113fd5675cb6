/**
 * Usage limits (docs/api.md#usage-limits): a policy may cap how often an agent calls a tool it allows
 * or asks for, `max` calls in any sliding window of `per`.
 */
import { Type, type Static } from '@sinclair/typebox';

/** The largest `max`: 100,000 calls fit a window of 7 days at one every 6 s. */
export const MAX_LIMIT_CALLS = 100_000;
/** The longest window: 7 days; the shortest: 1 second. */
export const MAX_LIMIT_WINDOW_SECONDS = 7 * 86_400;
/** `<n>s`, `<n>m`, `<n>h` or `<n>d`, n without a leading zero; the range is checked apart (1 s to 7 d). */
export const LIMIT_PER_PATTERN = '^[1-9][0-9]{0,6}[smhd]$';
const PER_REGEX = new RegExp(LIMIT_PER_PATTERN);

export const LimitSchema = Type.Object(
  {
    max: Type.Integer({ minimum: 1, maximum: MAX_LIMIT_CALLS, description: 'Calls allowed in any window of `per` (1 to 100,000).' }),
    per: Type.String({ pattern: LIMIT_PER_PATTERN, description: 'The sliding window: <n>s, <n>m, <n>h or <n>d, from 1s to 7d.' }),
  },
  { additionalProperties: false },
);
export type Limit = Static<typeof LimitSchema>;

export const PolicyLimitsSchema = Type.Record(Type.String({ maxLength: 128 }), LimitSchema, {
  description: 'Usage limits by tool name; each tool must be in the same policy’s allowedTools or askTools.',
});
export type PolicyLimits = Static<typeof PolicyLimitsSchema>;

const UNIT_SECONDS = { s: 1, m: 60, h: 3_600, d: 86_400 } as const;

/** The seconds a `per` spans, or undefined when it is not `<n><unit>` from 1 s to 7 d. */
export function windowSeconds(per: unknown): number | undefined {
  if (typeof per !== 'string' || !PER_REGEX.test(per)) return undefined;
  const seconds = Number(per.slice(0, -1)) * UNIT_SECONDS[per.at(-1) as keyof typeof UNIT_SECONDS];
  return seconds <= MAX_LIMIT_WINDOW_SECONDS ? seconds : undefined;
}

/** How a value was found, for a message that says what was expected and what was got (never more than 40 characters of it). */
function shown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === 'number') return `the number ${String(value)}`;
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/**
 * What is wrong with one tool's limit, with what was expected and what was got, or undefined when
 * it is a valid limit. `field` says which part is wrong.
 */
export function limitProblem(limit: unknown): { field?: 'max' | 'per'; message: string } | undefined {
  if (typeof limit !== 'object' || limit === null || Array.isArray(limit)) {
    return { message: `a limit is { "max": <1–${MAX_LIMIT_CALLS}>, "per": "<n>s|m|h|d" }, got ${shown(limit)}` };
  }
  const record = limit as Record<string, unknown>;
  const extra = Object.keys(record).find((key) => key !== 'max' && key !== 'per');
  if (extra !== undefined) return { message: `a limit has only max and per, got the property ${JSON.stringify(extra.slice(0, 40))}` };
  const { max, per } = record;
  if (typeof max !== 'number' || !Number.isInteger(max) || max < 1 || max > MAX_LIMIT_CALLS) {
    return { field: 'max', message: `max expects an integer from 1 to ${MAX_LIMIT_CALLS}, got ${shown(max)}` };
  }
  if (windowSeconds(per) === undefined) {
    return { field: 'per', message: `per expects <n>s, <n>m, <n>h or <n>d from 1s to 7d (e.g. "1h"), got ${shown(per)}` };
  }
  return undefined;
}

/** "at most 20 calls per 1h": how a message names a limit. */
export function describeLimit(limit: Limit): string {
  return `at most ${limit.max} call${limit.max === 1 ? '' : 's'} per ${limit.per}`;
}

/** One tool's limit in `GET .../effective`: the limit and the calls left in the current window. */
export const EffectiveLimitSchema = Type.Object({
  tool: Type.String(),
  max: Type.Integer(),
  per: Type.String(),
  remaining: Type.Integer({ minimum: 0, description: 'Calls still allowed in the current window.' }),
  retryAfterSeconds: Type.Optional(Type.Integer({ minimum: 1, description: 'With remaining 0: when the next call may be allowed.' })),
});
export type EffectiveLimit = Static<typeof EffectiveLimitSchema>;
