/**
 * Every way a parsed JSON value misses a TypeBox schema, said as a reader would: what was expected
 * and what was found (`expected one of allow, deny, ask, got "alow"`), an unknown property named
 * with the nearest known one, a missing property not reported when a near-miss of it is there.
 * Pure.
 */
import type { TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';
import { quoteForMessage } from '../../schemas/requester.js';
import { closest } from './suggest.js';

export interface SchemaProblem {
  /** JSON pointer of what is wrong ('' for the whole document). */
  readonly path: string;
  readonly message: string;
  /** The value found there (undefined when missing). */
  readonly value: unknown;
}

/** What a value is, in a message; strings are quoted (cut short), other values named by their kind. */
export function found(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return quoteForMessage(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return Array.isArray(value) ? 'an array' : `an ${typeof value}`;
}

const KIND: Partial<Record<ValueErrorType, string>> = {
  [ValueErrorType.Array]: 'an array',
  [ValueErrorType.Object]: 'an object',
  [ValueErrorType.String]: 'a string',
  [ValueErrorType.Number]: 'a number',
  [ValueErrorType.Integer]: 'an integer',
  [ValueErrorType.Boolean]: 'true or false',
};

const parentOf = (path: string): string => path.slice(0, path.lastIndexOf('/'));
const lastSegment = (path: string): string =>
  path
    .slice(path.lastIndexOf('/') + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
const at = (path: string): string => ` at ${path || '/'}`;

/** The literal values a union of literals allows, or undefined when the schema is something else. */
function literals(schema: TSchema): unknown[] | undefined {
  const options = (schema as { anyOf?: TSchema[] }).anyOf;
  if (!Array.isArray(options) || options.some((option) => !('const' in option))) return undefined;
  return options.map((option) => (option as unknown as { const: unknown }).const);
}

function message(error: ValueError): string {
  const { schema, path, value } = error;
  const limits = schema as { maxItems?: number; maxLength?: number; minLength?: number; minItems?: number; pattern?: string };
  switch (error.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return `missing property ${JSON.stringify(lastSegment(path))}${at(parentOf(path))}`;
    case ValueErrorType.ObjectAdditionalProperties: {
      const known = Object.keys((schema as { properties?: object }).properties ?? {});
      const near = closest(lastSegment(path), known);
      const hint = near === undefined ? '' : ` (did you mean ${JSON.stringify(near)}?)`;
      return `unknown property ${quoteForMessage(lastSegment(path))}${at(parentOf(path))}${hint}`;
    }
    case ValueErrorType.Union: {
      const allowed = literals(schema);
      if (allowed !== undefined) return `expected one of ${allowed.join(', ')}, got ${found(value)}${at(path)}`;
      return `${error.message}, got ${found(value)}${at(path)}`;
    }
    case ValueErrorType.Literal:
      return `expected ${JSON.stringify((schema as { const?: unknown }).const)}, got ${found(value)}${at(path)}`;
    case ValueErrorType.ArrayMaxItems:
      return `at most ${limits.maxItems ?? 0} items, got ${Array.isArray(value) ? value.length : 0}${at(path)}`;
    case ValueErrorType.ArrayMinItems:
      return `at least ${limits.minItems ?? 0} items, got ${Array.isArray(value) ? value.length : 0}${at(path)}`;
    case ValueErrorType.StringMaxLength:
      return `at most ${limits.maxLength ?? 0} characters, got ${typeof value === 'string' ? value.length : 0}${at(path)}`;
    case ValueErrorType.StringMinLength:
      return `at least ${limits.minLength ?? 0} characters, got ${found(value)}${at(path)}`;
    case ValueErrorType.StringPattern:
      return `expected a string matching ${limits.pattern ?? ''}, got ${found(value)}${at(path)}`;
    default: {
      const kind = KIND[error.type];
      if (kind !== undefined) return `expected ${kind}, got ${found(value)}${at(path)}`;
      return `${error.message}, got ${found(value)}${at(path)}`;
    }
  }
}

/**
 * The schema problems of `value`, one per path, in the order the checker meets them, at most
 * `limit` of them listed (`more`: how many others there are).
 */
export function schemaProblems(check: TypeCheck<TSchema>, value: unknown, limit: number): { problems: SchemaProblem[]; more: number } {
  const errors: ValueError[] = [];
  const seen = new Set<string>();
  for (const error of check.Errors(value)) {
    // A missing property also fails its own type check at the same path: one message is enough.
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    errors.push(error);
  }
  // A missing property whose near-miss is present was misspelled: the unknown property says so.
  const unknown = new Map<string, string[]>();
  for (const error of errors) {
    if (error.type !== ValueErrorType.ObjectAdditionalProperties) continue;
    const parent = parentOf(error.path);
    unknown.set(parent, [...(unknown.get(parent) ?? []), lastSegment(error.path)]);
  }
  const kept = errors.filter(
    (error) =>
      error.type !== ValueErrorType.ObjectRequiredProperty ||
      closest(lastSegment(error.path), unknown.get(parentOf(error.path)) ?? []) === undefined,
  );
  return {
    problems: kept.slice(0, limit).map((error) => ({ path: error.path, message: message(error), value: error.value })),
    more: Math.max(0, kept.length - limit),
  };
}
