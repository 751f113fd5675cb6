/**
 * Filtering a `tools/list` answer to what the requester may call or be asked for, the one way for
 * every guard of an MCP server. A lookup that fails lists nothing (fail closed: a tool the service
 * did not confirm is never advertised); calls are still decided one by one either way.
 */
import { errorText } from '../causes.js';
import { isJsonObject } from '../decision.js';
import type { GuardClient, GuardLogger, Resolved } from './common.js';
import { listedTools, type ToolListFollower } from './tool-list-follower.js';

/** What filtering one list needs. */
export interface ToolListContext {
  readonly client: GuardClient;
  readonly logger: GuardLogger | undefined;
  /** Told what was listed, so it can tell the host when that changes. */
  readonly follower: Pick<ToolListFollower, 'noteListed'>;
  readonly project: Resolved;
  readonly requester: Resolved;
  readonly signal: AbortSignal | undefined;
}

/** The server's `tools/list` result with only the tools the requester may call or be asked for. Never throws. */
export async function filterToolList(context: ToolListContext, result: unknown): Promise<unknown> {
  if (!isJsonObject(result) || !Array.isArray(result.tools)) return { tools: [] };
  const tools = result.tools as unknown[];
  const { client, logger, project, requester } = context;
  if (!project.ok || !requester.ok) {
    const cause = project.ok ? (requester.ok ? '' : requester.cause) : project.cause;
    logger?.warn({ cause }, 'tools/list: project or requester unresolved, listing no tools');
    return { ...result, tools: [] };
  }
  try {
    const effective = await client.effective(project.value, requester.value, { timeoutMs: client.timeoutMs, signal: context.signal });
    if (effective.project !== project.value) throw new Error(`effective policy of project ${effective.project}`);
    if (effective.requester.id !== requester.value) throw new Error(`effective policy of requester ${effective.requester.id}`);
    const callable = listedTools(effective);
    context.follower.noteListed(project.value, requester.value, callable);
    const allowed = new Set(callable);
    return { ...result, tools: tools.filter((tool) => isJsonObject(tool) && allowed.has(tool.name as string)) };
  } catch (error) {
    context.follower.noteListed(project.value, requester.value, null);
    logger?.warn(
      { project: project.value, requester: requester.value, cause: errorText(error) },
      'tools/list: effective policy unavailable, listing no tools',
    );
    return { ...result, tools: [] };
  }
}
