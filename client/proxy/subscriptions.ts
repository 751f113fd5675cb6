/**
 * `notifications/tools/list_changed` for hosts on MCP 2026-07-28, which never send `initialize`:
 * the revision delivers change notifications on a `subscriptions/listen` request the host keeps
 * open, each stamped with that request's id under `_meta["io.modelcontextprotocol/subscriptionId"]`.
 * The listen goes on to the server (its own notifications flow there); the proxy honours
 * `toolsListChanged` itself: it says so in the server's acknowledgement, or acknowledges the
 * listen itself when the server does not know the method (a server of an earlier revision).
 */
import { isJsonObject } from '../decision.js';
import { SUBSCRIPTION_ID_META } from './era.js';
import type { JsonObject, JsonRpcNotification, RequestId } from './json-rpc.js';

const ACKNOWLEDGED = 'notifications/subscriptions/acknowledged';

export class ToolListSubscriptions {
  /** Listens of the host that asked for `toolsListChanged`, by id: the id as the host wrote it. */
  private readonly listening = new Map<RequestId, string>();

  /** A host's `subscriptions/listen`; remembered when it asks for tool list changes. */
  opened(id: RequestId, rawId: string, params: JsonObject | undefined): void {
    const notifications = params?.notifications;
    if (isJsonObject(notifications) && notifications.toolsListChanged === true) this.listening.set(id, rawId);
  }

  /**
   * The server answered listen `id`: a result ends it (forwarded); an error from a server that does
   * not listen leaves the proxy's own subscription open, acknowledged here (the text to send the
   * host instead of the error). `undefined`: forward the answer as it is.
   */
  answered(id: RequestId, failed: boolean): string | undefined {
    const rawId = this.listening.get(id);
    if (rawId === undefined) return undefined;
    if (!failed) {
      this.listening.delete(id);
      return undefined;
    }
    return `{"jsonrpc":"2.0","method":"${ACKNOWLEDGED}","params":{"notifications":{"toolsListChanged":true},"_meta":{"${SUBSCRIPTION_ID_META}":${rawId}}}}`;
  }

  /** The server's acknowledgement of a listen the proxy honours tool changes on, saying so; `undefined` for any other message. */
  acknowledgement(message: JsonRpcNotification): JsonRpcNotification | undefined {
    if (message.method !== ACKNOWLEDGED || message.params === undefined) return undefined;
    const meta = message.params._meta;
    const id = isJsonObject(meta) ? meta[SUBSCRIPTION_ID_META] : undefined;
    if ((typeof id !== 'string' && typeof id !== 'number') || !this.listening.has(id)) return undefined;
    const notifications = isJsonObject(message.params.notifications) ? message.params.notifications : {};
    return { ...message, params: { ...message.params, notifications: { ...notifications, toolsListChanged: true } } };
  }

  /** The host cancelled listen `id` (or it ended). */
  closed(id: unknown): void {
    if (typeof id === 'string' || typeof id === 'number') this.listening.delete(id);
  }

  /** One `list_changed` per open subscription, stamped with its id. */
  notifications(): string[] {
    return [...this.listening.values()].map(
      (rawId) => `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"${SUBSCRIPTION_ID_META}":${rawId}}}}`,
    );
  }

  clear(): void {
    this.listening.clear();
  }
}
