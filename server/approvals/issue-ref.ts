/**
 * The ticket a call names in `arguments.issueRef`, as an approval request shows it and as a `once`
 * approval is bound to it: `"#82"` and `"82"` are the same ticket.
 */
import { createHash } from 'node:crypto';
import { normalizeIssueRef } from '../../schemas/requester.js';

/** Longest reference kept as written; a longer one is matched by its digest and shown cut. */
const MAX_ISSUE_REF_LENGTH = 64;

export interface IssueRef {
  /** What a `once` approval is bound to: equal keys, same ticket. */
  readonly key: string;
  /** How the panel shows it: `#82`. */
  readonly display: string;
}

/** The reference of a call, or `undefined` when it names no ticket. */
export function parseIssueRef(raw: string | undefined): IssueRef | undefined {
  if (raw === undefined) return undefined;
  const ref = normalizeIssueRef(raw);
  if (ref === '') return undefined;
  if (ref.length <= MAX_ISSUE_REF_LENGTH) return { key: ref, display: `#${ref}` };
  // A digest keeps an over-long reference exact for matching without keeping all of it.
  return { key: `sha256:${createHash('sha256').update(ref).digest('hex')}`, display: `#${ref.slice(0, MAX_ISSUE_REF_LENGTH)}…` };
}
