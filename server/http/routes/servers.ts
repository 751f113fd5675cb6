/**
 * GET /projects/:project/servers, POST /projects/:project/servers/:server/discovered, and
 * PUT /projects/:project/servers/:server/tools/:tool (docs/api.md#other-mcp-servers-tools).
 */
import { Type } from '@sinclair/typebox';
import {
  DeclareToolBodySchema,
  DeclareToolParamsSchema,
  DiscoveredAcceptedSchema,
  DiscoveredBodySchema,
  ProjectParamsSchema,
  ServerParamsSchema,
  ServersResponseSchema,
} from '../../../schemas/index.js';
import type { PermissionsService } from '../../permissions/permissions-service.js';
import type { DiscoveredTools } from '../../servers/discovered-tools.js';
import { errors, ifMatchOf, setEtag, type TypedApp } from './common.js';

/** 500 tools of ~700 bytes each at most (name 128, title 200, description 300, hints): 512 KiB is room enough. */
const DISCOVERED_BODY_LIMIT = 512 * 1024;

const ifMatchHeader = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      description: 'Expected revision of the servers file (the project catalog\'s version, e.g. "builtin"); a stale one gets 412.',
    }),
  ),
});

export async function serversRoutes(
  app: TypedApp,
  { permissions, discovered }: { permissions: PermissionsService; discovered: DiscoveredTools },
): Promise<void> {
  app.get(
    '/projects/:project/servers',
    {
      schema: {
        tags: ['servers'],
        summary: 'Declared MCP servers with their tools, and the tools servers listed that the catalog does not declare',
        params: ProjectParamsSchema,
        response: { 200: ServersResponseSchema, ...errors(401, 404) },
      },
    },
    async (request, reply) => {
      const catalog = permissions.catalog(request.params.project);
      setEtag(reply, catalog.revision);
      return discovered.list(request.params.project, catalog);
    },
  );
  app.put(
    '/projects/:project/servers/:server/tools/:tool',
    {
      // Declaring a read tool grants it to every agent on the read-only default: a permission write.
      config: { access: 'admin' },
      schema: {
        tags: ['servers'],
        summary: "Declare a server's tool in .ideai/mcp-servers.json with the class a person chose (adds the server if absent)",
        params: DeclareToolParamsSchema,
        headers: ifMatchHeader,
        body: DeclareToolBodySchema,
        response: { 200: ServersResponseSchema, ...errors(400, 401, 404, 409, 412, 413, 500) },
      },
    },
    async (request, reply) => {
      const { project, server, tool } = request.params;
      const { access, label, serverLabel } = request.body;
      const catalog = await permissions.declareTool(project, { server, tool, access, label, serverLabel }, { ifMatch: ifMatchOf(request) });
      setEtag(reply, catalog.revision);
      return discovered.list(project, catalog);
    },
  );
  app.post(
    '/projects/:project/servers/:server/discovered',
    {
      // What a proxy reports changes no decision: the decide token is enough (docs/api.md#other-mcp-servers-tools).
      config: { access: 'read' },
      bodyLimit: DISCOVERED_BODY_LIMIT,
      schema: {
        tags: ['servers'],
        summary: "Report a server's tools/list (idea-mcp-proxy): undeclared tools are kept to be shown, never allowed",
        params: ServerParamsSchema,
        body: DiscoveredBodySchema,
        response: { 202: DiscoveredAcceptedSchema, ...errors(400, 401, 404, 409, 413, 429) },
      },
    },
    async (request, reply) => {
      const { project, server } = request.params;
      const catalog = permissions.catalog(project);
      const { tools } = request.body;
      const outcome = discovered.report(project, server, tools, catalog);
      return reply.code(202).send({ received: tools.length, ...outcome });
    },
  );
}
