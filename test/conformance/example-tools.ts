/**
 * The tools of the conformance example server that every era calls: the names, arguments and
 * answers the official suite's server scenarios expect (the suite calls them by name and checks
 * their results). Written against the v2 SDK (`@modelcontextprotocol/server`).
 */
import { fromJsonSchema, type CallToolResult, type McpServer, type ServerContext } from '@modelcontextprotocol/server';
import { z } from 'zod';

export const TEST_IMAGE_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const TEST_AUDIO_BASE64 = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const NO_ARGS = z.object({});

/** Asks the client (2025-11-25: a request to the host) and words its answer, or why there is none. */
async function elicit(ctx: ServerContext, message: string, requestedSchema: Record<string, unknown>, prefix: string) {
  try {
    const result = (await ctx.mcpReq.send({ method: 'elicitation/create', params: { message, requestedSchema } })) as {
      action?: string;
      content?: unknown;
    };
    return text(`${prefix}: action=${String(result.action)}, content=${JSON.stringify(result.content ?? {})}`);
  } catch (error) {
    return text(`Elicitation not supported or error: ${error instanceof Error ? error.message : String(error)}`);
  }
}

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

const ENUMS_SCHEMA = {
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

/** JSON Schema 2020-12 keywords the `json-schema-2020-12` scenario looks for in `tools/list`, verbatim. */
const JSON_SCHEMA_2020_12 = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  $defs: { address: { $anchor: 'addressDef', type: 'object', properties: { street: { type: 'string' }, city: { type: 'string' } } } },
  properties: {
    name: { type: 'string' },
    address: { $ref: '#/$defs/address' },
    contactMethod: { type: 'string', enum: ['phone', 'email'] },
    phone: { type: 'string' },
    email: { type: 'string' },
  },
  allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
  if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
  then: { required: ['phone'] },
  else: { required: ['email'] },
  additionalProperties: false,
};

export function registerClassicTools(server: McpServer): void {
  server.registerTool('test_simple_text', { description: 'Tests simple text content response' }, () =>
    text('This is a simple text response for testing.'),
  );
  server.registerTool('test_image_content', { description: 'Tests image content response' }, () => ({
    content: [{ type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' }],
  }));
  server.registerTool('test_audio_content', { description: 'Tests audio content response' }, () => ({
    content: [{ type: 'audio', data: TEST_AUDIO_BASE64, mimeType: 'audio/wav' }],
  }));
  server.registerTool('test_embedded_resource', { description: 'Tests embedded resource content response' }, () => ({
    content: [
      {
        type: 'resource',
        resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' },
      },
    ],
  }));
  server.registerTool(
    'test_multiple_content_types',
    { description: 'Tests response with multiple content types (text, image, resource)' },
    () => ({
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
  );
  server.registerTool(
    'test_tool_with_logging',
    { description: 'Tests tool that emits log messages during execution', inputSchema: NO_ARGS },
    async (_args, ctx) => {
      for (const [index, data] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
        if (index > 0) await pause(50);
        await ctx.mcpReq.notify({ method: 'notifications/message', params: { level: 'info', data } });
      }
      return text('Tool with logging executed successfully');
    },
  );
  server.registerTool(
    'test_tool_with_progress',
    { description: 'Tests tool that reports progress notifications', inputSchema: NO_ARGS },
    async (_args, ctx) => {
      const progressToken = ctx.mcpReq._meta?.progressToken;
      // No progress without the client's token (the spec's MUST NOT).
      if (progressToken !== undefined) {
        for (const progress of [0, 50, 100]) {
          await ctx.mcpReq.notify({
            method: 'notifications/progress',
            params: { progressToken, progress, total: 100, message: `Completed step ${String(progress)} of 100` },
          });
          if (progress < 100) await pause(50);
        }
      }
      return text(String(progressToken ?? 'no-progress-token'));
    },
  );
  server.registerTool('test_error_handling', { description: 'Tests error response handling' }, () => {
    throw new Error('This tool intentionally returns an error for testing');
  });
  server.registerTool(
    'test_sampling',
    {
      description: 'Tests server-initiated sampling (LLM completion request)',
      inputSchema: z.object({ prompt: z.string().describe('The prompt to send to the LLM') }),
    },
    async (args, ctx) => {
      try {
        const result = (await ctx.mcpReq.send({
          method: 'sampling/createMessage',
          params: { messages: [{ role: 'user', content: { type: 'text', text: args.prompt } }], maxTokens: 100 },
        })) as { content?: { text?: string } };
        return text(`LLM response: ${result.content?.text ?? 'No response'}`);
      } catch (error) {
        return text(`Sampling not supported or error: ${error instanceof Error ? error.message : String(error)}`);
      }
    },
  );
  server.registerTool(
    'test_elicitation',
    {
      description: 'Tests server-initiated elicitation (user input request)',
      inputSchema: z.object({ message: z.string().describe('The message to show the user') }),
    },
    (args, ctx) =>
      elicit(
        ctx,
        args.message,
        { type: 'object', properties: { response: { type: 'string', description: "User's response" } }, required: ['response'] },
        'User response',
      ),
  );
  server.registerTool(
    'test_elicitation_sep1034_defaults',
    { description: 'Tests elicitation with default values per SEP-1034', inputSchema: NO_ARGS },
    (_args, ctx) => elicit(ctx, 'Please review and update the form fields with defaults', DEFAULTS_SCHEMA, 'Elicitation completed'),
  );
  server.registerTool(
    'test_elicitation_sep1330_enums',
    { description: 'Tests elicitation with enum schema improvements per SEP-1330', inputSchema: NO_ARGS },
    (_args, ctx) => elicit(ctx, 'Please select options from the enum fields', ENUMS_SCHEMA, 'Elicitation completed'),
  );
  server.registerTool(
    'json_schema_2020_12_tool',
    {
      description: 'Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)',
      inputSchema: fromJsonSchema<Record<string, unknown>>(JSON_SCHEMA_2020_12),
    },
    (args) => text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`),
  );
}
