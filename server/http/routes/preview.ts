/**
 * POST /projects/:project/mcp-tool-permissions/preview (docs/api.md#policy-as-code-idea-pdp-and-previews):
 * a proposed document, checked and replayed, nothing written.
 */
import { PreviewBodySchema, PreviewResponseSchema, ProjectParamsSchema } from '../../../schemas/index.js';
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox';
import { MAX_FILE_BYTES } from '../../projects/file-read.js';
import type { PreviewService } from '../../decisions/preview-service.js';
import { errors, type TypedApp } from './common.js';

/** As big as a policy file may be, and room for `{ "document": … }` around it. */
const PREVIEW_BODY_LIMIT = MAX_FILE_BYTES + 64 * 1024;

export async function previewRoute(app: TypedApp, { preview }: { preview: PreviewService }): Promise<void> {
  // In this route's scope only: the body is kept as bytes and parsed away from the thread that decides.
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: PREVIEW_BODY_LIMIT }, (_request, body, done) => {
    done(null, body);
  });
  app.post(
    '/projects/:project/mcp-tool-permissions/preview',
    {
      // It reads, like the GET routes: the decide token or the admin token.
      config: { access: 'read' },
      bodyLimit: PREVIEW_BODY_LIMIT,
      // The body is described in the OpenAPI document but read by the preview itself: either form, any document.
      validatorCompiler: (route) =>
        route.httpPart === 'body'
          ? () => true
          : TypeBoxValidatorCompiler(route as unknown as Parameters<typeof TypeBoxValidatorCompiler>[0]),
      schema: {
        tags: ['permissions'],
        summary: 'Preview a policy document: its problems, the agents it changes, recent decisions replayed under it',
        description:
          'Writes nothing and opens no approval request. The body is { "document": <policy document> } or the policy document itself. An invalid document (not JSON included) answers 200 with valid: false and its errors.',
        params: ProjectParamsSchema,
        body: PreviewBodySchema,
        response: { 200: PreviewResponseSchema, ...errors(400, 401, 404, 413, 415) },
      },
    },
    async (request) => preview.preview(request.params.project, request.body as unknown as Buffer),
  );
}
