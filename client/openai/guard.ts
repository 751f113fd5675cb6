/**
 * Enforcement point for an OpenAI-compatible tool-call invoker (docs/api.md#the-client-sdk): the tool calls of
 * one model turn are decided in one `/decide/batch` round trip, only the allowed ones are invoked,
 * and every call gets its output message, in order. A refusal's text is the MCP guard's, word for word.
 */
import { errorText } from '../causes.js';
import { decideQueryFor, formatRefusalSafely, isJsonObject, localDenial, type ClientDecision, type FormatRefusal } from '../decision.js';
import {
  guardLogger,
  resolveHostValue,
  unresolvedDenial,
  type GuardClient,
  type GuardLogger,
  type HostValue,
  type Resolved,
} from '../guards/common.js';
import type { DecideQuery } from '../../schemas/api.js';
import { approvalWaitMsOf, settleApproval, type ApprovalWaitOptions } from '../guards/approval-wait.js';

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

/** Options of {@link guardOpenAiToolCalls}. */
export interface OpenAiGuardOptions<C extends OpenAiToolCall> {
  /** A {@link PdpClient} (or anything with its `decide`, `decideBatch`, `effective` and `timeoutMs`). */
  client: GuardClient;
  /** The project the tools act on: its id, or a function returning it. */
  project: HostValue<[]>;
  /** The agent running this loop: its id, or a function returning it. Never read from the arguments. */
  requester: HostValue<[]>;
  /** Runs an allowed call. A string result is sent as is, anything else as JSON. */
  invoke: (name: string, args: Record<string, unknown>, call: C) => unknown;
  /**
   * How many allowed calls may run at once. Default 1: one after the other, in the model's order.
   * The outputs are in the calls' order whatever the concurrency.
   */
  concurrency?: number | undefined;
  /** Words the text of a refused call (default: the decision's message). Give the MCP guard the same function to keep parity. */
  formatRefusal?: FormatRefusal | undefined;
  /**
   * Calls that need the user's approval (`approval_required`, docs/api.md#approvals-and-temporary-grants): with `waitMs` > 0
   * they wait up to that long for the answer (side by side), then run or are refused. Default 0:
   * refused at once with a text that says approval was requested and to retry later.
   */
  approval?: ApprovalWaitOptions | undefined;
  /** The turn was abandoned: the decisions still pending (and approvals awaited) are denied at once. */
  signal?: AbortSignal | undefined;
  /** Where the guard's warnings go (a failed invocation). Default: `process.emitWarning`, on stderr. */
  logger?: GuardLogger | undefined;
  /** Called with every call's final decision (after any approval wait), in order, before any call runs (audit, tests). */
  onDecision?: ((decision: ClientDecision, call: C) => void) | undefined;
}

/** What {@link guardOpenAiToolCalls} returns: one output and one decision per call, in the calls' order. */
export interface GuardedToolCalls<C extends OpenAiToolCall> {
  /** The messages (Chat Completions) or input items (Responses API) to send back to the model. */
  outputs: OpenAiToolOutput<C>[];
  /** The decision each call got; `outputs[i]` answers `calls[i]` under `decisions[i]`. */
  decisions: ClientDecision[];
}

interface PreparedCall {
  name: string;
  args: Record<string, unknown> | undefined;
  /** Set when the call is refused without asking the service. */
  refusal: ClientDecision | undefined;
}

/**
 * Decides the tool calls of one model turn and invokes only the allowed ones (one at a time by
 * default, up to `concurrency` at once). Returns one output per call, in order:
 * `{ role: "tool", tool_call_id, content }` for Chat Completions calls,
 * `{ type: "function_call_output", call_id, output }` for Responses API calls, and the decisions.
 * Never throws because of the service or of one call's `invoke`.
 *
 * @example
 * ```ts
 * import { PdpClient } from 'idea-mcp-permissions-client';
 * import { guardOpenAiToolCalls } from 'idea-mcp-permissions-client/openai';
 *
 * const pdp = new PdpClient({ baseUrl: 'http://127.0.0.1:8787', token: process.env.PDP_DECIDE_TOKEN });
 * const message = completion.choices[0].message;
 * const { outputs } = await guardOpenAiToolCalls(message.tool_calls ?? [], {
 *   client: pdp, project: 'demo', requester: process.env.IDEA_AGENT_ID ?? '', concurrency: 4,
 *   invoke: (name, args) => tools[name](args),
 * });
 * messages.push(message, ...outputs);
 * ```
 */
