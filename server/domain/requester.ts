/** Classifies the `requester` of a decision (SPEC §4). Pure. */
import type { Requester } from '../../schemas/index.js';

const TICKET_ASSISTANT_PREFIX = 'ticket-assistant:';

export interface ParsedRequester extends Requester {
  /** For a ticket assistant: the project named in the requester id. */
  readonly project?: string;
  /** For a ticket assistant: the issue named in the requester id. */
  readonly issue?: string;
}

/**
 * `""` and `"mcp"` are the legacy anonymous requesters; `ticket-assistant:<project>:<issue>` is the
 * ephemeral ticket assistant; anything else is an agent id.
 */
export function parseRequester(raw: string): ParsedRequester {
  if (raw === '' || raw === 'mcp') return { id: raw, kind: 'anonymous' };
  if (raw.startsWith(TICKET_ASSISTANT_PREFIX)) {
    const rest = raw.slice(TICKET_ASSISTANT_PREFIX.length);
    const colon = rest.indexOf(':');
    // A ticket assistant without an issue part names no project we can match: it gets the
    // empty project, which never equals a real project id, so every call is a mismatch.
    const project = colon < 0 ? '' : rest.slice(0, colon);
    const issue = colon < 0 ? '' : rest.slice(colon + 1);
    return { id: raw, kind: 'ticket-assistant', project, issue };
  }
  return { id: raw, kind: 'agent' };
}

/** How a requester is named in human messages. */
export function describeRequester(requester: Requester): string {
  switch (requester.kind) {
    case 'anonymous':
      return `anonymous requester "${requester.id}"`;
    case 'ticket-assistant':
      return `ticket assistant ${requester.id}`;
    case 'agent':
      return `agent ${requester.id}`;
  }
}

/** Normalizes a ticket reference: `"#82"` and `"82"` are the same ticket. */
export function normalizeIssueRef(ref: string): string {
  const trimmed = ref.trim();
  return trimmed.startsWith('#') ? trimmed.slice(1) : trimmed;
}
