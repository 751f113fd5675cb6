/**
 * docs/policy-as-code.md: `check .`, `test .` and `fmt .` at a repository's root cover every project under it
 * (not node_modules, .git or hidden folders), a walk finding none says so, and `check` reads the test files.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

async function files(root: string, entries: Record<string, object>): Promise<void> {
  for (const [name, content] of Object.entries(entries)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), `${JSON.stringify(content, null, 2)}\n`);
  }
}

const policy = (tools: string[]) => ({ version: 1, projectDefault: { allowedTools: tools } });

describe('idea-pdp at a repository root', () => {
  it('check . walks to every project, skipping node_modules and hidden folders, and checks test files', async () => {
    const root = await tempFolder();
    await files(root, {
      'apps/web/.ideai/mcp-tool-permissions.json': policy(['idea_memory_read']),
      'apps/web/.ideai/agents.json': [{ id: 'QA' }],
      'apps/web/.ideai/mcp-tool-permissions.test.json': {
        version: 1,
        cases: [{ requester: 'Qa', tool: 'idea_memroy_read', expect: 'deny' }],
      },
      'services/api/.ideai/mcp-tool-permissions.json': policy(['idea_memory_read', 'idea_ticket_updte']),
      'node_modules/pkg/.ideai/mcp-tool-permissions.json': { broken: true },
      '.cache/x/.ideai/mcp-tool-permissions.json': { broken: true },
    });
    const lax = await runSourceCli(['check', '.'], root);
    expect(lax.code, lax.stdout + lax.stderr).toBe(0);
    expect(lax.stdout.split('\n')).toEqual([
      expect.stringMatching(
        /^apps\/web\/\.ideai\/mcp-tool-permissions\.test\.json:\d+:\d+: warning unknown_agent: .*"Qa".*did you mean QA\?$/,
      ),
      expect.stringMatching(
        /^apps\/web\/\.ideai\/mcp-tool-permissions\.test\.json:\d+:\d+: warning unknown_tool: unknown tool "idea_memroy_read" .*did you mean idea_memory_read\?$/,
      ),
      expect.stringMatching(
        /^services\/api\/\.ideai\/mcp-tool-permissions\.json:\d+:\d+: warning unknown_tool: .*did you mean idea_ticket_update\?$/,
      ),
      'valid: 0 errors, 3 warnings in 2 projects; --strict would make them 3 errors',
      '',
    ]);
    const strict = await runSourceCli(['check', '--strict', '--require', '.'], root);
    expect(strict.code).toBe(1);
    expect(strict.stdout).toContain('invalid: 3 errors, 0 warnings in 2 projects');

    const tested = await runSourceCli(['test', '.'], root);
    expect(tested.stdout).toMatch(/^1 passed, 0 failed$/m);
    expect(tested.stderr).toContain('no services/api/.ideai/mcp-tool-permissions.test.json');
    const formatted = await runSourceCli(['fmt', '--check', '.'], root);
    expect(formatted.stdout + formatted.stderr).not.toContain('node_modules');
  });

  it('a walk that finds no project says so, an error with --require; a project folder is not walked', async () => {
    const root = await tempFolder();
    await mkdir(path.join(root, 'src'));
    const lax = await runSourceCli(['check', '.'], root);
    expect(lax.code).toBe(0);
    expect(lax.stderr).toContain('no .ideai/mcp-tool-permissions.json: the canonical read-only defaults apply');
    const required = await runSourceCli(['check', '--require', '.'], root);
    expect(required.code).toBe(1);
    expect(required.stdout).toContain('.ideai/mcp-tool-permissions.json:1:1: error missing_file: no policy file (--require)');

    // A project's own sub-folders are not other projects of the run.
    await files(root, {
      '.ideai/mcp-tool-permissions.json': policy(['idea_memory_read']),
      'sub/.ideai/mcp-tool-permissions.json': { broken: true },
    });
    expect((await runSourceCli(['check', '.'], root)).stdout).toBe('valid: 0 errors, 0 warnings in 1 project\n');
  });
});
