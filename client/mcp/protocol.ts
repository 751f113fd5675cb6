/**
 * What the MCP guard must respect of the protocol itself, so that wrapping a server changes
 * nothing a client can observe except the decisions: `notifications/tools/list_changed` only
 * when the server declared `tools.listChanged` and only once the session is initialized, and the
 * server's own JSON-RPC error for a tool name it does not serve.
 */
import { isJsonObject } from '../decision.js';
import { modernRequest, PROTOCOL_VERSION_META } from '../proxy/era.js';

/** The part of a server's capabilities the guard reads and declares (the same in SDK v1 and v2). */
interface ServerCapabilities {
  [key: string]: unknown;
  tools?: { [key: string]: unknown; listChanged?: boolean | undefined } | undefined;
}

type Handler = (request: unknown, extra: unknown) => Promise<unknown>;

/** The parts of the SDK's low-level `Server` the guard reads (all public in SDK 1.x). */
interface ProtocolServer {
  readonly transport?: unknown;
  getCapabilities?: () => ServerCapabilities;
  registerCapabilities?: (capabilities: ServerCapabilities) => void;
  getClientCapabilities?: () => unknown;
  sendToolListChanged?: () => Promise<void>;
  /** SDK v2 (and recent v1): the revision the instance serves. */
  getNegotiatedProtocolVersion?: () => string | undefined;
  oninitialized?: (() => void) | undefined;
}

/** Where the guard keeps what it learnt of the session. */
export interface SessionState {
  /** The transport of the session whose `notifications/initialized` arrived; `undefined` before. */
  initializedOn: unknown;
}

/**
 * Declares `tools.listChanged` when it is still possible (before `connect()`), for a guard that
 * sends `list_changed`. A server connected already keeps what it declared, and the guard then
 * never sends the notification. A server without the `tools` capability yet (an `McpServer`
 * before its first tool) declares `listChanged: true` itself with its first tool.
 */
export function declareToolListChanged(server: object): void {
  const target = server as ProtocolServer;
  if (target.transport !== undefined || typeof target.registerCapabilities !== 'function') return;
  const tools = target.getCapabilities?.().tools;
  if (tools === undefined || tools.listChanged === true) return;
  target.registerCapabilities({ tools: { listChanged: true } });
}

/**
 * Records when the client's `notifications/initialized` arrives: the SDK calls the server's
 * `oninitialized` then, whatever the host assigns to it (kept and called too). A guard installed
 * on a session already initialized counts it as initialized.
 */
export function watchInitialization(server: object, session: SessionState): void {
  const target = server as ProtocolServer;
  let hostCallback = target.oninitialized;
  const onInitialized = () => {
    session.initializedOn = target.transport;
    hostCallback?.();
  };
  Object.defineProperty(server, 'oninitialized', {
    get: () => onInitialized,
    set: (callback: (() => void) | undefined) => {
      hostCallback = callback;
    },
    configurable: false,
    enumerable: true,
  });
  if (target.transport !== undefined && target.getClientCapabilities?.() !== undefined) session.initializedOn = target.transport;
}

/**
 * Whether the server instance serves the 2026-07-28 era (the SDK v2 entries, `serveStdio` and
 * `createMcpHandler`, bind an instance to it before connecting it). That era has no initialization:
 * the SDK's entry delivers a change notification on each `subscriptions/listen` of the host that
 * asked for it, stamped with its subscription id, and on none otherwise.
 */
function servesModernEra(server: ProtocolServer): boolean {
  const revision = typeof server.getNegotiatedProtocolVersion === 'function' ? server.getNegotiatedProtocolVersion() : undefined;
  return modernRequest({ _meta: { [PROTOCOL_VERSION_META]: revision } }) !== undefined;
}

/**
 * Sends `notifications/tools/list_changed` when the protocol allows it: the server declared
 * `tools.listChanged`, and the current session finished its initialization or serves the
 * 2026-07-28 era (where it reaches the host's subscriptions). Otherwise, and when the client went
 * away, it sends nothing and never throws (the client lists after initializing anyway).
 */
export async function sendToolListChangedIfAllowed(server: object, session: SessionState): Promise<boolean> {
  const target = server as ProtocolServer;
  const { transport } = target;
  if (transport === undefined || (transport !== session.initializedOn && !servesModernEra(target))) return false;
  if (target.getCapabilities?.().tools?.listChanged !== true || typeof target.sendToolListChanged !== 'function') return false;
  try {
    await target.sendToolListChanged();
    return true;
  } catch {
    return false; // the client went away between the check and the send: nobody is left to tell
  }
}

/** The most pages of `tools/list` read to learn whether the server serves a name (100 tools a page is typical). */
const MAX_LIST_PAGES = 50;

/**
 * Whether the server's own (unfiltered) `tools/list` lists `name`: `undefined` when that cannot
 * be known (no list handler, or it failed), which the guard treats as served (a refusal, never a run).
 */
export async function servesTool(listTools: Handler | undefined, name: string, extra: unknown): Promise<boolean | undefined> {
  if (listTools === undefined) return undefined;
  try {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      const params = cursor === undefined ? {} : { cursor };
      const result = await listTools({ method: 'tools/list', params }, extra);
      if (!isJsonObject(result) || !Array.isArray(result.tools)) return undefined;
      if (result.tools.some((tool) => isJsonObject(tool) && tool.name === name)) return true;
      if (typeof result.nextCursor !== 'string') return false;
      cursor = result.nextCursor;
    }
    return undefined;
  } catch {
    return undefined;
  }
}
