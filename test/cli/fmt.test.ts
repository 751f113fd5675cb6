/** docs/policy-as-code.md: `idea-pdp fmt [--check]` writes the canonical form the service writes, once, and never a file it cannot judge. */
import { lstat, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compilePolicyFile } from '../../server/domain/compile.js';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

const MESSY =
  '{"agents":[{"policy":{"askTools":["idea_memory_write"],"allowedTools":["idea_ticket_read","idea_memory_read"]},"agentId":"QA"}],' +
  '"version":1,"projectDefault":{"conditions":{"idea_ask_agent":{"agentId":{"in":["QA"]}}},"allowedTools":["idea_ask_agent","idea_sprint_list","idea_ticket_read"]}}';

async function project(text: string): Promise<{ dir: string; file: string }> {
  const dir = path.join(await tempFolder(), 'demo');
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  const file = path.join(dir, '.ideai', 'mcp-tool-permissions.json');
  await writeFile(file, text);
  return { dir, file };
}

/** What a document means to the service: every policy's lists and conditions, compiled. */
function meaning(text: string): unknown {
  const compiled = compilePolicyFile(new TextEncoder().encode(text));
  if (compiled.status !== 'ok') throw new Error('invalid');
  const lists = (policy: { tools: readonly string[]; askTools: readonly string[]; writtenConditions: unknown }) => ({
    tools: [...policy.tools].sort(),
    ask: [...policy.askTools].sort(),
    conditions: policy.writtenConditions,
  });
  return { projectDefault: lists(compiled.projectDefault), overrides: [...compiled.overrides].map(([id, policy]) => [id, lists(policy)]) };
}

describe('idea-pdp fmt', () => {
  it('--check names a file not formatted and writes nothing; fmt writes the canonical form once, same meaning', async () => {
    const { dir, file } = await project(MESSY);
    const checked = await runSourceCli(['fmt', '--check', '.'], dir);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toContain('.ideai/mcp-tool-permissions.json: not formatted');
    expect(await readFile(file, 'utf8')).toBe(MESSY);

    const formatted = await runSourceCli(['fmt', '.'], dir);
    expect(formatted.code, formatted.stderr).toBe(0);
    const text = await readFile(file, 'utf8');
    expect(text).toMatch(
      /^\{\n {2}"version": 1,\n {2}"projectDefault": \{\n {4}"allowedTools": \[\n {6}"idea_ticket_read",\n {6}"idea_sprint_list",\n {6}"idea_ask_agent"/,
    );
    expect(meaning(text)).toEqual(meaning(MESSY));

    // Idempotent: a second run changes nothing and --check passes.
    expect((await runSourceCli(['fmt', '.'], dir)).stdout).toContain('0 files rewritten');
    expect(await readFile(file, 'utf8')).toBe(text);
    expect((await runSourceCli(['fmt', '--check', '.'], dir)).code).toBe(0);
  });

  it('leaves an invalid file and a link as they are, and fails', async () => {
    const invalid = await project('{"version":1,"projectDefault":{"allowedTools":"idea_ticket_read"}}');
    const run = await runSourceCli(['fmt', '.'], invalid.dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('cannot be formatted');
    expect(await readFile(invalid.file, 'utf8')).toBe('{"version":1,"projectDefault":{"allowedTools":"idea_ticket_read"}}');

    const linked = await project('');
    const target = path.join(path.dirname(linked.dir), 'elsewhere.json');
    await writeFile(target, MESSY);
    await rm(linked.file);
    await symlink(target, linked.file);
    const refused = await runSourceCli(['fmt', '.'], linked.dir);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('it is a link');
    expect((await lstat(linked.file)).isSymbolicLink()).toBe(true);
    expect(await readFile(target, 'utf8')).toBe(MESSY);
  });
});
