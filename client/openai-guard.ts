/**
 * Enforcement point for an OpenAI-compatible tool-call invoker (SPEC §8): the tool calls of one
 * model turn are decided in one `/decide/batch` round trip, only the allowed ones are invoked, and
 * every call gets its output message, in order. A refusal's text is the MCP guard's, word for word.
 */
import { decideQueryFor, isJsonObject, localDenial, refusalText, type ClientDecision } from './decision.js';
import { resolveRequester, unresolvedRequesterDenial, type GuardClient, type GuardLogger } from './guard-common.js';
import type { DecideQuery } from '../schemas/api.js';

/** A Chat Completions `tool_calls[]` entry (`ChatCompletionMessageToolCall` of the `openai` package). */
export interface ChatCompletionToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A Chat Completions custom (free-text) tool call: always refused, it has no JSON arguments. */
export interface ChatCompletionCustomToolCall {
  id: string;
  type: 'custom';
  custom: { name: string; input: string };
}

/** A Responses API `function_call` output item. */
export interface ResponsesFunctionCall {
  type: 'function_call';
  call_id: string;
  name: string;
  arguments: string;
  id?: string | undefined;
  status?: string | undefined;
}

export type OpenAiToolCall = ChatCompletionToolCall | ChatCompletionCustomToolCall | ResponsesFunctionCall;

/** The Chat Completions message that answers one tool call. */
export interface ChatCompletionToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

/** The Responses API input item that answers one `function_call`. */
export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

export type OpenAiToolOutput<C extends OpenAiToolCall> = C extends ResponsesFunctionCall
  ? ResponsesFunctionCallOutput
  : ChatCompletionToolMessage;

export interface OpenAiGuardOptions<C extends OpenAiToolCall> {
  client: GuardClient;
  project: string;
  /** The agent running this loop: its id, or a function returning it. Never read from the arguments. */
  requester: string | (() => string | Promise<string>);
  /** Runs an allowed call. A string result is sent as is, anything else as JSON. */
  invoke: (name: string, args: Record<string, unknown>, call: C) => unknown;
  logger?: GuardLogger;
  /** Called with every call's decision, in order (audit, tests). */
  onDecision?: (decision: ClientDecision, call: C) => void;
}

interface PreparedCall {
  name: string;
  args: Record<string, unknown> | undefined;
  /** Set when the call is refused without asking the service. */
  refusal: ClientDecision | undefined;
}

/**
 * Decides the tool calls of one model turn and invokes only the allowed ones, one after the other
 * in the model's order. Returns one output per call, in order: `{ role: "tool", tool_call_id,
 * content }` for Chat Completions calls, `{ type: "function_call_output", call_id, output }` for
 * Responses API calls. Never throws because of the service or of one call's `invoke`.
 *
 * @example
 * ```ts
 * const message = completion.choices[0].message;
 * const outputs = await guardOpenAiToolCalls(message.tool_calls ?? [], {
 *   client: pdp, project: 'demo', requester: 'QA', invoke: (name, args) => tools[name](args),
 * });
 * messages.push(message, ...outputs);
 * ```
 */
export async function guardOpenAiToolCalls<C extends OpenAiToolCall>(
  calls: readonly C[],
  options: OpenAiGuardOptions<C>,
): Promise<OpenAiToolOutput<C>[]> {
  const who = await resolveRequester(options.requester);
  const prepared = calls.map((call) => prepare(call, options.project, who));
  const queries: DecideQuery[] = [];
  const queryIndex: number[] = [];
  prepared.forEach((entry, index) => {
    if (entry.refusal !== undefined || !who.ok) return;
    queries.push(decideQueryFor(options.project, who.requester, entry.name, entry.args));
    queryIndex.push(index);
  });
  const decisions: (ClientDecision | undefined)[] = prepared.map((entry) => entry.refusal);
  const answers = queries.length === 0 ? [] : await options.client.decideBatch(queries);
  queryIndex.forEach((callIndex, answerIndex) => {
    // A missing answer cannot happen with PdpClient; a substitute client must not turn it into an allow.
    decisions[callIndex] =
      answers[answerIndex] ?? localDenial(queries[answerIndex] as DecideQuery, 'pdp_unavailable', 'no decision for this call');
  });

  const outputs: OpenAiToolOutput<C>[] = [];
  for (const [index, call] of calls.entries()) {
    const decision = decisions[index] as ClientDecision;
    const entry = prepared[index] as PreparedCall;
    options.onDecision?.(decision, call);
    const text = decision.allow ? await invokeSafely(options, entry, call) : refusalText(decision);
    outputs.push(outputFor(call, text));
  }
  return outputs;
}

