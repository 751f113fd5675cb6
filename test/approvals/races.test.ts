/**
 * docs/api.md#approvals-and-temporary-grants under concurrency and across restarts, over a real socket: a `once` answer allows
 * exactly one of many concurrent calls; a revoked grant allows nothing once the revocation is
 * acknowledged; grants and `once` answers survive a restart on the same state folder; a state file
 * that cannot be trusted grants nothing and is reported at start.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../schemas/index.js';
import { admin, approvalOf, askDoc, buildApprovalsApp } from '../support/approvals-app.js';
import { READ_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';
import { captureLogs } from '../support/app.js';
import { tempFolder } from '../support/temp-folder.js';

const ASK_WRITE = { demo: { policy: askDoc({ allowedTools: [...READ_TOOLS], askTools: ['idea_memory_write'] }) } };
const WRITE = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' } as const;

async function decideOver(base: string, query: object): Promise<Decision> {
  const response = await fetch(`${base}/decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(query),
  });
  if (response.status !== 200) throw new Error(`/decide answered ${response.status}`);
  return (await response.json()) as Decision;
}

describe('races', () => {
  it('50 concurrent calls after a once answer: exactly one is allowed', async (t) => {
    const service = await buildApprovalsApp(t, ASK_WRITE, { stateDir: await tempFolder() });
    const base = await service.listen();
    const id = approvalOf(await decideOver(base, WRITE));
    await service.answer('demo', id, { answer: 'once' });
    const decisions = await Promise.all(Array.from({ length: 50 }, () => decideOver(base, WRITE)));
    const allowed = decisions.filter((decision) => decision.allow);
    expect(allowed).toHaveLength(1);
    expect(allowed[0]).toMatchObject({ source: 'approval' });
    expect(decisions.filter((decision) => decision.reason === 'approval_required')).toHaveLength(49);
    expect((await decideOver(base, WRITE)).allow).toBe(false);
  });

  it('a grant revoked while calls flow: no call sent after the revocation is acknowledged is allowed', async (t) => {
    const service = await buildApprovalsApp(
      t,
      { demo: { policy: askDoc({ allowedTools: [...READ_TOOLS] }) } },
      { stateDir: await tempFolder() },
    );
    const base = await service.listen();
    const grant = await service.grant('demo', 'QA', ['idea_memory_write'], 3600);
    const calls: { sentAt: number; allow: boolean }[] = [];
    let revokedAt = Number.POSITIVE_INFINITY;
    let stop = false;
    const worker = async (): Promise<void> => {
      while (!stop) {
        const sentAt = performance.now();
        calls.push({ sentAt, allow: (await decideOver(base, WRITE)).allow });
      }
    };
    const workers = Array.from({ length: 8 }, () => worker());
    await waitFor(() => calls.filter((call) => call.allow).length >= 50, '50 allowed calls', 30_000, 5);
    const revoked = await fetch(`${base}/projects/demo/grants/${grant.id}`, { method: 'DELETE', headers: admin });
    revokedAt = performance.now();
    expect(revoked.status).toBe(200);
    await waitFor(() => calls.filter((call) => call.sentAt > revokedAt).length >= 200, '200 calls sent after the revocation', 30_000, 5);
    stop = true;
    await Promise.all(workers);
    const after = calls.filter((call) => call.sentAt > revokedAt);
    expect(after.length).toBeGreaterThanOrEqual(200);
    expect(after.filter((call) => call.allow)).toEqual([]);
    expect(calls.filter((call) => call.allow).length).toBeGreaterThanOrEqual(50);
  });
});

describe('restarts', () => {
  it('keeps grants and unused once answers across a restart on the same state folder; a revoked grant stays revoked', async (t) => {
    const stateDir = await tempFolder();
    const first = await buildApprovalsApp(t, ASK_WRITE, { stateDir });
    const kept = await first.grant('demo', 'Git', ['idea_memory_write'], 3600);
    const revoked = await first.grant('demo', 'Main', ['idea_memory_write'], 3600);
    expect((await first.call('DELETE', `/projects/demo/grants/${revoked.id}`)).statusCode).toBe(200);
    const id = approvalOf(await first.decide(WRITE));
    await first.answer('demo', id, { answer: 'once' });
    await first.app.close();

    const second = await buildApprovalsApp(t, {}, { stateDir, projects: first });
    expect((await second.call('GET', '/projects/demo/grants')).json<{ grants: unknown[] }>().grants).toEqual([kept]);
    expect(await second.decide({ ...WRITE, requester: 'Git' })).toMatchObject({ allow: true, source: 'grant' });
    expect(await second.decide({ ...WRITE, requester: 'Main' })).toMatchObject({ allow: false, reason: 'approval_required' });
    expect(await second.decide(WRITE)).toMatchObject({ allow: true, source: 'approval' });
    expect(await second.decide(WRITE)).toMatchObject({ allow: false, reason: 'approval_required' });
    await second.app.close();

    // The used once answer is gone from the file too.
    const third = await buildApprovalsApp(t, {}, { stateDir, projects: first });
    expect(await third.decide(WRITE)).toMatchObject({ allow: false, reason: 'approval_required' });
    expect(await third.decide({ ...WRITE, requester: 'Git' })).toMatchObject({ allow: true, source: 'grant' });
  });

  it('grants nothing from a corrupt state file, reports it at start and moves it aside', async (t) => {
    const stateDir = await tempFolder();
    await writeFile(path.join(stateDir, 'approvals.json'), '{ "version": 1, "grants": [', { mode: 0o600 });
    const logs: Record<string, unknown>[] = [];
    const service = await buildApprovalsApp(
      t,
      { demo: { policy: askDoc({ allowedTools: [...READ_TOOLS] }) } },
      { stateDir, logger: captureLogs(logs) },
    );
    const warning = logs.find((line) => line.level === 40 && String(line.msg).includes('approvals.json'));
    expect(warning?.msg).toContain('is not valid JSON');
    expect((await readdir(stateDir)).filter((name) => name.startsWith('approvals'))).toEqual(['approvals.json.corrupt']);
    expect(await service.decide({ ...WRITE, requester: 'QA' })).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    // The service still works: a new grant is saved in a fresh file.
    await service.grant('demo', 'QA', ['idea_memory_write'], 60);
    expect((await readdir(stateDir)).filter((name) => name.startsWith('approvals')).sort()).toEqual([
      'approvals.json',
      'approvals.json.corrupt',
    ]);
  });

  it('forgets the grants and requests of a project that disappears', async (t) => {
    const service = await buildApprovalsApp(t, { ...ASK_WRITE, other: {} }, { stateDir: await tempFolder() });
    await service.grant('demo', 'QA', ['idea_ask_agent'], 3600);
    approvalOf(await service.decide(WRITE));
    await rm(path.join(service.root, 'demo'), { recursive: true, force: true });
    await waitFor(async () => (await service.call('GET', '/projects/demo/grants')).statusCode === 404, 'the project is removed');
    await mkdir(path.join(service.root, 'demo'));
    await waitFor(async () => (await service.call('GET', '/projects/demo/grants')).statusCode === 200, 'the project is back');
    expect((await service.call('GET', '/projects/demo/grants')).json<{ grants: unknown[] }>().grants).toEqual([]);
    expect(await service.approvals('demo')).toEqual([]);
    expect(await service.decide({ ...WRITE, tool: 'idea_ask_agent' })).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
  });
});
