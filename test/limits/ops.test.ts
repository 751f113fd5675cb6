/** docs/api.md#usage-limits: the preview replays limits in time order, metrics count refusals by tool, and idea-pdp checks and decides them. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { PreviewResponse } from '../../schemas/index.js';
import { TestClock } from '../support/clocked-approvals.js';
import { buildTestApp, call, decide } from '../support/app.js';
import { runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';
import { READ_TOOLS } from '../support/tools.js';

const ASK = { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' } as const;
const documentWith = (max: number) => ({
  version: 1,
  projectDefault: { allowedTools: [...READ_TOOLS, 'idea_ask_agent'], limits: { idea_ask_agent: { max, per: '1h' } } },
});

describe('limits in operations', () => {
  it('a preview that lowers a cap counts, in time order, the recent calls it would have refused', async (t) => {
    const clock = new TestClock();
    const server = await buildTestApp(t, { demo: { policy: JSON.stringify(documentWith(5)) } }, { clock });
    for (let call = 0; call < 4; call++) expect((await decide(server.app, ASK)).allow).toBe(true);
    expect((await decide(server.app, { ...ASK, requester: 'Git' })).allow).toBe(true);
    const preview = await call(server.app, 'POST', '/projects/demo/mcp-tool-permissions/preview', {
      auth: true,
      body: { document: documentWith(2) },
    });
    expect(preview.statusCode, preview.body).toBe(200);
    const { replay } = preview.json<PreviewResponse>();
    expect(replay.counts).toMatchObject({ allowToDeny: 2, denyToAllow: 0 });
    expect(replay.changed).toEqual([
      { requester: 'QA', tool: 'idea_ask_agent', before: 'allow', after: 'deny', calls: 2, lastAt: expect.any(String) as unknown },
    ]);
  });

  it('metrics count rate_limited by tool', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: JSON.stringify(documentWith(1)) } });
    await decide(server.app, ASK);
    await decide(server.app, ASK);
    await decide(server.app, ASK);
    const metrics = (await call(server.app, 'GET', '/metrics')).body;
    expect(metrics).toContain('pdp_rate_limited_total{tool="idea_ask_agent"} 2');
    expect(metrics).toContain('pdp_decisions_total{allow="false",reason="rate_limited"} 2');
  });

  it('idea-pdp check reports a bad limit at its line; decide says it ignores counts', async () => {
    const dir = path.join(await tempFolder(), 'demo');
    await mkdir(path.join(dir, '.ideai'), { recursive: true });
    const file = path.join(dir, '.ideai', 'mcp-tool-permissions.json');
    const bad = { version: 1, projectDefault: { allowedTools: ['idea_ask_agent'], limits: { idea_ask_agent: { max: 20, per: '2w' } } } };
    await writeFile(file, `${JSON.stringify(bad, null, 2)}\n`);
    const checked = await runSourceCli(['check', '.'], dir);
    expect(checked.code, checked.stdout + checked.stderr).toBe(1);
    expect(checked.stdout).toContain(
      '.ideai/mcp-tool-permissions.json:10:9: error invalid_limit: invalid limit at /projectDefault/limits/idea_ask_agent/per: per expects <n>s, <n>m, <n>h or <n>d from 1s to 7d (e.g. "1h"), got the string "2w"',
    );
    await writeFile(file, `${JSON.stringify(documentWith(20), null, 2)}\n`);
    const decided = await runSourceCli(['decide', '.', '--requester', 'QA', '--tool', 'idea_ask_agent'], dir);
    expect(decided.code, decided.stderr).toBe(0);
    expect(JSON.parse(decided.stdout)).toMatchObject({ allow: true, reason: 'allowed' });
    expect(decided.stderr).toContain('idea_ask_agent has a usage limit (at most 20 calls per 1h); decide works offline and ignores counts');
  });
});
