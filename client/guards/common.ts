/** What both guards need from the client and the host, and the denial of a call nobody can be named for. */
import { errorText } from '../causes.js';
import { localDenial, type ClientDecision, type DeniedCall } from '../decision.js';
import type { PdpClient } from '../http/pdp-client.js';

/**
 * The part of {@link PdpClient} the guards use (a `PdpClient` is one). `watchEvents`,
 * `getApproval` and `answerApproval` are optional: without the first the MCP guard cannot tell the
 * host that its tool list changed, without the second a call that needs an approval is refused at
 * once, without the third the MCP guard cannot ask the user through elicitation.
 */
export type GuardClient = Pick<PdpClient, 'decide' | 'decideBatch' | 'effective' | 'timeoutMs'> &
  Partial<Pick<PdpClient, 'watchEvents' | 'getApproval' | 'answerApproval'>>;

/** A pino-compatible logger; the guards log what they hide or refuse for a local reason. */
export interface GuardLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** The `type` of the process warnings a guard emits when it was given no `logger`. */
export const GUARD_WARNING_TYPE = 'IdeaPdpGuardWarning';

/**
 * A guard's warnings when the host passed no `logger`: Node's `process.emitWarning`, which prints
 * them on stderr (never stdout, where a stdio MCP server speaks the protocol) and which
 * `process.on('warning')` can collect.
 */
export const processWarnings: GuardLogger = {
  warn(fields, message) {
    process.emitWarning(`${message} ${JSON.stringify(fields)}`, { type: GUARD_WARNING_TYPE });
  },
};

/** The logger a guard writes to: the host's, else {@link processWarnings}. */
export function guardLogger(logger: GuardLogger | undefined): GuardLogger {
  return logger ?? processWarnings;
}

/** A fixed value, or a function of the host's context that returns it. */
export type HostValue<A extends unknown[]> = string | ((...args: A) => string | Promise<string>);

export type Resolved = { ok: true; value: string } | { ok: false; cause: string };

/** Calls the host's function (requester or project); a throw or a non-string is reported as a cause. */
export async function resolveHostValue<A extends unknown[]>(value: HostValue<A>, ...args: A): Promise<Resolved> {
  try {
    const resolved: unknown = typeof value === 'function' ? await value(...args) : value;
    if (typeof resolved !== 'string') return { ok: false, cause: `got ${resolved === null ? 'null' : typeof resolved}` };
    return { ok: true, value: resolved };
  } catch (error) {
    return { ok: false, cause: errorText(error) };
  }
}

/**
 * The host could not tell who is calling or about which project (its function threw or returned a
 * non-string). Nobody can be granted anything then; the service is not asked.
 */
export function unresolvedDenial(project: Resolved, requester: Resolved, tool: string): ClientDecision {
  const what = !project.ok ? 'project' : 'requester';
  const cause = !project.ok ? project.cause : requester.ok ? '' : requester.cause;
  const query: DeniedCall = {
    project: project.ok ? project.value : '(unresolved)',
    requester: requester.ok ? requester.value : undefined,
    tool,
  };
  return localDenial(query, 'invalid_call', `the ${what} of the session could not be determined (${cause})`);
}
