/** What both guards need from the client and the host, and the denial of an unknown requester. */
import { randomUUID } from 'node:crypto';
import { findTool } from '../schemas/catalog.js';
import type { ClientDecision } from './decision.js';
import type { PdpClient } from './pdp-client.js';

/** The part of {@link PdpClient} the guards use (a `PdpClient` is one). */
export type GuardClient = Pick<PdpClient, 'decide' | 'decideBatch' | 'effective' | 'timeoutMs'>;

/** A pino-compatible logger; the guards log what they hide or refuse for a local reason. */
export interface GuardLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * The host could not tell who is calling (its requester function threw or returned a
 * non-string). Nobody can be granted anything then.
 */
export function unresolvedRequesterDenial(project: string, tool: string, cause: string): ClientDecision {
  return {
    allow: false,
    reason: 'invalid_call',
    message: `Tool ${tool} (unidentified requester, project ${project}) denied: the requester of the session could not be determined (${cause})`,
    source: 'none',
    requester: { id: '', kind: 'anonymous' },
    tool: { name: tool, access: findTool(tool)?.access ?? 'unknown' },
    project,
    revision: 'none',
    decisionId: `client-${randomUUID()}`,
  };
}

/** Calls the host's requester function; a throw or a non-string is reported as a cause. */
export async function resolveRequester<A extends unknown[]>(
  requester: string | ((...args: A) => string | Promise<string>),
  ...args: A
): Promise<{ ok: true; requester: string } | { ok: false; cause: string }> {
  try {
    const value: unknown = typeof requester === 'function' ? await requester(...args) : requester;
    if (typeof value !== 'string') return { ok: false, cause: `got ${value === null ? 'null' : typeof value}` };
    return { ok: true, requester: value };
  } catch (error) {
    return { ok: false, cause: error instanceof Error ? error.message : String(error) };
  }
}
