/** GET /catalog and GET /projects (docs/api.md#http-api). */
import {
  CatalogResponseSchema,
  ProjectsResponseSchema,
  READ_ONLY_DEFAULT,
  TOOL_ARGUMENTS,
  TOOL_CATALOG,
  TOOL_GROUPS,
  type CatalogResponse,
} from '../../../schemas/index.js';
import type { PermissionsService } from '../../permissions/permissions-service.js';
import { errors, type TypedApp } from './common.js';

const CATALOG: CatalogResponse = {
  tools: TOOL_CATALOG.map(({ name, access, group, label, issueScoped }) => ({
    name,
    access,
    group,
    label,
    issueScoped,
    arguments: [...TOOL_ARGUMENTS[name]],
  })),
  groups: TOOL_GROUPS.map(({ id, label }) => ({ id, label })),
  readOnlyDefault: [...READ_ONLY_DEFAULT],
};

export async function catalogRoutes(app: TypedApp, { permissions }: { permissions: PermissionsService }): Promise<void> {
  app.get(
    '/catalog',
    {
      schema: {
        tags: ['catalog'],
        summary: 'The 25 IdeA MCP tools, their groups and the read-only default',
        response: { 200: CatalogResponseSchema, ...errors(401) },
      },
    },
    async () => CATALOG,
  );
  app.get(
    '/projects',
    {
      schema: {
        tags: ['catalog'],
        summary: 'Projects served, with their status and revision',
        response: { 200: ProjectsResponseSchema, ...errors(401) },
      },
    },
    async () => permissions.listProjects(),
  );
}
