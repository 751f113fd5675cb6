/**
 * The tools of the conformance suite's reference "everything" server (the suite's package ships
 * its checks, not that server): the same names, arguments and answers, since the suite calls
 * them by name and checks their results.
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import {
  ElicitResultSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

export const TEST_IMAGE_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const TEST_AUDIO_BASE64 = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

/** The tool whose listed input schema must keep `$schema`, `$defs` and `additionalProperties` (JSON Schema 2020-12). */
const JSON_SCHEMA_2020_12_INPUT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object' as const,
  $defs: { address: { type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: { name: { type: 'string' }, address: { $ref: '#/$defs/address' } },
  additionalProperties: false,
};

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type Shape = Record<string, z.ZodType>;
interface ToolSpec {
  name: string;
  description: string;
  shape?: Shape;
  run(args: Record<string, unknown>, extra: Extra, server: McpServer): Promise<CallToolResult>;
}

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks the client a question (`elicitation/create`) and words its answer, or why there is none. */
async function elicit(server: McpServer, params: { message: string; requestedSchema: unknown }, prefix: string): Promise<CallToolResult> {
  try {
    const result = await server.server.request({ method: 'elicitation/create', params: params as never }, ElicitResultSchema);
    return text(`${prefix}: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
  } catch (error) {
    return text(`Elicitation not supported or error: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const ENUM_SCHEMA = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
    titledSingle: {
      type: 'string',
      description: 'Select one option with titles',
      oneOf: [
        { const: 'value1', title: 'First Option' },
        { const: 'value2', title: 'Second Option' },
        { const: 'value3', title: 'Third Option' },
      ],
    },
    legacyEnum: {
      type: 'string',
      description: 'Select one option (legacy)',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Select multiple options',
      minItems: 1,
      maxItems: 3,
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Select multiple options with titles',
      minItems: 1,
      maxItems: 3,
      items: {
        anyOf: [
          { const: 'value1', title: 'First Choice' },
          { const: 'value2', title: 'Second Choice' },
          { const: 'value3', title: 'Third Choice' },
        ],
      },
    },
  },
  required: [],
};

const DEFAULTS_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
  required: [],
};

export const EVERYTHING_TOOLS: readonly ToolSpec[] = [
  {
    name: 'test_simple_text',
    description: 'Tests simple text content response',
    run: () => Promise.resolve(text('This is a simple text response for testing.')),
  },
  {
    name: 'test_image_content',
    description: 'Tests image content response',
    run: () => Promise.resolve({ content: [{ type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' }] }),
  },
  {
    name: 'test_audio_content',
    description: 'Tests audio content response',
    run: () => Promise.resolve({ content: [{ type: 'audio', data: TEST_AUDIO_BASE64, mimeType: 'audio/wav' }] }),
  },
  {
    name: 'test_embedded_resource',
    description: 'Tests embedded resource content response',
    run: () =>
      Promise.resolve({
        content: [
          {
            type: 'resource',
            resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
          },
        ],
      }),
  },
  {
    name: 'test_multiple_content_types',
    description: 'Tests response with multiple content types (text, image, resource)',
    run: () =>
      Promise.resolve({
        content: [
          { type: 'text', text: 'Multiple content types test:' },
          { type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' },
          {
            type: 'resource',
            resource: {
              uri: 'test://mixed-content-resource',
              mimeType: 'application/json',
              text: JSON.stringify({ test: 'data', value: 123 }),
            },
          },
        ],
      }),
  },
  {
    name: 'test_tool_with_logging',
    description: 'Tests tool that emits log messages during execution',
    shape: {},
    run: async (_args, extra) => {
      for (const [index, data] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
        if (index > 0) await pause(50);
        await extra.sendNotification({ method: 'notifications/message', params: { level: 'info', data } });
      }
      return text('Tool with logging executed successfully');
    },
  },
  {
    name: 'test_tool_with_progress',
    description: 'Tests tool that reports progress notifications',
    shape: {},
    run: async (_args, extra) => {
      const progressToken = extra._meta?.progressToken ?? 0;
      for (const progress of [0, 50, 100]) {
        if (progress > 0) await pause(50);
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress, total: 100, message: `Completed step ${progress} of 100` },
        });
      }
      return text(String(progressToken));
    },
  },
  {
    name: 'test_error_handling',
    description: 'Tests error response handling',
    run: () => Promise.reject(new Error('This tool intentionally returns an error for testing')),
  },
  {
    name: 'test_reconnection',
    description: 'Tests SSE stream disconnection and client reconnection: the stream closes mid-call, the result follows the reconnection.',
    shape: {},
    run: async (_args, extra) => {
      extra.closeSSEStream?.();
      await pause(100);
      return text('Reconnection test completed successfully. If you received this, the client properly reconnected after stream closure.');
    },
  },
  {
    name: 'test_sampling',
    description: 'Tests server-initiated sampling (LLM completion request)',
    shape: { prompt: z.string().describe('The prompt to send to the LLM') },
    run: async (args, _extra, server) => {
      try {
        const result = await server.server.createMessage({
          messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt) } }],
          maxTokens: 100,
        });
        const content = result.content as { text?: string };
        return text(`LLM response: ${content.text ?? 'No response'}`);
      } catch (error) {
        return text(`Sampling not supported or error: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  },
  {
    name: 'test_elicitation',
    description: 'Tests server-initiated elicitation (user input request)',
    shape: { message: z.string().describe('The message to show the user') },
    run: (args, _extra, server) =>
      elicit(
        server,
        {
          message: String(args.message),
          requestedSchema: {
            type: 'object',
            properties: { response: { type: 'string', description: "User's response" } },
            required: ['response'],
          },
        },
        'User response',
      ),
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Tests elicitation with default values per SEP-1034',
    shape: {},
    run: (_args, _extra, server) =>
      elicit(
        server,
        { message: 'Please review and update the form fields with defaults', requestedSchema: DEFAULTS_SCHEMA },
        'Elicitation completed',
      ),
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Tests elicitation with enum schema improvements per SEP-1330',
    shape: {},
    run: (_args, _extra, server) =>
      elicit(server, { message: 'Please select options from the enum fields', requestedSchema: ENUM_SCHEMA }, 'Elicitation completed'),
  },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613)',
    shape: {
      name: z.string().optional(),
      address: z.object({ street: z.string().optional(), city: z.string().optional() }).optional(),
    },
    run: (args) => Promise.resolve(text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)),
  },
];

/** Registers the tools, and a `tools/list` that keeps the 2020-12 schema as written (the SDK's conversion drops `$defs`). */
export function registerEverythingTools(server: McpServer): void {
  for (const tool of EVERYTHING_TOOLS) {
    if (tool.shape === undefined) {
      server.registerTool(tool.name, { description: tool.description }, (extra) => tool.run({}, extra, server));
    } else {
      server.registerTool(tool.name, { description: tool.description, inputSchema: tool.shape }, (args: Record<string, unknown>, extra) =>
        tool.run(args, extra, server),
      );
    }
  }
  server.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: EVERYTHING_TOOLS.map((tool): Tool => ({
      name: tool.name,
      description: tool.description,
      inputSchema:
        tool.name === 'json_schema_2020_12_tool'
          ? JSON_SCHEMA_2020_12_INPUT_SCHEMA
          : tool.shape === undefined
            ? { type: 'object', properties: {} }
            : (toJsonSchemaCompat(z.object(tool.shape), { strictUnions: true, pipeStrategy: 'input' }) as Tool['inputSchema']),
    })),
  }));
}
