/** GET /events: the live changes of the projects as Server-Sent Events (docs/api.md#live-changes-get-events). */
import { Type } from '@sinclair/typebox';
import { EventsQuerySchema } from '../../../schemas/events.js';
import { ApiError, unknownProject } from '../../errors.js';
import type { LiveEvents } from '../../events/live-events.js';
import { errors, type TypedApp } from './common.js';

export async function eventsRoute(
  app: TypedApp,
  { events, hasProject }: { events: LiveEvents; hasProject: (id: string) => boolean },
): Promise<void> {
  app.get(
    '/events',
    {
      config: { access: 'read' },
      schema: {
        tags: ['events'],
        summary: 'Live policy and approval events (text/event-stream)',
        description:
          '`event: policy` (`{ project, revision, status }`) once per project when the stream opens, then on every change visible to /decide; `event: approval` (`{ project, id, status }`); a `: ping` comment every 15 s.',
        querystring: EventsQuerySchema,
        response: { 200: Type.String({ description: 'A text/event-stream.' }), ...errors(400, 401, 404, 429) },
      },
    },
    async (request, reply) => {
      const { project } = request.query;
      if (project !== undefined && !hasProject(project)) throw unknownProject(project);
      const client = request.socket.remoteAddress ?? '';
      const refusal = events.refusal(client);
      if (refusal !== undefined) {
        // Closed after the answer: a refused stream must not keep its connection (1,023 of them would hold every place).
        void reply.header('retry-after', '5').header('connection', 'close');
        const who = refusal.limit === 'total' ? 'the service' : `client ${client}`;
        throw new ApiError(
          'too_many_streams',
          `Too many /events streams open for ${who} (at most ${refusal.max}); close one or retry later. Decisions are not affected.`,
          { limit: refusal.limit, max: refusal.max },
        );
      }
      // The stream outlives the handler: Fastify hands the raw response over and sends nothing itself.
      reply.hijack();
      events.open(reply.raw, project, client);
    },
  );
}
