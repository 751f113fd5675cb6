/**
 * The conformance example server, built with the v2 SDK (`@modelcontextprotocol/server`): the
 * tools, resources, prompts, logging and completion the official suite's server scenarios of
 * 2025-11-25 and 2026-07-28 expect. `example-stdio.ts` serves it with `serveStdio`, which gives
 * each stdio connection one instance in the era its host opens.
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { registerModernTools, requestStateCodec } from './example-modern-tools.js';
import { registerClassicTools, TEST_IMAGE_BASE64 } from './example-tools.js';

/** Every tool the example lists, as the project's `.ideai/mcp-servers.json` declares them. */
export const EXAMPLE_TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_tool_with_logging',
  'test_tool_with_progress',
  'test_error_handling',
  'test_sampling',
  'test_elicitation',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
  'json_schema_2020_12_tool',
  'test_missing_capability',
  'test_streaming_elicitation',
  'test_logging_tool',
  'test_trigger_tool_change',
  'test_trigger_prompt_change',
  'test_input_required_result_elicitation',
  'test_input_required_result_sampling',
  'test_input_required_result_list_roots',
  'test_input_required_result_request_state',
  'test_input_required_result_multiple_inputs',
  'test_input_required_result_multi_round',
  'test_input_required_result_tampered_state',
  'test_input_required_result_capabilities',
] as const;

function registerResources(server: McpServer): void {
  const fixed = (
    name: string,
    uri: string,
    title: string,
    description: string,
    mimeType: string,
    body: { text: string } | { blob: string },
  ) => server.registerResource(name, uri, { title, description, mimeType }, () => ({ contents: [{ uri, mimeType, ...body }] }));
  fixed('static-text', 'test://static-text', 'Static Text Resource', 'A static text resource for testing', 'text/plain', {
    text: 'This is the content of the static text resource.',
  });
  fixed('static-binary', 'test://static-binary', 'Static Binary Resource', 'A static binary resource (image) for testing', 'image/png', {
    blob: TEST_IMAGE_BASE64,
  });
  fixed('watched-resource', 'test://watched-resource', 'Watched Resource', 'A resource for subscribe/unsubscribe testing', 'text/plain', {
    text: 'Watched resource content',
  });
  server.registerResource(
    'template',
    new ResourceTemplate('test://template/{id}/data', { list: undefined }),
    { title: 'Resource Template', description: 'A resource template with parameter substitution', mimeType: 'application/json' },
    (uri, variables) => ({
      contents: [
        {
          uri: uri.toString(),
          mimeType: 'application/json',
          text: JSON.stringify({ id: variables.id, templateTest: true, data: `Data for ID: ${String(variables.id)}` }),
        },
      ],
    }),
  );
  const log = (data: string) =>
    server.server
      .notification({ method: 'notifications/message', params: { level: 'info', logger: 'conformance-test-server', data } })
      .catch(() => undefined);
  server.server.setRequestHandler('resources/subscribe', (request) => {
    void log(`Subscribed to resource: ${request.params.uri}`);
    return {};
  });
  server.server.setRequestHandler('resources/unsubscribe', (request) => {
    void log(`Unsubscribed from resource: ${request.params.uri}`);
    return {};
  });
  server.server.setRequestHandler('logging/setLevel', (request) => {
    void log(`Log level set to: ${request.params.level}`);
    return {};
  });
}

function registerPrompts(server: McpServer): void {
  const userText = (body: string) => ({ role: 'user' as const, content: { type: 'text' as const, text: body } });
  server.registerPrompt('test_simple_prompt', { title: 'Simple Test Prompt', description: 'A simple prompt without arguments' }, () => ({
    messages: [userText('This is a simple prompt for testing.')],
  }));
  server.registerPrompt(
    'test_prompt_with_arguments',
    {
      title: 'Prompt With Arguments',
      description: 'A prompt with required arguments',
      argsSchema: z.object({ arg1: z.string().describe('First test argument'), arg2: z.string().describe('Second test argument') }),
    },
    (args) => ({ messages: [userText(`Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'`)] }),
  );
  server.registerPrompt(
    'test_prompt_with_embedded_resource',
    {
      title: 'Prompt With Embedded Resource',
      description: 'A prompt that includes an embedded resource',
      argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') }),
    },
    (args) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'resource',
            resource: { uri: args.resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' },
          },
        },
        userText('Please process the embedded resource above.'),
      ],
    }),
  );
  server.registerPrompt(
    'test_prompt_with_image',
    { title: 'Prompt With Image', description: 'A prompt that includes image content' },
    () => ({
      messages: [
        { role: 'user', content: { type: 'image', data: TEST_IMAGE_BASE64, mimeType: 'image/png' } },
        userText('Please analyze the image above.'),
      ],
    }),
  );
  server.server.setRequestHandler('completion/complete', () => ({ completion: { values: [], total: 0, hasMore: false } }));
}

export function createExampleServer(): McpServer {
  const server = new McpServer(
    { name: 'idea-conformance-example-server', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        // Deprecated on 2026-07-28, still what 2025-11-25's logging/setLevel needs.
        logging: {},
        completions: {},
      },
      // A retry's requestState is verified before any handler runs (answered -32602 when it fails).
      requestState: { verify: (state, ctx) => requestStateCodec.verify(state, ctx) },
    },
  );
  registerClassicTools(server);
  registerModernTools(server);
  registerResources(server);
  registerPrompts(server);
  return server;
}
