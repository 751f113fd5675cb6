import { readFileSync } from 'node:fs';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { READ_ONLY_DEFAULT, TOOL_CATALOG, TOOL_GROUPS, findTool, type ToolAccess, type ToolDefinition } from '../../schemas/index.js';
import { PUBLISHED_SCHEMA_PATH, publishedSchemaText } from '../../schemas/publish.js';
import { ISSUE_SCOPED_TOOLS, READ_TOOLS } from '../support/tools.js';

describe('tool catalog', () => {
  it('has the 25 tools of the contract, each with exactly one access class, a known group and a French label', () => {
    expect(TOOL_CATALOG).toHaveLength(25);
    const groups = new Set<string>(TOOL_GROUPS.map((group) => group.id));
    for (const tool of TOOL_CATALOG) {
      expect(['read', 'write']).toContain(tool.access);
      expect(groups.has(tool.group)).toBe(true);
      expect(tool.label.length).toBeGreaterThan(3);
      expect(tool.name).toMatch(/^idea_[a-z_]+$/);
    }
    expect(new Set(TOOL_CATALOG.map((tool) => tool.name)).size).toBe(25);
  });

  it('makes the access class a required field at the type level', () => {
    expectTypeOf<ToolDefinition['access']>().toEqualTypeOf<ToolAccess>();
    // @ts-expect-error a tool without an access class is not a ToolDefinition
    const missing: ToolDefinition = { name: 'idea_new_tool', group: 'skills', label: 'Nouveau', issueScoped: false };
    expect(missing).toBeDefined();
  });

  it('derives the canonical read-only set: the 9 read tools, in catalog order', () => {
    expect(READ_ONLY_DEFAULT).toEqual(READ_TOOLS);
  });

  it('marks exactly the one-ticket tools as issue-scoped', () => {
    const scoped = TOOL_CATALOG.filter((tool) => tool.issueScoped).map((tool) => tool.name);
    expect(scoped.sort()).toEqual([...ISSUE_SCOPED_TOOLS].sort());
  });

  it('finds tools by exact name only', () => {
    expect(findTool('idea_memory_write')?.access).toBe('write');
    expect(findTool('IDEA_MEMORY_WRITE')).toBeUndefined();
    expect(findTool('__proto__')).toBeUndefined();
    expect(findTool('constructor')).toBeUndefined();
  });

  it('publishes the JSON Schema of the policy document in sync with the TypeBox schema (npm run schema:publish)', () => {
    expect(readFileSync(PUBLISHED_SCHEMA_PATH, 'utf8')).toBe(publishedSchemaText());
  });
});
