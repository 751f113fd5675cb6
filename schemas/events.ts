/**
 * Payloads of the live events stream `GET /events` (docs/api.md#live-changes-get-events): the server writes them, the
 * client SDK and the panel read them.
 */
import { Type, type Static } from '@sinclair/typebox';

export const POLICY_EVENT_STATUSES = ['ok', 'invalid', 'removed'] as const;

export const PolicyEventSchema = Type.Object({
  project: Type.String(),
  revision: Type.String(),
  status: Type.Union(POLICY_EVENT_STATUSES.map((status) => Type.Literal(status))),
});
export type PolicyEvent = Static<typeof PolicyEventSchema>;

export const ApprovalEventSchema = Type.Object({
  project: Type.String(),
  id: Type.String(),
  status: Type.String(),
});
export type ApprovalEvent = Static<typeof ApprovalEventSchema>;

export const EventsQuerySchema = Type.Object(
  { project: Type.Optional(Type.String({ maxLength: 256, description: 'Only the events of this project.' })) },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuerySchema>;

/** Seconds between two `: ping` comment lines of an open stream. */
export const EVENTS_PING_SECONDS = 15;
