/**
 * docs/api.md#other-mcp-servers-tools: `.ideai/mcp-servers.json` is read under the policy file's rules
 * (strict JSON with locations, hot reload, links, hard links) and an invalid one makes its project
 * deny every call (`policy_invalid`). Real folders, the real watcher (no rescan).
 */
import { link, mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PUBLISHED_SERVERS_SCHEMA_PATH, publishedServersSchemaText } from '../../schemas/publish.js';
import { compileServersFile } from '../../server/domain/servers-file.js';
import { policyText, saveAtomically } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, startRegistry, timeUntil } from '../support/folder-registry.js';

export const SERVERS_FILE = 'mcp-servers.json';

/** A servers document declaring `fs` with these tools (`name: access`). */
export function serversText(tools: Record<string, 'read' | 'write'>, label = 'Fichiers'): string {
  const declared = Object.fromEntries(Object.entries(tools).map(([name, access]) => [name, { access }]));
  return `${JSON.stringify({ version: 1, servers: { fs: { label, tools: declared } } }, null, 2)}\n`;
}

const compiled = (text: string) => compileServersFile(Buffer.from(text, 'utf8'));

describe('the servers file as read', () => {
  it('declares each tool as <server>/<tool> with its class, and the implicit read methods', () => {
    const servers = compiled(serversText({ read_text_file: 'read', write_file: 'write' }));
    expect(servers.status).toBe('ok');
    if (servers.status !== 'ok') return;
    expect(servers.catalog.find('fs/read_text_file')).toMatchObject({ access: 'read', server: 'fs', group: 'server:fs' });
    expect(servers.catalog.find('fs/write_file')?.access).toBe('write');
    expect(servers.catalog.find('fs/resources/read')?.access).toBe('read');
    expect(servers.catalog.find('fs/prompts/get')?.access).toBe('read');
    expect(servers.catalog.find('read_text_file')).toBeUndefined();
    expect(servers.catalog.find('fs/__proto__')).toBeUndefined();
    expect(servers.catalog.readOnly).toContain('fs/read_text_file');
    expect(servers.catalog.readOnly).not.toContain('fs/write_file');
    expect(servers.catalog.find('idea_memory_write')?.access).toBe('write');
  });

  it.each([
    ['bad JSON', '{ "version": 1,\n  "servers": { ', 'invalid_json', 'line 2'],
    [
      'a duplicate key',
      '{ "version": 1, "servers": { "fs": { "tools": { "a": { "access": "read" }, "a": { "access": "write" } } } } }',
      'duplicate_key',
      'duplicate key "a"',
    ],
    ['another version', '{ "version": 2, "servers": {} }', 'unsupported_version', 'unsupported version 2'],
    ['a missing access', '{ "version": 1, "servers": { "fs": { "tools": { "a": {} } } } }', 'invalid_shape', 'missing property "access"'],
    [
      'an access outside read and write',
      '{ "version": 1, "servers": { "fs": { "tools": { "a": { "access": "rw" } } } } }',
      'invalid_shape',
      'expected one of read, write, got "rw"',
    ],
    ['the server id idea', '{ "version": 1, "servers": { "idea": { "tools": {} } } }', 'invalid_shape', 'is not "idea"'],
    ['an upper-case server id', '{ "version": 1, "servers": { "FS": { "tools": {} } } }', 'invalid_shape', 'unknown property "FS"'],
    [
      'a tool key with a control character',
      '{ "version": 1, "servers": { "fs": { "tools": { "a\\u0007": { "access": "read" } } } } }',
      'invalid_shape',
      'no control character',
    ],
    [
      'a tool key of 129 characters',
      `{ "version": 1, "servers": { "fs": { "tools": { "${'x'.repeat(129)}": { "access": "read" } } } } }`,
      'invalid_shape',
      '1 to 128',
    ],
    ['a misspelt property', '{ "version": 1, "servers": { "fs": { "tols": {} } } }', 'invalid_shape', 'did you mean "tools"?'],
    [
      'a tool named as an implicit method',
      '{ "version": 1, "servers": { "fs": { "tools": { "resources/read": { "access": "write" } } } } }',
      'invalid_shape',
      'reserved',
    ],
  ])('refuses %s, saying what and where', (_what, text, code, message) => {
    const servers = compiled(text);
    expect(servers.status).toBe('invalid');
    if (servers.status !== 'invalid') return;
    expect(servers.code).toBe(code);
    expect(servers.error.file).toBe('.ideai/mcp-servers.json');
    expect(servers.error.message).toContain(message);
    expect(servers.error.line).toBeGreaterThanOrEqual(1);
    expect(servers.error.column).toBeGreaterThanOrEqual(1);
  });

  it('is published as a JSON Schema generated from the schema the code validates with', async () => {
    expect(await readFile(PUBLISHED_SERVERS_SCHEMA_PATH, 'utf8')).toBe(publishedServersSchemaText());
    const schema = JSON.parse(publishedServersSchemaText()) as { $id: string; required: string[] };
    expect(schema.$id).toBe('https://idea.local/schemas/mcp-servers.schema.json');
    expect(schema.required).toEqual(['version', 'servers']);
  });
});

