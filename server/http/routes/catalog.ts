/** GET /catalog, GET /projects and GET /projects/:project/catalog (docs/api.md#http-api, docs/api.md#other-mcp-servers-tools). */
import {
  CatalogResponseSchema,
  ProjectParamsSchema,
  ProjectsResponseSchema,
  TOOL_GROUPS,
  type CatalogResponse,
} from '../../../schemas/index.js';
import { revisionOf } from '../../domain/compile.js';
import { IDEA_CATALOG, type ProjectCatalog } from '../../domain/project-catalog.js';
import type { PermissionsService } from '../../permissions/permissions-service.js';
import type { DiscoveredTools } from '../../servers/discovered-tools.js';
import { errors, type TypedApp } from './common.js';

/** The catalog route's body for `catalog`: IdeA's tools and groups, then each declared server's. */
export function catalogBody(catalog: ProjectCatalog): CatalogResponse {
  const tools: CatalogResponse['tools'] = [];
  for (const name of catalog.names) {
    const tool = catalog.find(name);
    if (tool === undefined) continue;
    const { access, group, label, issueScoped, server } = tool;
    tools.push({
      name,
      access,
      group,
      label,
      issueScoped,
      arguments: [...(catalog.knownArguments(name) ?? [])],
      ...(server === undefined ? {} : { server }),
    });
  }
  return {
    tools,
    groups: [
      ...TOOL_GROUPS.map(({ id, label }) => ({ id, label })),
      ...catalog.servers.map(({ id, label }) => ({ id: `server:${id}`, label })),
    ],
    readOnlyDefault: [...catalog.readOnly],
    version: catalog.revision,
  };
}

const CATALOG: CatalogResponse = catalogBody(IDEA_CATALOG);

/**
 * The ETag of a project's catalog: the servers file's revision (its `version`), and while servers'
 * reported `inputSchema`s add arguments to declared tools, a hash of those too (the body changes with them).
 */
function catalogTag(catalog: ProjectCatalog, view: ProjectCatalog): string {
  const reported = catalog.servers
    .flatMap((server) => server.tools)
    .filter((tool) => catalog.knownArguments(tool.name) === undefined)
    .flatMap((tool) => {
      const names = view.knownArguments(tool.name);
      return names === undefined ? [] : [[tool.name, names]];
    });
  return `"${reported.length === 0 ? catalog.revision : `${catalog.revision}.${revisionOf(JSON.stringify(reported)).slice(0, 8)}`}"`;
}

export async function catalogRoutes(
  app: TypedApp,
  { permissions, discovered }: { permissions: PermissionsService; discovered: DiscoveredTools },
): Promise<void> {
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
    '/projects/:project/catalog',
    {
      schema: {
        tags: ['catalog'],
        summary: "IdeA's tools and the tools the project's .ideai/mcp-servers.json declares (<server>/<tool>)",
        params: ProjectParamsSchema,
        response: { 200: CatalogResponseSchema, ...errors(401, 404) },
      },
    },
    async (request, reply) => {
      const { project } = request.params;
      const catalog = permissions.catalog(project);
      const view = discovered.catalogWithArguments(project, catalog);
      void reply.header('etag', catalogTag(catalog, view));
      return catalogBody(view);
    },
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
