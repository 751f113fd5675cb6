/**
 * Helpers that keep tests within the strict lint rules without casts at every call: vitest's
 * asymmetric matchers typed as the value they stand for (vitest types them `any`), and a value a
 * test needs to be there.
 */
import { expect } from 'vitest';

export const stringMatching = (pattern: RegExp | string): string => expect.stringMatching(pattern) as string;
export const stringContaining = (text: string): string => expect.stringContaining(text) as string;

/** `value`, or a thrown error naming `what` when it is missing (a fixture the test relies on). */
export function defined<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`missing: ${what}`);
  return value;
}
