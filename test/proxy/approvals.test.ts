/**
 * Approvals through `idea-mcp-proxy`, real service, real SDK client over stdio, Python server: a
 * call on ask is refused at once with the approval request's id under `_meta`, as
 * `guardMcpServer` refuses it; with `--approver-token-file`, a host that declared `elicitation` is
 * asked in French, its « Autoriser une fois » is posted with the approver token and the call runs.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { DECISION_META_KEY, type RefusalDecisionMeta } from '../../client/mcp.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { REPO_ROOT } from '../support/service-process.js';
import { connectThroughProxy, proxyArgs, proxyEnv } from '../support/proxy-process.js';

const suite = suiteScope();
let pdp: RealPdp;
let folder: string;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
  folder = await mkdtemp(path.join(tmpdir(), 'proxy-approvals-'));
  suite.onTestFinished(() => rm(folder, { recursive: true, force: true }));
  await pdp.admin.putAgent('demo', 'Asker', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
});

const metaOf = (result: { _meta?: unknown }) => (result._meta as Record<string, RefusalDecisionMeta>)[DECISION_META_KEY];

describe('idea-mcp-proxy and approvals, real service', () => {
  it('refuses a call on ask with the approval request id under _meta, like guardMcpServer', { timeout: 120_000 }, async () => {
    const host = await connectThroughProxy(['--pdp', pdp.url, '--project', 'demo', '--agent', 'Asker'], {
      PDP_DECIDE_TOKEN: pdp.decideToken,
    });
    suite.onTestFinished(host.close);
    const proxied = await host.client.callTool({ name: 'idea_memory_write', arguments: { text: 'x' } });
    const inProcess = await connectGuardedIdeaServer({ client: pdp.decider, project: 'demo', requester: 'Asker' });
    const guarded = await inProcess.client.callTool({ name: 'idea_memory_write', arguments: { text: 'x' } });
    await inProcess.close();
    for (const result of [proxied, guarded]) {
      expect(result.isError).toBe(true);
      expect(metaOf(result)?.reason).toBe('approval_required');
    }
    const pending = await pdp.admin.listApprovals('demo', 'pending');
    // One call, one request: the second call finds the first one's request still pending.
    expect(pending.filter((approval) => approval.requester === 'Asker').map((approval) => approval.id)).toEqual([
      metaOf(proxied)?.approvalId,
    ]);
    expect(metaOf(guarded)?.approvalId).toBe(metaOf(proxied)?.approvalId);
    expect((proxied.content as { text: string }[])[0]?.text).toBe((guarded.content as { text: string }[])[0]?.text);
  });

  it('asks the host through elicitation with the approver token, and runs the call once allowed', { timeout: 120_000 }, async () => {
    await pdp.admin.putAgent('demo', 'Elicited', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const tokenFile = path.join(folder, 'approver-token');
    await writeFile(tokenFile, `${pdp.approverToken}\n`);
    await chmod(tokenFile, 0o600);
    const client = new Client({ name: 'eliciting-host', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const questions: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params.message);
      return { action: 'accept', content: { reponse: 'Autoriser une fois' } };
    });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: proxyArgs([
          '--pdp',
          pdp.url,
          '--project',
          'demo',
          '--agent',
          'Elicited',
          '--approver-token-file',
          tokenFile,
          '--approval-wait-ms',
          '20000',
        ]),
        cwd: REPO_ROOT,
        env: proxyEnv({ PDP_DECIDE_TOKEN: pdp.decideToken }),
        stderr: 'ignore',
      }),
    );
    suite.onTestFinished(() => client.close());
    const result = await client.callTool({ name: 'idea_memory_write', arguments: { text: 'approved' } }, undefined, { timeout: 30_000 });
    expect((result.content as { text: string }[])[0]?.text).toBe('idea_memory_write ran with {"text": "approved"}');
    expect(questions).toHaveLength(1);
    expect(questions[0]).toContain('L\u2019agent Elicited demande à utiliser l\u2019outil');
    expect(questions[0]).not.toContain('approved');
    const answered = (await pdp.admin.listApprovals('demo')).filter((approval) => approval.requester === 'Elicited');
    expect(answered.map((approval) => [approval.answer, approval.via])).toEqual([['once', 'elicitation']]);
  });
});
