/**
 * Writes the JSON Schema of the policy document, generated from the TypeBox schema the code
 * validates with. `npm run schema:publish`; `test/core/catalog.test.ts` fails when it is stale.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PolicyDocumentSchema } from './policy.js';

export const PUBLISHED_SCHEMA_PATH = fileURLToPath(new URL('./mcp-tool-permissions.schema.json', import.meta.url));

/** The published text: draft 2020-12 JSON Schema, pretty-printed. */
export function publishedSchemaText(): string {
  const schema = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    ...(JSON.parse(JSON.stringify(PolicyDocumentSchema)) as Record<string, unknown>),
  };
  return `${JSON.stringify(schema, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(PUBLISHED_SCHEMA_PATH, publishedSchemaText());
  process.stdout.write(`wrote ${PUBLISHED_SCHEMA_PATH}\n`);
}
