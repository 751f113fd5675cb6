/**
 * A stand-in policy service on a real socket for the guard unit tests: a fixed allowlist per
 * requester, the real wire shapes, and a log of what it was asked. (The E2E tests use the real one.)
 */
import { TOOL_CATALOG, findTool } from '../../schemas/catalog.js';
import { sendJson, startFakeHttp, type FakeServer } from './fake-pdp.js';

export type AllowTable = Record<string, readonly string[]>;

function decide(table: AllowTable, query: { project: string; requester: string; tool: string }) {
  const allowed = table[query.requester] ?? [];
  const allow = allowed.includes(query.tool) && findTool(query.tool) !== undefined;
  return {
    allow,
    reason: allow ? 'allowed' : findTool(query.tool) === undefined ? 'unknown_tool' : 'not_in_allowlist',
    message: `Tool ${query.tool} is ${allow ? 'allowed' : 'denied'} for agent ${query.requester} in project ${query.project} (policy: agent-override).`,
    source: 'agent-override',
    requester: { id: query.requester, kind: 'agent' },
    tool: { name: query.tool, access: findTool(query.tool)?.access ?? 'unknown' },
    project: query.project,
    revision: 'table',
    decisionId: `table-${Math.random()}`,
  };
}

export async function startPolicyTablePdp(table: AllowTable, options: { effectiveFails?: boolean } = {}): Promise<FakeServer> {
  return startFakeHttp((request, response, body) => {
    const url = new URL(request.url ?? '/', 'http://x');
    if (request.method === 'POST' && url.pathname === '/decide') {
      sendJson(response, 200, decide(table, body as Parameters<typeof decide>[1]));
      return;
    }
    if (request.method === 'POST' && url.pathname === '/decide/batch') {
      const queries = (body as { queries: Parameters<typeof decide>[1][] }).queries;
      sendJson(response, 200, { decisions: queries.map((query) => decide(table, query)) });
      return;
    }
    const effective = /^\/projects\/([^/]+)\/requesters\/([^/]+)\/effective$/.exec(url.pathname);
    if (request.method === 'GET' && effective !== null) {
      if (options.effectiveFails === true) {
        sendJson(response, 500, { error: { code: 'internal_error', message: 'boom' } });
        return;
      }
      const requester = decodeURIComponent(effective[2] ?? '');
      const allowed = table[requester] ?? [];
      sendJson(response, 200, {
        project: decodeURIComponent(effective[1] ?? ''),
        requester: { id: requester, kind: 'agent' },
        source: 'agent-override',
        allowedTools: TOOL_CATALOG.filter((tool) => allowed.includes(tool.name)).map((tool) => tool.name),
        deniedTools: TOOL_CATALOG.filter((tool) => !allowed.includes(tool.name)).map((tool) => tool.name),
        revision: 'table',
      });
      return;
    }
    sendJson(response, 404, { error: { code: 'not_found', message: 'no route' } });
  });
}
