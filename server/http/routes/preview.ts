/** POST /projects/:project/mcp-tool-permissions/preview (docs/api.md §12): a proposed document, checked and replayed, nothing written. */
import { PreviewBodySchema, PreviewResponseSchema, ProjectParamsSchema } from '../../../schemas/index.js';
import type { PreviewService } from '../../decisions/preview-service.js';
import { errors, type TypedApp } from './common.js';

export async function previewRoute(app: TypedApp, { preview }: { preview: PreviewService }): Promise<void> {
  app.post(
    '/projects/:project/mcp-tool-permissions/preview',
    {
      // It reads, like the GET routes: the decide token or the admin token.
      config: { access: 'read' },
      schema: {
        tags: ['permissions'],
        summary: 'Preview a policy document: its problems, the agents it changes, recent decisions replayed under it',
        description: 'Writes nothing and opens no approval request. An invalid document answers 200 with valid: false and its errors.',
        params: ProjectParamsSchema,
        body: PreviewBodySchema,
        response: { 200: PreviewResponseSchema, ...errors(400, 401, 404, 413, 415) },
      },
    },
    async (request) => preview.preview(request.params.project, request.body.document),
  );
}