/** A projects folder holding `demo` with these files in `.ideai` (null: none). */
async function demoWith(policy: string | null, servers: string | null): Promise<{ projects: string; ideai: string }> {
  const projects = path.join(await tempFolder(), 'projects');
  const root = await makeProject(projects, 'demo', policy);
  const ideai = path.join(root, '.ideai');
  if (servers !== null) await writeFile(path.join(ideai, SERVERS_FILE), servers);
  return { projects, ideai };
}

describe('a project with a servers file', () => {
  it('allows a declared read tool by default, refuses a declared write tool and an undeclared name', async () => {
    const { projects } = await demoWith(null, serversText({ read_text_file: 'read', write_file: 'write' }));
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(decideWith(registry, 'demo', 'QA', 'fs/read_text_file')).toMatchObject({
      allow: true,
      source: 'builtin-read-only',
      tool: { name: 'fs/read_text_file', access: 'read' },
    });
    expect(decideWith(registry, 'demo', '', 'fs/read_text_file').allow).toBe(true);
    expect(decideWith(registry, 'demo', 'QA', 'fs/write_file')).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    expect(decideWith(registry, 'demo', 'QA', 'fs/delete_file')).toMatchObject({
      allow: false,
      reason: 'unknown_tool',
      tool: { access: 'unknown' },
    });
    expect(decideWith(registry, 'demo', 'QA', 'read_text_file')).toMatchObject({ allow: false, reason: 'unknown_tool' });
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_read').allow).toBe(true);
  });

  it('grants a declared write tool through the policy, and nothing once the declaration is gone', async () => {
    const { projects, ideai } = await demoWith(policyText(['idea_ticket_read', 'fs/write_file']), serversText({ write_file: 'write' }));
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(decideWith(registry, 'demo', 'QA', 'fs/write_file')).toMatchObject({ allow: true, source: 'project-default' });
    await saveAtomically(path.join(ideai, SERVERS_FILE), serversText({ read_text_file: 'read' }));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'fs/write_file').reason === 'unknown_tool', 'undeclared tool refused');
    expect(decideWith(registry, 'demo', 'QA', 'fs/read_text_file').allow).toBe(false);
  });

  it('hears an edit at once: a read tool made write is refused by the read-only default', async () => {
    const { projects, ideai } = await demoWith(null, serversText({ read_text_file: 'read' }));
    const { registry, changes } = await startRegistry({ projectsRoot: projects });
    const before = registry.get('demo')?.state.policy.revision;
    expect(decideWith(registry, 'demo', 'QA', 'fs/read_text_file').allow).toBe(true);
    await writeFile(path.join(ideai, SERVERS_FILE), serversText({ read_text_file: 'write' }));
    await timeUntil(() => !decideWith(registry, 'demo', 'QA', 'fs/read_text_file').allow, 'reclassified tool refused');
    expect(registry.get('demo')?.state.policy.revision).not.toBe(before);
    expect(changes.some((change) => change.project === 'demo')).toBe(true);
  });

  it('denies every call of the project while the servers file is invalid, and recovers when it is fixed', async () => {
    const { projects, ideai } = await demoWith(null, serversText({ read_text_file: 'read' }));
    const { registry } = await startRegistry({ projectsRoot: projects });
    await saveAtomically(path.join(ideai, SERVERS_FILE), '{ "version": 1, "servers": { "fs": ');
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_ticket_read').reason === 'policy_invalid', 'invalid catalog heard');
    const denied = decideWith(registry, 'demo', 'QA', 'fs/read_text_file');
    expect(denied).toMatchObject({ allow: false, reason: 'policy_invalid', source: 'none' });
    expect(denied.message).toContain('.ideai/mcp-servers.json is invalid');
    expect(denied.message).toContain('line 1');
    await saveAtomically(path.join(ideai, SERVERS_FILE), serversText({ read_text_file: 'read' }));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'fs/read_text_file').allow, 'repaired catalog heard');
  });

  it('reads a file created later, and IdeA’s catalog alone once it is deleted', async () => {
    const { projects, ideai } = await demoWith(null, null);
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(decideWith(registry, 'demo', 'QA', 'fs/read_text_file').reason).toBe('unknown_tool');
    const file = path.join(ideai, SERVERS_FILE);
    await writeFile(file, serversText({ read_text_file: 'read' }));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'fs/read_text_file').allow, 'new catalog heard');
    const { rm } = await import('node:fs/promises');
    await rm(file);
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'fs/read_text_file').reason === 'unknown_tool', 'deleted catalog heard');
  });
});

