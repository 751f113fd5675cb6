/**
 * Asking the user in the host through the proxy: the proxy sends `elicitation/create` to the host
 * itself (with ids of its own, which the relay refuses from the real server) and reads the answer before the
 * real server could see it. The host's capabilities are those of the `initialize` it sent.
 */
import type { ElicitingServer } from '../guards/approval-elicitation.js';
import { isJsonObject } from '../decision.js';
import type { JsonRpcMessage, RequestId } from './json-rpc.js';

type Answer = { ok: true; result: unknown } | { ok: false; message: string };

/** The prefix of the proxy's own request ids to the host. */
const OWN_ID_PREFIX = 'idea-mcp-proxy:';

/** Whether a request id is in the proxy's own namespace, which the real server may not use. */
export function isProxyRequestId(id: RequestId): boolean {
  return typeof id === 'string' && id.startsWith(OWN_ID_PREFIX);
}

export class HostElicitor implements ElicitingServer {
  /** The `capabilities` of the host's `initialize`. */
  hostCapabilities: { elicitation?: object | undefined } | undefined;
  private readonly pending = new Map<RequestId, (answer: Answer) => void>();
  private nextId = 1;

  constructor(private readonly sendToHost: (message: JsonRpcMessage) => void) {}

  getClientCapabilities(): { elicitation?: object | undefined } | undefined {
    return this.hostCapabilities;
  }

  /** Takes the host's answer to one of the proxy's own requests; false when the answer is not for the proxy. */
  takeAnswer(message: JsonRpcMessage): boolean {
    const id = 'id' in message ? message.id : undefined;
    if (id === undefined || id === null || !this.pending.has(id)) return false;
    const settle = this.pending.get(id);
    this.pending.delete(id);
    if ('result' in message) settle?.({ ok: true, result: message.result });
    else if ('error' in message) settle?.({ ok: false, message: message.error.message });
    return true;
  }

  /** Every question still open ends unanswered (the host or the proxy is going away). */
  abandonAll(): void {
    for (const settle of this.pending.values()) settle({ ok: false, message: 'the proxy is closing' });
    this.pending.clear();
  }

  async elicitInput(
    params: Parameters<ElicitingServer['elicitInput']>[0],
    options?: Parameters<ElicitingServer['elicitInput']>[1],
  ): ReturnType<ElicitingServer['elicitInput']> {
    const id = `${OWN_ID_PREFIX}${String(this.nextId++)}`;
    const signal = options?.signal;
    const answer = await new Promise<Answer>((resolve) => {
      const settle = (value: Answer) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
        resolve(value);
      };
      const giveUp = (reason: string) => {
        if (!this.pending.has(id)) return;
        this.sendToHost({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } });
        settle({ ok: false, message: reason });
      };
      const onAbort = () => {
        giveUp('the tool call was cancelled');
      };
      const timer = setTimeout(giveUp, options?.timeout ?? 60_000, 'no answer in time');
      this.pending.set(id, settle);
      if (signal?.aborted === true) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sendToHost({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { ...params } });
    });
    if (!answer.ok) throw new Error(`elicitation failed: ${answer.message}`);
    const result = answer.result;
    const action = isJsonObject(result) ? result.action : undefined;
    const content = isJsonObject(result) ? result.content : undefined;
    if ((action !== 'accept' && action !== 'decline' && action !== 'cancel') || (content !== undefined && !isJsonObject(content)))
      throw new Error('elicitation failed: the host answered something that is not an elicitation result');
    return { action, content };
  }
}
