/**
 * What the proxy refuses to pass on from the host, because a server downstream could read the bytes
 * as something other than what the proxy decided on: the proxy forwards lines as received, so a
 * line two parsers read differently would let a tool call through undecided.
 */
import { isJsonObject } from '../decision.js';
import { lookalikeKey, looseMethodName, MESSAGE_MEMBERS, type JsonRpcMessage } from './json-rpc.js';
import type { Received } from './json-rpc-channel.js';

/** The methods the proxy decides before forwarding. */
export const DECIDED_METHODS: readonly string[] = ['tools/call'];

/** Why a host message may not be passed on (whatever its method), or `undefined`. */
export function envelopeProblem({ message, shape, utf8 }: Received): string | undefined {
  // Some readers drop or replace bytes that are not UTF-8 differently: "tools/call\xff" may end up "tools/call".
  if (!utf8) return 'the message is not valid UTF-8';
  if (shape?.duplicateAtTop === true) return 'a member of the message is given twice';
  const lookalike = lookalikeKey(message as unknown as Record<string, unknown>, MESSAGE_MEMBERS);
  if (lookalike !== undefined) return `member ${JSON.stringify(lookalike.slice(0, 40))} is not a JSON-RPC member`;
  return undefined;
}

/** The decided method `method` is a spelling of without being it (`Tools/Call`, `tools/call `), or `undefined`. */
export function decidedMethodSpelling(method: string, decidedMethods: readonly string[] = DECIDED_METHODS): string | undefined {
  if (decidedMethods.includes(method)) return undefined;
  const loose = looseMethodName(method);
  return decidedMethods.find((decided) => decided === loose);
}

/** Why the params of a decided request are ambiguous (the server could run other arguments than those decided), or `undefined`. */
export function decidedParamsProblem(
  message: JsonRpcMessage,
  received: Received,
  members: readonly string[] = ['name', 'arguments'],
): string | undefined {
  const params = 'params' in message ? message.params : undefined;
  if (received.shape?.duplicateBelow === true) return 'a key is given twice in params';
  if (!isJsonObject(params)) return undefined;
  const lookalike = lookalikeKey(params, members);
  const method = 'method' in message ? message.method : 'tools/call';
  if (lookalike !== undefined) return `params.${lookalike.slice(0, 40)} is not a ${method} parameter`;
  return undefined;
}
