/**
 * The conformance example server's tools for the 2026-07-28 scenarios: `server-stateless`'s
 * diagnostic tools (their names are fixed by the suite) and the `input-required-result-*` tools,
 * which answer `input_required` until the retry carries what they asked for. Their `requestState`
 * is sealed with the SDK's codec under a key drawn when the process starts: one stdio process
 * serves every round of a flow.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import {
  acceptedContent,
  CLIENT_CAPABILITIES_META_KEY,
  createRequestStateCodec,
  inputRequired,
  ProtocolError,
  ProtocolErrorCode,
  type CallToolResult,
  type ClientCapabilities,
  type GetPromptResult,
  type InputRequests,
  type InputRequiredResult,
  type McpServer,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

export const requestStateCodec = createRequestStateCodec<Record<string, unknown>>({ key: new Uint8Array(randomBytes(32)) });

const NO_ARGS = z.object({});
type Answer = CallToolResult | InputRequiredResult;
const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const askFor = (message: string, field: string, type: 'string' | 'boolean') =>
  inputRequired.elicit({
    message,
    requestedSchema: {
      type: 'object',
      properties: { [field]: type === 'string' ? { type: 'string' } : { type: 'boolean' } },
      required: [field],
    },
  });

function registerStatelessDiagnostics(server: McpServer): void {
  server.registerTool(
    'test_missing_capability',
    { description: 'SEP-2575: requires the `sampling` client capability', inputSchema: NO_ARGS },
    (_args, ctx): Answer => {
      if (ctx.mcpReq.inputResponses?.llm_answer !== undefined) return text('sampling round-trip complete');
      return inputRequired({
        inputRequests: {
          llm_answer: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Reply with the single word: pong' } }],
            maxTokens: 16,
          }),
        },
      });
    },
  );
  server.registerTool(
    'test_streaming_elicitation',
    { description: 'SEP-2575: a response stream carrying no top-level JSON-RPC request', inputSchema: NO_ARGS },
    () => text('stream observed: result frames only, no top-level requests'),
  );
  server.registerTool(
    'test_logging_tool',
    { description: 'SEP-2575: logs only when the request set _meta.logLevel', inputSchema: NO_ARGS },
    async (_args, ctx) => {
      // eslint-disable-next-line @typescript-eslint/no-deprecated -- the request-scoped log is what the scenario checks
      await ctx.mcpReq.log('info', 'test_logging_tool ran');
      return text('logged through the request-scoped, logLevel-gated channel');
    },
  );
  server.registerTool(
    'test_trigger_tool_change',
    { description: 'Listen diagnostic (SEP-2575): sends tools/list_changed to the open subscriptions', inputSchema: NO_ARGS },
    () => {
      server.sendToolListChanged();
      return text('tools_list_changed published');
    },
  );
  server.registerTool(
    'test_trigger_prompt_change',
    { description: 'Listen diagnostic (SEP-2575): sends prompts/list_changed to the open subscriptions', inputSchema: NO_ARGS },
    () => {
      server.sendPromptListChanged();
      return text('prompts_list_changed published');
    },
  );
}

function registerRoundTrips(server: McpServer): void {
  server.registerTool(
    'test_input_required_result_elicitation',
    { description: 'MRTR (SEP-2322): asks for the caller name via an in-band elicitation request', inputSchema: NO_ARGS },
    (_args, ctx): Answer => {
      const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'user_name')?.name;
      if (typeof name === 'string') return text(`Hello, ${name}!`);
      return inputRequired({ inputRequests: { user_name: askFor('What is your name?', 'name', 'string') } });
    },
  );
  server.registerTool(
    'test_input_required_result_sampling',
    { description: 'MRTR (SEP-2322): asks for an LLM completion via an in-band sampling request', inputSchema: NO_ARGS },
    (_args, ctx): Answer => {
      const response = ctx.mcpReq.inputResponses?.capital_question as { content?: { text?: unknown } } | undefined;
      if (response !== undefined) {
        const answer = typeof response.content?.text === 'string' ? response.content.text : JSON.stringify(response);
        return text(`Sampling response: ${answer}`);
      }
      return inputRequired({
        inputRequests: {
          capital_question: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
            maxTokens: 100,
          }),
        },
      });
    },
  );
  server.registerTool(
    'test_input_required_result_list_roots',
    { description: 'MRTR (SEP-2322): asks for the client roots via an in-band roots/list request', inputSchema: NO_ARGS },
    (_args, ctx): Answer => {
      const roots = (ctx.mcpReq.inputResponses?.client_roots as { roots?: { uri?: string }[] } | undefined)?.roots;
      if (!Array.isArray(roots)) return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      return text(`Client exposed ${String(roots.length)} root(s): ${roots.map((root) => String(root.uri)).join(', ')}`);
    },
  );
  server.registerTool(
    'test_input_required_result_request_state',
    { description: 'MRTR (SEP-2322): round-trips integrity-protected requestState', inputSchema: NO_ARGS },
    async (_args, ctx): Promise<Answer> => {
      if (acceptedContent(ctx.mcpReq.inputResponses, 'confirm') === undefined) {
        return inputRequired({
          inputRequests: { confirm: askFor('Please confirm', 'ok', 'boolean') },
          requestState: await requestStateCodec.mint({ tool: 'request_state', nonce: randomUUID() }),
        });
      }
      // The server's requestState.verify hook has already checked the seal.
      if (ctx.mcpReq.requestState() === undefined)
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, 'Invalid requestState: missing or failed integrity verification');
      return text('state-ok: requestState verified and confirmation received');
    },
  );
  server.registerTool(
    'test_input_required_result_multiple_inputs',
    { description: 'MRTR (SEP-2322): asks for elicitation, sampling and roots input in one round', inputSchema: NO_ARGS },
    async (_args, ctx): Promise<Answer> => {
      const responses = ctx.mcpReq.inputResponses;
      const name = acceptedContent<{ name: string }>(responses, 'user_name')?.name;
      const greeting = (responses?.greeting as { content?: { text?: unknown } } | undefined)?.content?.text;
      const roots = (responses?.client_roots as { roots?: unknown[] } | undefined)?.roots;
      if (typeof name === 'string' && typeof greeting === 'string' && Array.isArray(roots))
        return text(`${greeting} ${name} — ${String(roots.length)} root(s) visible`);
      return inputRequired({
        inputRequests: {
          user_name: askFor('What is your name?', 'name', 'string'),
          greeting: inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
            maxTokens: 50,
          }),
          client_roots: inputRequired.listRoots(),
        },
        requestState: await requestStateCodec.mint({ tool: 'multiple_inputs', nonce: randomUUID() }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_multi_round',
    { description: 'MRTR (SEP-2322): two elicitation rounds with evolving requestState', inputSchema: NO_ARGS },
    async (_args, ctx): Promise<Answer> => {
      const state = ctx.mcpReq.requestState<Record<string, unknown>>();
      const round = state?.tool === 'multi_round' && typeof state.round === 'number' ? state.round : 0;
      if (round === 0) {
        return inputRequired({
          inputRequests: { step1: askFor('Step 1: What is your name?', 'name', 'string') },
          requestState: await requestStateCodec.mint({ tool: 'multi_round', round: 1, nonce: randomUUID() }),
        });
      }
      if (round === 1) {
        const name = acceptedContent<{ name: string }>(ctx.mcpReq.inputResponses, 'step1')?.name ?? 'unknown';
        return inputRequired({
          inputRequests: { step2: askFor('Step 2: What is your favorite color?', 'color', 'string') },
          requestState: await requestStateCodec.mint({ tool: 'multi_round', round: 2, name, nonce: randomUUID() }),
        });
      }
      const color = acceptedContent<{ color: string }>(ctx.mcpReq.inputResponses, 'step2')?.color ?? 'unknown';
      return text(`Multi-round complete: ${typeof state?.name === 'string' ? state.name : 'unknown'} likes ${color}`);
    },
  );
  server.registerTool(
    'test_input_required_result_tampered_state',
    { description: 'MRTR (SEP-2322): rejects retries whose requestState fails integrity verification', inputSchema: NO_ARGS },
    async (_args, ctx): Promise<Answer> => {
      if (ctx.mcpReq.requestState() !== undefined && acceptedContent(ctx.mcpReq.inputResponses, 'confirm') !== undefined)
        return text('integrity-ok: requestState verified');
      return inputRequired({
        inputRequests: { confirm: askFor('Please confirm', 'ok', 'boolean') },
        requestState: await requestStateCodec.mint({ tool: 'tampered_state', nonce: randomUUID() }),
      });
    },
  );
  server.registerTool(
    'test_input_required_result_capabilities',
    { description: 'MRTR (SEP-2322): only requests input kinds the declared client capabilities cover', inputSchema: NO_ARGS },
    (_args, ctx): Answer => {
      if (ctx.mcpReq.inputResponses !== undefined) return text('Capability-aware input requests fulfilled');
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
      const inputRequests: InputRequests = {};
      if (declared?.elicitation !== undefined) inputRequests.user_name = askFor('What is your name?', 'name', 'string');
      if (declared?.sampling !== undefined)
        inputRequests.greeting = inputRequired.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: 'Generate a short greeting' } }],
          maxTokens: 50,
        });
      if (declared?.roots !== undefined) inputRequests.client_roots = inputRequired.listRoots();
      if (Object.keys(inputRequests).length === 0) return text('No declared client capability supports an in-band input request');
      return inputRequired({ inputRequests });
    },
  );
  server.registerPrompt(
    'test_input_required_result_prompt',
    { title: 'MRTR Prompt', description: 'MRTR (SEP-2322): prompt that requires elicitation input before rendering' },
    (ctx): GetPromptResult | InputRequiredResult => {
      const context = acceptedContent<{ context: string }>(ctx.mcpReq.inputResponses, 'user_context')?.context;
      if (typeof context !== 'string')
        return inputRequired({ inputRequests: { user_context: askFor('What context should the prompt use?', 'context', 'string') } });
      return { messages: [{ role: 'user', content: { type: 'text', text: `Use the following context: ${context}` } }] };
    },
  );
}

export function registerModernTools(server: McpServer): void {
  registerStatelessDiagnostics(server);
  registerRoundTrips(server);
}