export async function guardOpenAiToolCalls<C extends OpenAiToolCall>(
  calls: readonly C[],
  options: OpenAiGuardOptions<C>,
): Promise<GuardedToolCalls<C>> {
  const concurrency = concurrencyOf(options.concurrency);
  const waitMs = approvalWaitMsOf('guardOpenAiToolCalls', options.approval);
  const [project, who] = await Promise.all([resolveHostValue(options.project), resolveHostValue(options.requester)]);
  const prepared = calls.map((call) => prepare(call, project, who));
  const queries: DecideQuery[] = [];
  const queryIndex: number[] = [];
  prepared.forEach((entry, index) => {
    if (entry.refusal !== undefined || !project.ok || !who.ok) return;
    queries.push(decideQueryFor(project.value, who.value, entry.name, entry.args));
    queryIndex.push(index);
  });
  const decisions: (ClientDecision | undefined)[] = prepared.map((entry) => entry.refusal);
  const answers = queries.length === 0 ? [] : await options.client.decideBatch(queries, { signal: options.signal });
  queryIndex.forEach((callIndex, answerIndex) => {
    // A missing answer cannot happen with PdpClient; a substitute client must not turn it into an allow.
    decisions[callIndex] =
      answers[answerIndex] ?? localDenial(queries[answerIndex] as DecideQuery, 'pdp_unavailable', 'no decision for this call');
  });
  if (waitMs > 0) {
    // Calls waiting for an approval wait side by side; each runs only if decided again as allowed.
    await Promise.all(
      queryIndex.map(async (callIndex, answerIndex) => {
        const first = decisions[callIndex] as ClientDecision;
        decisions[callIndex] = await settleApproval(options.client, queries[answerIndex] as DecideQuery, first, waitMs, options.signal);
      }),
    );
  }
  const decided = decisions as ClientDecision[];
  calls.forEach((call, index) => options.onDecision?.(decided[index] as ClientDecision, call));

  const texts: string[] = decided.map((decision) => (decision.allow ? '' : formatRefusalSafely(decision, options.formatRefusal)));
  const allowed = decided.flatMap((decision, index) => (decision.allow ? [index] : []));
  await runBounded(allowed, concurrency, async (index) => {
    texts[index] = await invokeSafely(options, prepared[index] as PreparedCall, calls[index] as C, project);
  });
  return { outputs: calls.map((call, index) => outputFor(call, texts[index] ?? '')), decisions: decided };
}

function concurrencyOf(value: number | undefined): number {
  if (value === undefined) return 1;
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`guardOpenAiToolCalls: concurrency must be a whole number of at least 1 (got ${String(value)})`);
  return value;
}

/** Runs `work` on every item, at most `limit` at once, starting them in order. */
async function runBounded(items: readonly number[], limit: number, work: (item: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next] as number;
      next += 1;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

function prepare(call: OpenAiToolCall, project: Resolved, who: Resolved): PreparedCall {
  const { kind, name, rawArguments } = nameAndArguments(call);
  if (!project.ok || !who.ok) return { name, args: undefined, refusal: unresolvedDenial(project, who, name) };
  const query = { project: project.value, requester: who.value, tool: name };
  const refuse = (reason: 'invalid_call' | 'invalid_arguments', cause: string): PreparedCall => ({
    name,
    args: undefined,
    refusal: localDenial(query, reason, cause),
  });
  if (kind === 'unknown') return refuse('invalid_call', 'the tool call is neither a function call nor a custom tool call');
  if (kind === 'custom') return refuse('invalid_call', 'free-text (custom) tool calls are not supported');
  if (typeof rawArguments !== 'string') return refuse('invalid_arguments', 'the arguments are not a JSON string');
  let args: unknown;
  try {
    args = JSON.parse(rawArguments);
  } catch {
    return refuse('invalid_arguments', 'the arguments are not valid JSON');
  }
  if (!isJsonObject(args)) return refuse('invalid_arguments', 'the arguments are not a JSON object');
  return { name, args, refusal: undefined };
}

/**
 * The tool name and raw JSON arguments of a call, read defensively: the calls come from a model
 * server, whose JSON the types only describe. `custom` calls carry free text, not arguments.
 */
function nameAndArguments(call: OpenAiToolCall): { kind: 'function' | 'custom' | 'unknown'; name: string; rawArguments: unknown } {
  const loose = call as unknown as Record<string, unknown>;
  if (call.type === 'function_call') return { kind: 'function', name: nameText(loose.name), rawArguments: call.arguments };
  const fn = loose.function;
  // Some OpenAI-compatible servers leave out `type: "function"` on Chat Completions tool calls.
  if ((call.type === 'function' || loose.type === undefined) && isJsonObject(fn)) {
    return { kind: 'function', name: nameText(fn.name), rawArguments: fn.arguments };
  }
  const custom = loose.custom;
  if (call.type === 'custom' && isJsonObject(custom)) return { kind: 'custom', name: nameText(custom.name), rawArguments: undefined };
  return { kind: 'unknown', name: nameText(loose.name), rawArguments: undefined };
}

/** A tool name as a model sent it: a name that is not a string is no tool (and never "[object Object]" in a refusal). */
function nameText(value: unknown): string {
  return typeof value === 'string' ? value : 'unknown';
}

async function invokeSafely<C extends OpenAiToolCall>(
  options: OpenAiGuardOptions<C>,
  entry: PreparedCall,
  call: C,
  project: Resolved,
): Promise<string> {
  try {
    const result: unknown = await options.invoke(entry.name, entry.args ?? {}, call);
    if (typeof result === 'string') return result;
    // JSON.stringify answers undefined for undefined or a function, whatever its type says.
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see above
    return JSON.stringify(result) ?? '';
  } catch (error) {
    const cause = errorText(error);
    guardLogger(options.logger).warn(
      { project: project.ok ? project.value : undefined, tool: entry.name, cause },
      'tool invocation failed',
    );
    return `Tool ${entry.name} failed: ${cause}`;
  }
}

function outputFor<C extends OpenAiToolCall>(call: C, text: string): OpenAiToolOutput<C> {
  if (call.type === 'function_call') {
    return { type: 'function_call_output', call_id: call.call_id, output: text } as OpenAiToolOutput<C>;
  }
  return { role: 'tool', tool_call_id: call.id, content: text } as OpenAiToolOutput<C>;
}
