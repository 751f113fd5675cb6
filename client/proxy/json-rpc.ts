/**
 * JSON-RPC 2.0 as `idea-mcp-proxy` reads it, without the MCP SDK: the message shapes, the error
 * codes, and one pass over a line's text that finds what `JSON.parse` hides (a key given twice, the
 * exact text of the id). The proxy forwards the bytes it received, so it must know that the
 * message it decided on is the one every parser downstream reads.
 */
import { isJsonObject } from '../decision.js';

export type RequestId = string | number;
export type JsonObject = Record<string, unknown>;

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: RequestId;
  method: string;
  params?: JsonObject;
}
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: JsonObject;
}
export interface JsonRpcResult {
  jsonrpc: '2.0';
  id: RequestId;
  result: JsonObject;
}
export interface JsonRpcError {
  jsonrpc: '2.0';
  id: RequestId | null;
  error: { code: number; message: string; data?: unknown };
}
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResult | JsonRpcError;

/** JSON-RPC's and MCP's error codes the proxy answers with. */
export const RpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** The SDKs' code for a connection that closed before the answer. */
  ConnectionClosed: -32000,
} as const;

export function isRequestId(value: unknown): value is RequestId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** The message `value` is, or why it is none (`id` then says whom to answer, when that can be told). */
export function asJsonRpcMessage(value: unknown): { ok: true; message: JsonRpcMessage } | { ok: false; why: string } {
  if (!isJsonObject(value)) return { ok: false, why: 'not a JSON object' };
  if (value.jsonrpc !== '2.0') return { ok: false, why: 'jsonrpc is not "2.0"' };
  if ('params' in value && !isJsonObject(value.params)) return { ok: false, why: 'params is not an object' };
  if ('method' in value) {
    if (typeof value.method !== 'string') return { ok: false, why: 'method is not a string' };
    if ('id' in value && !isRequestId(value.id)) return { ok: false, why: 'id is not a string or a number' };
    return { ok: true, message: value as unknown as JsonRpcMessage };
  }
  if ('result' in value === 'error' in value) return { ok: false, why: 'neither a request nor one answer' };
  if ('result' in value) {
    if (!isRequestId(value.id)) return { ok: false, why: 'id is not a string or a number' };
    if (!isJsonObject(value.result)) return { ok: false, why: 'result is not an object' };
    return { ok: true, message: value as unknown as JsonRpcMessage };
  }
  const { error } = value;
  if (!isJsonObject(error) || !Number.isInteger(error.code) || typeof error.message !== 'string')
    return { ok: false, why: 'error is not { code, message }' };
  if (value.id !== null && !isRequestId(value.id)) return { ok: false, why: 'id is not a string, a number or null' };
  return { ok: true, message: value as unknown as JsonRpcMessage };
}

/** What one pass over a line's JSON text found. */
export interface LineShape {
  /** The top-level `id` member's value exactly as written (`9007199254740993`, `"a"`), when there is one. */
  rawId: string | undefined;
  /** A key written twice in the top-level object. */
  duplicateAtTop: boolean;
  /** A key written twice in an object nested anywhere below it. */
  duplicateBelow: boolean;
  /** The deepest nesting of objects and arrays (the top-level object is 1). */
  depth: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * One pass over `text`, JSON that `JSON.parse` accepted: keys repeated within one object, the top
 * `id`'s text and the depth. No recursion, so any depth is read (a 4 MiB line nests 2 million deep).
 */
export function lineShape(text: string): LineShape {
  // Per open object its keys; `null` for an array.
  const stack: (Set<string> | null)[] = [];
  let expectingKey = false;
  let depth = 0;
  let duplicateAtTop = false;
  let duplicateBelow = false;
  let idStart = -1;
  let rawId: string | undefined;
  const endId = (at: number) => {
    if (idStart >= 0 && rawId === undefined) rawId = text.slice(idStart, at).trim();
  };
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      const end = stringEnd(text, index);
      const frame = stack[stack.length - 1];
      if (expectingKey && frame !== undefined && frame !== null) {
        const literal = text.slice(index, end + 1);
        const key = literal.includes('\\') ? (JSON.parse(literal) as string) : literal.slice(1, -1);
        if (frame.has(key)) {
          if (stack.length === 1) duplicateAtTop = true;
          else duplicateBelow = true;
        }
        frame.add(key);
        expectingKey = false;
        if (stack.length === 1 && key === 'id' && idStart < 0) idStart = text.indexOf(':', end + 1) + 1;
      }
      index = end;
    } else if (code === 0x7b /* { */) {
      stack.push(new Set());
      expectingKey = true;
      if (stack.length > depth) depth = stack.length;
    } else if (code === 0x5b /* [ */) {
      stack.push(null);
      expectingKey = false;
      if (stack.length > depth) depth = stack.length;
    } else if (code === 0x7d /* } */ || code === 0x5d /* ] */) {
      if (stack.length === 1) endId(index);
      stack.pop();
      expectingKey = false;
    } else if (code === 0x2c /* , */) {
      if (stack.length === 1) endId(index);
      expectingKey = stack[stack.length - 1] !== null;
    }
  }
  return { rawId, duplicateAtTop, duplicateBelow, depth };
}

/** The index of the quote that closes the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) return text.length - 1;
    let slashes = 0;
    while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

/**
 * The name a lenient reader could take `method` for: without surrounding whitespace or control
 * characters, case folded (the fold through upper case also reads `ſ` as `s` and `K` as `k`, as
 * Go's `strings.EqualFold` and Python's `casefold` do).
 */
export function looseMethodName(method: string): string {
  return (
    method
      // eslint-disable-next-line no-control-regex -- control characters are exactly what is stripped
      .replace(/^[\s\u0000-\u001f\u007f]+|[\s\u0000-\u001f\u007f]+$/gu, '')
      .toUpperCase()
      .toLowerCase()
  );
}

/** The members of a JSON-RPC message. */
export const MESSAGE_MEMBERS = ['jsonrpc', 'id', 'method', 'params', 'result', 'error'] as const;

/**
 * A key of `object` that is none of `names` but that a case-insensitive reader takes for one of
 * them (Go's encoding/json matches keys that way, the last one written winning), if any.
 */
export function lookalikeKey(object: JsonObject, names: readonly string[]): string | undefined {
  return Object.keys(object).find((key) => !names.includes(key) && names.includes(looseMethodName(key)));
}
