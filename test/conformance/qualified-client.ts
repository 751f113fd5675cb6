/**
 * `guardMcpServer` decides a tool by the name its server gives it, which is right for IdeA's own
 * tools; the example server is another server, declared in the project's `.ideai/mcp-servers.json`
 * as `<server>`, so the service knows its tools as `<server>/<tool>` (what `idea-mcp-proxy --server`
 * asks). This wraps the real `PdpClient` to ask the same names: every decision is still the
 * service's own, on the qualified name.
 */
import type { GuardClient } from '../../client/guards/common.js';
import type { PdpClient } from '../../client/index.js';

export function qualifiedClient(pdp: PdpClient, server: string): GuardClient {
  const prefix = `${server}/`;
  const unqualified = (names: readonly string[]) =>
    names.filter((name) => name.startsWith(prefix)).map((name) => name.slice(prefix.length));
  return {
    timeoutMs: pdp.timeoutMs,
    decide: (query, options) => pdp.decide({ ...query, tool: prefix + query.tool }, options),
    decideBatch: (queries, options) =>
      pdp.decideBatch(
        queries.map((query) => ({ ...query, tool: prefix + query.tool })),
        options,
      ),
    effective: async (project, requester, options) => {
      const effective = await pdp.effective(project, requester, options);
      return {
        ...effective,
        allowedTools: unqualified(effective.allowedTools),
        ...(effective.askTools === undefined ? {} : { askTools: unqualified(effective.askTools) }),
      };
    },
    watchEvents: (handlers) => pdp.watchEvents(handlers),
    getApproval: (...args) => pdp.getApproval(...args),
    answerApproval: (...args) => pdp.answerApproval(...args),
  };
}
