/** docs/policy-as-code.md: `idea-pdp check` refuses a tool named twice in one list and says where both copies are. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

describe('duplicates in a policy', () => {
  it('a tool named twice in one list is an error naming both places; a duplicate agent names its first copy too', async () => {
    const dir = path.join(await tempFolder(), 'demo');
    await mkdir(path.join(dir, '.ideai'), { recursive: true });
    const policy = {
      version: 1,
      projectDefault: { allowedTools: ['idea_ticket_read', 'idea_memory_read', 'idea_ticket_read'] },
      agents: [
        { agentId: 'QA', policy: { allowedTools: [] } },
        { agentId: 'QA', policy: { allowedTools: [], askTools: ['idea_memory_write', 'idea_memory_write'] } },
      ],
    };
    await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.json'), `${JSON.stringify(policy, null, 2)}\n`);
    const run = await runSourceCli(['check', '.'], dir);
    expect(run.code, run.stdout + run.stderr).toBe(1);
    expect(run.stdout).toContain(
      ':7:7: error duplicate_tool: "idea_ticket_read" named twice in one list, at /projectDefault/allowedTools/0 and /projectDefault/allowedTools/2',
    );
    expect(run.stdout).toContain(
      'error duplicate_tool: "idea_memory_write" named twice in one list, at /agents/1/policy/askTools/0 and /agents/1/policy/askTools/1',
    );
    expect(run.stdout).toContain('error duplicate_agent: duplicate override for agent QA, at /agents/0/agentId and /agents/1/agentId');
  });
});
