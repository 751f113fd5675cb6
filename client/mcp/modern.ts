/**
 * `guardMcpServer` on MCP 2026-07-28 requests: where the in-process guard finds the request's era,
 * its declared capabilities and the retry members of an approval (`requestState`, `inputResponses`),
 * and how the tool's own handler gets a retried call without them. The SDK v2 lifts the envelope
 * and the retry members out of `params` into the handler's context (`ctx.mcpReq`); a server that
 * does not (SDK v1, a hand-written handler) leaves them in `params`. The decision itself is the
 * proxy's (../guards/input-required.ts), under this process's one key.
 */
import { isJsonObject } from '../decision.js';
import { RequestStateSeal } from '../guards/request-state.js';
import { withoutRetry } from '../guards/input-required.js';
import { modernRequest, type ModernRequest } from '../proxy/era.js';

/** A 2026-07-28 `tools/call` as the guard decides it: its era and `params` with the retry members where the host put them. */
export interface ModernCall {
  modern: ModernRequest;
  params: Record<string, unknown>;
}

let processSeal: RequestStateSeal | undefined;

/**
 * The one seal of this process, shared by every guarded server: a per-request server instance
 * (`createMcpHandler` builds one per HTTP request) must open the state another instance sealed.
 */
export function guardSeal(): RequestStateSeal {
  processSeal ??= new RequestStateSeal();
  return processSeal;
}

/** The SDK v2 handler context's `mcpReq`, when the handler got one. */
function mcpReqOf(extra: unknown): Record<string, unknown> | undefined {
  const mcpReq = isJsonObject(extra) ? extra.mcpReq : undefined;
  return isJsonObject(mcpReq) ? mcpReq : undefined;
}

/** The call's era and members when it is of the 2026-07-28 era (told from this request alone); `undefined` for the `initialize` era. */
export function modernCallOf(request: unknown, extra: unknown): ModernCall | undefined {
  const params = isJsonObject(request) && isJsonObject(request.params) ? request.params : {};
  const mcpReq = mcpReqOf(extra);
  const envelope = mcpReq?.envelope;
  const modern = modernRequest(isJsonObject(envelope) ? { _meta: envelope } : params);
  if (modern === undefined) return undefined;
  if (mcpReq === undefined) return { modern, params };
  const state = typeof mcpReq.requestState === 'function' ? (mcpReq.requestState as () => unknown)() : undefined;
  const responses = mcpReq.inputResponses;
  return {
    modern,
    params: {
      ...params,
      ...(state === undefined ? {} : { requestState: state }),
      ...(responses === undefined ? {} : { inputResponses: responses }),
    },
  };
}

/**
 * The request and context a retried call runs with once allowed: without the guard's state and the
 * user's answer, which were for the guard (the server's own `requestState.verify` would refuse them).
 */
export function withoutGuardRetry(request: Record<string, unknown>, extra: unknown): [unknown, unknown] {
  const stripped = isJsonObject(request.params) ? { ...request, params: withoutRetry(request.params) } : request;
  const mcpReq = mcpReqOf(extra);
  if (mcpReq === undefined) return [stripped, extra];
  const { inputResponses: _responses, droppedInputResponseKeys: _dropped, ...rest } = mcpReq;
  return [stripped, { ...(extra as Record<string, unknown>), mcpReq: { ...rest, requestState: () => undefined } }];
}
