/**
 * The preview route through the real entry point on a real port (docs/api.md#policy-as-code-idea-pdp-and-previews): the exact
 * answer, nothing written, no approval opened, the same errors as `idea-pdp check`, and the
 * recent decisions replayed again after a restart (kept under PDP_STATE_DIR), a corrupt history
 * file being an empty history and a warning, not a failed start.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Approval, PermissionsView, PreviewResponse } from '../../schemas/index.js';
import { makeTestProjects } from '../support/app.js';
import { policyDoc } from '../support/files.js';
import { runSourceCli } from '../support/cli.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { waitFor } from '../support/wait.js';

const ADMIN = 'preview-admin-token-0123456789';
const DECIDE = 'preview-decide-token-0123456789';

/** A preview; the body is a PreviewResponse when the status is 200 (the assertions check it). */
async function post(
  service: ServiceProcess,
  url: string,
  body: unknown,
  token: string | null = DECIDE,
): Promise<{ status: number; body: PreviewResponse }> {
  const response = await fetch(`${service.baseUrl}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as PreviewResponse };
}

async function get(service: ServiceProcess, url: string): Promise<unknown> {
  const response = await fetch(`${service.baseUrl}${url}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  expect(response.status).toBe(200);
  return response.json();
}

const revisionOf = async (service: ServiceProcess): Promise<string> =>
  ((await get(service, '/projects/demo/mcp-tool-permissions')) as PermissionsView).revision;

const preview = (service: ServiceProcess, document: unknown, token?: string | null) =>
  post(service, '/projects/demo/mcp-tool-permissions/preview', { document }, token);

/** The current document: QA may write memory, everyone else only reads. */
const CURRENT = policyDoc(['idea_memory_read'], { QA: ['idea_memory_read', 'idea_memory_write'] });
/** The proposal: the default may write memory, QA loses it. */
const PROPOSED = policyDoc(['idea_memory_read', 'idea_memory_write'], { QA: ['idea_memory_read'] });

async function start(root: string, state: string): Promise<ServiceProcess> {
  const service = await startService({
    PDP_PROJECTS_ROOT: root,
    PDP_STATE_DIR: state,
    PDP_ADMIN_TOKEN: ADMIN,
    PDP_DECIDE_TOKEN: DECIDE,
    PDP_LOG_LEVEL: 'warn',
  });
  return service;
}

async function decideMany(service: ServiceProcess, requester: string, tool: string, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const { status } = await post(service, '/decide', { project: 'demo', requester, tool });
    expect(status).toBe(200);
  }
}