describe('links to the servers file', () => {
  it('refuses a servers file with a second name (hard link), even after the other name is gone, until it is rewritten', async () => {
    const { projects, ideai } = await demoWith(null, null);
    const other = path.join(path.dirname(projects), 'servers.json');
    await writeFile(other, serversText({ read_text_file: 'read' }));
    await link(other, path.join(ideai, SERVERS_FILE));
    const { registry } = await startRegistry({ projectsRoot: projects });
    const refused = decideWith(registry, 'demo', 'QA', 'fs/read_text_file');
    expect(refused).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(refused.message).toContain('the servers file has another name');
    const { rm } = await import('node:fs/promises');
    await rm(other);
    await registry.get('demo')?.reload();
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_read').reason).toBe('policy_invalid');
    await saveAtomically(path.join(ideai, SERVERS_FILE), serversText({ read_text_file: 'read' }));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'fs/read_text_file').allow, 'rewritten file used');
  });

  it('refuses a symlink to a file outside .ideai', async () => {
    const { projects, ideai } = await demoWith(null, null);
    const outside = path.join(path.dirname(projects), 'servers.json');
    await writeFile(outside, serversText({ read_text_file: 'read' }));
    await symlink(outside, path.join(ideai, SERVERS_FILE));
    const { registry } = await startRegistry({ projectsRoot: projects });
    const refused = decideWith(registry, 'demo', 'QA', 'fs/read_text_file');
    expect(refused).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(refused.message).toContain('a symbolic link');
  });

  it('follows a symlink to a regular file in .ideai, and hears an edit of that file', async () => {
    const { projects, ideai } = await demoWith(null, null);
    await mkdir(ideai, { recursive: true });
    await writeFile(path.join(ideai, 'servers.real.json'), serversText({ read_text_file: 'read' }));
    await symlink('servers.real.json', path.join(ideai, SERVERS_FILE));
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(decideWith(registry, 'demo', 'QA', 'fs/read_text_file').allow).toBe(true);
    await writeFile(path.join(ideai, 'servers.real.json'), serversText({ read_text_file: 'write' }));
    await timeUntil(() => !decideWith(registry, 'demo', 'QA', 'fs/read_text_file').allow, 'edit of the link target heard');
  });
});
