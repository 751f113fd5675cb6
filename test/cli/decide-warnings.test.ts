/**
 * docs/policy-as-code.md: `idea-pdp decide` warns on stderr about an agent the project does not declare and
 * an unknown tool, with a suggestion, and `--format line` names the argument a condition refused.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

async function project(files: Record<string, object>): Promise<string> {
  const dir = path.join(await tempFolder(), 'demo');
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  for (const [name, content] of Object.entries(files)) await writeFile(path.join(dir, '.ideai', name), JSON.stringify(content, null, 2));
  return dir;
}

const POLICY = {
  version: 1,
  projectDefault: { allowedTools: ['idea_memory_read'] },
  agents: [
    {
      agentId: 'QA',
      policy: { allowedTools: ['idea_memory_read', 'idea_ask_agent'], conditions: { idea_ask_agent: { agentId: { in: ['Dev'] } } } },
    },
  ],
};

describe('idea-pdp decide warnings', () => {
  it('an agent that agents.json does not declare and an unknown tool are warned about on stderr, with suggestions', async () => {
    const dir = await project({ 'mcp-tool-permissions.json': POLICY, 'agents.json': [{ id: 'QA' }, { id: 'Dev' }] });
    const typo = await runSourceCli(['decide', '.', '--requester', 'Qa', '--tool', 'idea_memory_read', '--format', 'line'], dir);
    expect(typo.code).toBe(0);
    expect(typo.stdout).toBe('allow allowed project-default\n');
    expect(typo.stderr).toBe('idea-pdp: warning unknown_agent: agent "Qa" is not declared in .ideai/agents.json; did you mean QA?\n');

    const tool = await runSourceCli(['decide', '.', '--requester', 'QA', '--tool', 'idea_memroy_read', '--format', 'line'], dir);
    expect(tool.stdout).toMatch(/^deny /);
    expect(tool.stderr).toBe(
      'idea-pdp: warning unknown_tool: unknown tool "idea_memroy_read": not in the IdeA MCP tool catalog; did you mean idea_memory_read?\n',
    );

    // Declared agents, overrides and the anonymous requester are not warned about.
    for (const requester of ['QA', 'Dev', '', 'mcp']) {
      const run = await runSourceCli(['decide', '.', '--requester', requester, '--tool', 'idea_memory_read'], dir);
      expect(run.stderr, requester).toBe('');
    }
  });

  it('without an agents file, warns only for an id close to an override', async () => {
    const dir = await project({ 'mcp-tool-permissions.json': POLICY });
    const close = await runSourceCli(['decide', '.', '--requester', 'Qa', '--tool', 'idea_memory_read'], dir);
    expect(close.stderr).toBe('idea-pdp: warning unknown_agent: agent "Qa" has no override; did you mean QA?\n');
    expect((await runSourceCli(['decide', '.', '--requester', 'Reviewer', '--tool', 'idea_memory_read'], dir)).stderr).toBe('');
  });

  it('--format line names the argument of argument_not_allowed, not its value', async () => {
    const dir = await project({ 'mcp-tool-permissions.json': POLICY, 'agents.json': [{ id: 'QA' }] });
    const args = ['decide', '.', '--requester', 'QA', '--tool', 'idea_ask_agent', '--arguments', '{"agentId":"Main-secret"}'];
    const run = await runSourceCli([...args, '--format', 'line'], dir);
    expect(run).toMatchObject({ code: 0, stdout: 'deny argument_not_allowed agent-override argument=agentId\n', stderr: '' });
    expect((await runSourceCli([...args, '--format', 'line', '--fail-on-deny'], dir)).code).toBe(1);
  });
});
