/** docs/api.md#conditions-on-a-tools-arguments: what the ring keeps of a conditioned call, and a preview that changes conditions. */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PreviewResponse } from '../../schemas/index.js';
import { buildTestApp, call, decide } from '../support/app.js';
import { tempFolder } from '../support/temp-folder.js';
import { READ_TOOLS } from '../support/tools.js';

const document = (conditions: Record<string, unknown>) => ({
  version: 1,
  projectDefault: { allowedTools: [...READ_TOOLS, 'idea_ask_agent', 'idea_run_in_background'], conditions },
});
const NOW = document({ idea_ask_agent: { agentId: { in: ['QA', 'DevFrontend'] } } });
const LONG = 'Q'.repeat(300);
const SECRET = 'do-not-keep-this-message-0123456789';

describe('the ring and the preview', () => {
  it('counts the calls a change of conditions refuses or allows, lists the agent, and counts first conditions apart', async (t) => {
    const stateDir = await tempFolder();
    const server = await buildTestApp(t, { demo: { policy: JSON.stringify(NOW) } }, { stateDir });
    const ask = (agentId: string) =>
      decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_ask_agent', arguments: { agentId, message: SECRET } });
    for (let i = 0; i < 3; i++) expect(await ask('QA')).toMatchObject({ allow: true });
    for (let i = 0; i < 2; i++) expect(await ask('DevFrontend')).toMatchObject({ allow: true });
    expect(await ask('Architect')).toMatchObject({ allow: false, reason: 'argument_not_allowed' });
    expect(await ask(LONG)).toMatchObject({ allow: false });
    for (let i = 0; i < 2; i++) {
      const run = { command: 'npm test', secret: SECRET };
      expect(
        await decide(server.app, { project: 'demo', requester: 'Main', tool: 'idea_run_in_background', arguments: run }),
      ).toMatchObject({
        allow: true,
      });
    }

    const proposed = document({
      idea_ask_agent: { agentId: { in: ['QA', 'Architect', 'Q'.repeat(120)] } },
      idea_run_in_background: { command: { prefix: ['npm test'] } },
    });
    const response = await call(server.app, 'POST', '/projects/demo/mcp-tool-permissions/preview', {
      auth: true,
      body: { document: proposed },
    });
    expect(response.statusCode, response.body).toBe(200);
    const answer = response.json<PreviewResponse>();
    expect(answer.agents).toEqual([
      {
        agentId: '*default',
        before: { allowedTools: NOW.projectDefault.allowedTools, askTools: [] },
        after: { allowedTools: NOW.projectDefault.allowedTools, askTools: [] },
        added: [],
        removed: [],
        conditionsChanged: ['idea_ask_agent', 'idea_run_in_background'],
        askAdded: [],
        askRemoved: [],
        // A reviewer sees each condition before and after, not only that it changed.
        conditions: [
          {
            tool: 'idea_ask_agent',
            before: { agentId: { in: ['QA', 'DevFrontend'] } },
            after: { agentId: { in: ['QA', 'Architect', 'Q'.repeat(120)] } },
          },
          { tool: 'idea_run_in_background', before: null, after: { command: { prefix: ['npm test'] } } },
        ],
      },
    ]);
    // The 300-character agentId was kept cut at 120: the proposed value matches what was kept. Equal counts: latest first.
    expect(answer.replay.counts).toEqual({ allowToDeny: 2, denyToAllow: 2, toAsk: 0, notReplayable: 2 });
    expect(answer.replay.changed.map(({ requester, tool, before, after, calls }) => [requester, tool, before, after, calls])).toEqual([
      ['Main', 'idea_ask_agent', 'deny', 'allow', 2],
      ['Main', 'idea_ask_agent', 'allow', 'deny', 2],
    ]);

    // On disk: the conditioned argument's values, nothing else of the arguments.
    await server.close();
    const folder = path.join(stateDir, 'recent-decisions');
    const saved = await readFile(path.join(folder, (await readdir(folder))[0] ?? ''), 'utf8');
    expect(saved).toContain('Architect');
    expect(saved).toContain('Q'.repeat(120));
    expect(saved).not.toContain('Q'.repeat(121));
    expect(saved).not.toContain(SECRET);
    expect(saved).not.toContain('npm test');
  });
});
