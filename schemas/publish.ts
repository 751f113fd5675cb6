/**
 * Writes the JSON Schemas of the policy document, of its test file (`idea-pdp test`) and of the servers catalog, generated
 * from the TypeBox schemas the code validates with. `npm run schema:publish`;
 * `test/schemas/catalog.test.ts` and `test/decisions/recent-decisions-file.test.ts` fail when one is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { TSchema } from '@sinclair/typebox';
import { PolicyTestFileSchema } from './policy-as-code.js';
import { PolicyDocumentSchema } from './policy.js';
import { ServersDocumentSchema } from './servers.js';

export const PUBLISHED_SCHEMA_PATH = fileURLToPath(new URL('./mcp-tool-permissions.schema.json', import.meta.url));
export const PUBLISHED_TEST_SCHEMA_PATH = fileURLToPath(new URL('./mcp-tool-permissions.test.schema.json', import.meta.url));
export const PUBLISHED_SERVERS_SCHEMA_PATH = fileURLToPath(new URL('./mcp-servers.schema.json', import.meta.url));

function schemaText(schema: TSchema): string {
  const published = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    ...(JSON.parse(JSON.stringify(schema)) as Record<string, unknown>),
  };
  return `${JSON.stringify(published, null, 2)}\n`;
}

/** The published text of the policy document's schema: draft 2020-12 JSON Schema, pretty-printed. */
export function publishedSchemaText(): string {
  return schemaText(PolicyDocumentSchema);
}

/** The published text of the test file's schema, the same way. */
export function publishedTestSchemaText(): string {
  return schemaText(PolicyTestFileSchema);
}

/** The published text of the servers catalog's schema (`.ideai/mcp-servers.json`), the same way. */
export function publishedServersSchemaText(): string {
  return schemaText(ServersDocumentSchema);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(PUBLISHED_SCHEMA_PATH, publishedSchemaText());
  writeFileSync(PUBLISHED_TEST_SCHEMA_PATH, publishedTestSchemaText());
  writeFileSync(PUBLISHED_SERVERS_SCHEMA_PATH, publishedServersSchemaText());
  process.stdout.write(`wrote ${PUBLISHED_SCHEMA_PATH}\nwrote ${PUBLISHED_TEST_SCHEMA_PATH}\nwrote ${PUBLISHED_SERVERS_SCHEMA_PATH}\n`);
}