function prepare(call: OpenAiToolCall, project: string, who: { ok: true; requester: string } | { ok: false; cause: string }): PreparedCall {
  const { kind, name, rawArguments } = nameAndArguments(call);
  if (!who.ok) return { name, args: undefined, refusal: unresolvedRequesterDenial(project, name, who.cause) };
  const query = { project, requester: who.requester, tool: name };
  const refuse = (cause: string): PreparedCall => ({ name, args: undefined, refusal: localDenial(query, 'invalid_call', cause) });
  if (kind === 'unknown') return refuse('the tool call is neither a function call nor a custom tool call');
  if (kind === 'custom') return refuse('free-text (custom) tool calls are not supported');
  if (typeof rawArguments !== 'string') return refuse('the arguments are not a JSON string');
  let args: unknown;
  try {
    args = JSON.parse(rawArguments);
  } catch {
    return refuse('the arguments are not valid JSON');
  }
  if (!isJsonObject(args)) return refuse('the arguments are not a JSON object');
  return { name, args, refusal: undefined };
}

/**
 * The tool name and raw JSON arguments of a call, read defensively: the calls come from a model
 * server, whose JSON the types only describe. `custom` calls carry free text, not arguments.
 */
function nameAndArguments(call: OpenAiToolCall): { kind: 'function' | 'custom' | 'unknown'; name: string; rawArguments: unknown } {
  const loose = call as unknown as Record<string, unknown>;
  if (call.type === 'function_call') return { kind: 'function', name: String(call.name), rawArguments: call.arguments };
  const fn = loose['function'];
  // Some OpenAI-compatible servers leave out `type: "function"` on Chat Completions tool calls.
  if ((call.type === 'function' || loose['type'] === undefined) && isJsonObject(fn)) {
    return { kind: 'function', name: String(fn['name']), rawArguments: fn['arguments'] };
  }
  const custom = loose['custom'];
  if (call.type === 'custom' && isJsonObject(custom)) return { kind: 'custom', name: String(custom['name']), rawArguments: undefined };
  return { kind: 'unknown', name: String(loose['name'] ?? 'unknown'), rawArguments: undefined };
}

async function invokeSafely<C extends OpenAiToolCall>(options: OpenAiGuardOptions<C>, entry: PreparedCall, call: C): Promise<string> {
  try {
    const result: unknown = await options.invoke(entry.name, entry.args ?? {}, call);
    if (typeof result === 'string') return result;
    return JSON.stringify(result) ?? '';
  } catch (error) {
    const cause = error instanceof Error ? error.message : String(error);
    options.logger?.warn({ project: options.project, tool: entry.name, cause }, 'tool invocation failed');
    return `Tool ${entry.name} failed: ${cause}`;
  }
}

function outputFor<C extends OpenAiToolCall>(call: C, text: string): OpenAiToolOutput<C> {
  if (call.type === 'function_call') {
    return { type: 'function_call_output', call_id: call.call_id, output: text } as OpenAiToolOutput<C>;
  }
  return { role: 'tool', tool_call_id: call.id, content: text } as OpenAiToolOutput<C>;
}
