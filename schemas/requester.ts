/**
 * The requester grammar (docs/api.md#resolving-a-decision): the one parser the service decides with and the client
 * SDK words its local denials with, so both always name a requester the same way. No TypeBox at
 * run time, like ids.ts.
 */
import type { Requester } from './api.js';
import { agentIdProblem } from './agent-id.js';
import { escapeControls } from './display.js';
import { PROJECT_ID_REGEX } from './ids.js';

/** The exact, lowercase prefix of an ephemeral ticket assistant's requester id. */
export const TICKET_ASSISTANT_PREFIX = 'ticket-assistant:';
/** The issue part of `ticket-assistant:<project>:<issue>`: a ticket number of 1 to 20 digits, `#` optional. */
export const TICKET_ISSUE_REGEX = /^#?[0-9]{1,20}$/;
/** How many characters of a malformed requester a message quotes. */
export const QUOTED_REQUESTER_MAX = 200;

export interface ParsedRequester extends Requester {
  /** For a ticket assistant: the project named in the requester id. */
  readonly project?: string;
  /** For a ticket assistant: the issue named in the requester id, as written (`#` kept). */
  readonly issue?: string;
}

/**
 * `""` and `"mcp"` are the legacy anonymous requesters; `ticket-assistant:<project>:<issue>` with a
 * valid project id and a ticket number is a ticket assistant; an id a policy file may hold as an
 * agent id (agent-id.ts) is an agent; anything else (`Ticket-Assistant:p:82`,
 * `" ticket-assistant:p:82"`, `ticket-assistant::82`, `QA:x`, lookalikes such as `QA\u200b`,
 * `ＱＡ` or `QA `) is `invalid`, which is denied everything.
 */
export function parseRequester(raw: string): ParsedRequester {
  if (raw === '' || raw === 'mcp') return { id: raw, kind: 'anonymous' };
  if (raw.startsWith(TICKET_ASSISTANT_PREFIX)) {
    const rest = raw.slice(TICKET_ASSISTANT_PREFIX.length);
    const colon = rest.indexOf(':');
    const project = rest.slice(0, colon);
    const issue = rest.slice(colon + 1);
    if (colon > 0 && PROJECT_ID_REGEX.test(project) && TICKET_ISSUE_REGEX.test(issue)) {
      return { id: raw, kind: 'ticket-assistant', project, issue };
    }
    return { id: raw, kind: 'invalid' };
  }
  return { id: raw, kind: agentIdProblem(raw) === undefined ? 'agent' : 'invalid' };
}

/** An agent requester: the only kind that asks, and gets grants and `once` answers (never anonymous or ticket-assistant ones). */
export function isAgentRequester(requester: string): boolean {
  return parseRequester(requester).kind === 'agent';
}

/** A string as a message quotes it: JSON-quoted (control and bidirectional characters escaped), at most 200 characters of it. */
export function quoteForMessage(text: string): string {
  const quoted = text.length > QUOTED_REQUESTER_MAX ? `${JSON.stringify(text.slice(0, QUOTED_REQUESTER_MAX))}…` : JSON.stringify(text);
  // JSON.stringify leaves DEL, the C1 controls and the bidirectional ones as they are.
  return escapeControls(quoted);
}

/** How a requester is named in human messages: "agent QA", "anonymous requester \"mcp\"", ... */
export function describeRequester(requester: Requester): string {
  switch (requester.kind) {
    case 'anonymous':
      return `anonymous requester ${JSON.stringify(requester.id)}`;
    case 'ticket-assistant':
      return `ticket assistant ${requester.id}`;
    case 'agent':
      return `agent ${requester.id}`;
    case 'invalid':
      return `invalid requester ${quoteForMessage(requester.id)}`;
  }
}

/** Normalizes a ticket reference: `"#82"` and `"82"` are the same ticket. */
export function normalizeIssueRef(ref: string): string {
  const trimmed = ref.trim();
  return trimmed.startsWith('#') ? trimmed.slice(1) : trimmed;
}
