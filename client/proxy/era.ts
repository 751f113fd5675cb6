/**
 * The MCP revision a host's request speaks, told per request as 2026-07-28 defines it: a request
 * whose `params._meta` carries `io.modelcontextprotocol/protocolVersion` at 2026-07-28 or later is of
 * that era (stateless: its capabilities come with it, results carry `resultType`, no server-to-client
 * requests); any other is of the `initialize` era (2025-06-18, 2025-11-25).
 */
import { isJsonObject } from '../decision.js';
import type { JsonObject } from './json-rpc.js';

export const MODERN_REVISION = '2026-07-28';
export const PROTOCOL_VERSION_META = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_CAPABILITIES_META = 'io.modelcontextprotocol/clientCapabilities';
export const SUBSCRIPTION_ID_META = 'io.modelcontextprotocol/subscriptionId';

/** A request of the 2026-07-28 era, and the capabilities it declares; `undefined` for the `initialize` era. */
export interface ModernRequest {
  revision: string;
  capabilities: JsonObject;
}

/** The era of a request, from its own `_meta` (never from an earlier request: the revision forbids inferring it). */
export function modernRequest(params: unknown): ModernRequest | undefined {
  const meta = isJsonObject(params) ? params._meta : undefined;
  const revision = isJsonObject(meta) ? meta[PROTOCOL_VERSION_META] : undefined;
  // Revisions are dates: a later one compares greater as text.
  if (typeof revision !== 'string' || !/^\d{4}-\d{2}-\d{2}$/u.test(revision) || revision < MODERN_REVISION) return undefined;
  const capabilities = isJsonObject(meta) ? meta[CLIENT_CAPABILITIES_META] : undefined;
  return { revision, capabilities: isJsonObject(capabilities) ? capabilities : {} };
}

/** A result the proxy writes itself, valid in the request's era: `resultType: "complete"` on 2026-07-28. */
export function resultFor<T extends object>(result: T, modern: ModernRequest | undefined): T & { resultType?: 'complete' } {
  return modern === undefined ? result : { resultType: 'complete', ...result };
}