describe('POST /projects/:project/mcp-tool-permissions/preview', () => {
  it('answers the agents it changes and the recent decisions replayed, writes nothing, and keeps them across a restart', async (t) => {
    const { root } = await makeTestProjects(t, { demo: { policy: CURRENT } });
    const state = await tempFolder('pdp-preview-state-');
    const policyPath = path.join(root, 'demo', '.ideai', 'mcp-tool-permissions.json');
    const policyBytes = await readFile(policyPath, 'utf8');
    let service = await start(root, state);
    try {
      await decideMany(service, 'QA', 'idea_memory_write', 3);
      await decideMany(service, 'Dev', 'idea_memory_write', 2);
      await decideMany(service, 'QA', 'idea_memory_read', 1);
      const revision = await revisionOf(service);

      const answer = await preview(service, PROPOSED);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ project: 'demo', revision, valid: true, errors: [] });
      expect(answer.body.agents).toEqual([
        {
          agentId: '*default',
          before: { allowedTools: ['idea_memory_read'], askTools: [] },
          after: { allowedTools: ['idea_memory_read', 'idea_memory_write'], askTools: [] },
          added: ['idea_memory_write'],
          removed: [],
          conditionsChanged: [],
          askAdded: [],
          askRemoved: [],
          conditions: [],
        },
        {
          agentId: 'QA',
          before: { allowedTools: ['idea_memory_read', 'idea_memory_write'], askTools: [] },
          after: { allowedTools: ['idea_memory_read'], askTools: [] },
          added: [],
          removed: ['idea_memory_write'],
          conditionsChanged: [],
          askAdded: [],
          askRemoved: [],
          conditions: [],
        },
      ]);
      const { replay } = answer.body;
      expect(replay).toMatchObject({ decisions: 6, counts: { allowToDeny: 3, denyToAllow: 2, toAsk: 0 } });
      expect(Date.parse(replay.from ?? 'none')).toBeLessThanOrEqual(Date.parse(replay.to ?? 'none')); // NaN for none: fails
      for (const change of replay.changed) expect(Date.parse(change.lastAt)).toBeGreaterThan(0);
      expect(replay.changed.map((change) => ({ ...change, lastAt: undefined }))).toEqual([
        { requester: 'QA', tool: 'idea_memory_write', before: 'allow', after: 'deny', calls: 3, lastAt: undefined },
        { requester: 'Dev', tool: 'idea_memory_write', before: 'deny', after: 'allow', calls: 2, lastAt: undefined },
      ]);

      // A tool put on ask: counted, and no approval request is opened by the replay.
      const asking = policyDoc(['idea_memory_read'], {});
      (asking.projectDefault as { askTools?: string[] }).askTools = ['idea_memory_write'];
      const asked = await preview(service, asking, ADMIN);
      expect(asked.body.replay.counts).toEqual({ allowToDeny: 0, denyToAllow: 0, toAsk: 5, notReplayable: 0 });
      expect(asked.body.replay.changed.map((change) => [change.before, change.after, change.calls])).toEqual([
        ['allow', 'ask', 3],
        ['deny', 'ask', 2],
      ]);
      expect(((await get(service, '/projects/demo/approvals')) as { approvals: Approval[] }).approvals).toEqual([]);
      // The tool put on ask shows as such, not as added=[] removed=[] alone.
      expect(asked.body.agents.find((agent) => agent.agentId === '*default')).toMatchObject({
        askAdded: ['idea_memory_write'],
        askRemoved: [],
      });

      // Nothing was written: same file, same revision.
      expect(await readFile(policyPath, 'utf8')).toBe(policyBytes);
      expect(await revisionOf(service)).toBe(revision);

      // The decide token or the admin token; an unknown project is 404.
      expect((await preview(service, PROPOSED, null)).status).toBe(401);
      expect((await post(service, '/projects/nope/mcp-tool-permissions/preview', { document: PROPOSED })).status).toBe(404);

      // A restart replays the same decisions (SIGTERM saves the history).
      await service.stop();
      service = await start(root, state);
      const again = await preview(service, PROPOSED);
      expect(again.body.replay).toEqual(replay);

      // A corrupt history file: the service starts, with an empty history and a warning.
      await service.stop();
      await writeFile(path.join(state, 'recent-decisions', 'demo.json'), '{"format":1,"project":"demo","names":[');
      service = await start(root, state);
      await waitFor(() => service.output().includes('not read back'), 'the warning about the corrupt history');
      expect((await preview(service, PROPOSED)).body.replay).toMatchObject({ decisions: 0, changed: [] });
    } finally {
      await service.stop();
    }
  }, 120_000);

  it('answers an invalid document with valid: false and the errors idea-pdp check prints for it', async (t) => {
    const { root } = await makeTestProjects(t, { demo: { policy: CURRENT } });
    const state = await tempFolder('pdp-preview-state-');
    const service = await start(root, state);
    try {
      const invalid = {
        version: 1,
        projectDefault: { allowedTools: ['idea_memory_read', 'not_a_tool'], askTools: ['idea_memory_read'] },
      };
      const answer = await preview(service, invalid);
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ valid: false, agents: [], replay: { decisions: 0, changed: [] } });
      // Every problem, in file order: the unknown name, then the tool both allowed and on ask.
      expect(answer.body.errors).toEqual([
        expect.objectContaining({ file: '.ideai/mcp-tool-permissions.json', severity: 'warning', code: 'unknown_tool' }),
        expect.objectContaining({ file: '.ideai/mcp-tool-permissions.json', severity: 'error', code: 'ask_conflict' }),
      ]);

      // The same text checked by the command gives the same problems.
      const folder = await tempFolder('pdp-preview-check-');
      await mkdir(path.join(folder, '.ideai'));
      await writeFile(path.join(folder, '.ideai', 'mcp-tool-permissions.json'), `${JSON.stringify(invalid, null, 2)}\n`);
      const checked = await runSourceCli(['check', '--json'], folder);
      expect(checked.code).toBe(1);
      const report = JSON.parse(checked.stdout) as { projects: { problems: unknown[] }[] };
      expect(report.projects[0]?.problems).toEqual(answer.body.errors);

      // A valid document with an unknown tool: valid, with the warning.
      const warned = await preview(service, policyDoc(['idea_memory_read', 'not_a_tool']));
      expect(warned.body.valid).toBe(true);
      expect(warned.body.errors).toEqual([expect.objectContaining({ severity: 'warning', code: 'unknown_tool' })]);

      // The document itself as the body answers the same, its problems placed in the body's own text;
      // a body that is not JSON is an invalid document.
      const raw = await post(service, '/projects/demo/mcp-tool-permissions/preview', policyDoc(['idea_memory_read', 'not_a_tool']));
      expect(raw.status).toBe(200);
      const sent = JSON.stringify(policyDoc(['idea_memory_read', 'not_a_tool']));
      expect(raw.body).toEqual({
        ...warned.body,
        errors: [{ ...warned.body.errors[0], line: 1, column: sent.indexOf('"not_a_tool"') + 1 }],
      });
      const response = await fetch(`${service.baseUrl}/projects/demo/mcp-tool-permissions/preview`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${DECIDE}` },
        body: '{ "version": 1,',
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ valid: false, errors: [{ line: 1, code: 'invalid_json', severity: 'error' }] });
    } finally {
      await service.stop();
    }
  }, 120_000);
});
