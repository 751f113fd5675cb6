/** GET /whoami: the panel checks a token when it is entered (docs/api.md#security). */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../errors.js';
import type { Auth } from '../auth.js';
import { errors, type TypedApp } from './common.js';

const WhoamiResponseSchema = Type.Object(
  {
    role: Type.Union([Type.Literal('admin'), Type.Literal('decide'), Type.Literal('approver'), Type.Literal('anonymous')], {
      description:
        'admin: the admin token; decide: the decide token; approver: the approver token (answers approvals only); anonymous: no token, and no decide token is configured.',
    }),
  },
  { $id: 'WhoamiResponse' },
);

export async function whoamiRoute(app: TypedApp, { auth }: { auth: Auth }): Promise<void> {
  app.get(
    '/whoami',
    {
      // The handler checks the token itself: a wrong one is refused even where reads are open.
      config: { access: 'public' },
      schema: {
        tags: ['auth'],
        summary: 'Which token the request carries (admin, decide, or none)',
        response: { 200: WhoamiResponseSchema, ...errors(401) },
      },
    },
    async (request) => {
      const role = auth.roleOf(request);
      if (role === undefined) {
        throw new ApiError(
          'unauthorized',
          'The token matches none of the admin, decide and approver tokens (or none was sent and one is needed).',
        );
      }
      return { role };
    },
  );
}
