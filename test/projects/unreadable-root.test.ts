/**
 * A projects root that cannot be listed (no permission, too many open files, EIO) is not a root
 * whose projects were all removed: decisions about projects it could not list (or whose files it
 * cannot read) deny meanwhile, and the grants and recent decisions kept under PDP_STATE_DIR (and the
 * armed `once` answers of projects it never read) are all there again once it can be listed
 * (docs/api.md#projects-and-files).
 */
import { chmod, readdir, readFile, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { STATE_FILE_NAME } from '../../server/approvals/state-file.js';
import { ABSENCE_CONFIRM_MS } from '../../server/projects/registry.js';
import { approvalOf, askDoc, buildApprovalsApp, type Service } from '../support/approvals-app.js';
import { makeTestProjects, type TestProjects } from '../support/app.js';
import { tempFolder } from '../support/temp-folder.js';
import { elapse, waitFor } from '../support/wait.js';

const policy = askDoc({ allowedTools: ['idea_ticket_read'], askTools: ['idea_ask_agent'] });
const memory = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };
const ask = { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' };
const RESCAN_MS = 50;

/** A projects root that can be made unlistable and listable again, each in one step. */
interface UnlistableRoot {
  /** The projects as the app is to be given them: their root under the path that will fail. */
  readonly projects: TestProjects;
  /** Makes listing the root fail with an error other than ENOENT. */
  break(): Promise<void>;
  restore(): Promise<void>;
}

/**
 * EACCES through chmod 000; for root, whom chmod does not stop, the root is served through a link
 * swapped (by a rename, so the path never goes missing) for a link to itself: ELOOP.
 */
async function unlistable(projects: TestProjects): Promise<UnlistableRoot> {
  if (process.getuid?.() !== 0) {
    return { projects, break: () => chmod(projects.root, 0o000), restore: () => chmod(projects.root, 0o700) };
  }
  const link = path.join(projects.outer, 'projects-link');
  const swapTo = async (target: string): Promise<void> => {
    await symlink(target, `${link}.next`);
    await rename(`${link}.next`, link);
  };
  await swapTo(path.basename(projects.root));
  return {
    projects: { ...projects, root: link },
    break: () => swapTo(path.basename(link)),
    restore: () => swapTo(path.basename(projects.root)),
  };
}

async function listingError(root: string): Promise<unknown> {
  return readdir(root).then(
    () => 'listed',
    (error: unknown) => (error as NodeJS.ErrnoException).code,
  );
}

/** A grant, an armed `once` answer and a recorded decision for `demo`; answers the ids of its recent decisions. */
async function grantAndRemember(service: Service): Promise<string[]> {
  await service.grant('demo', 'QA', ['idea_memory_write'], 3600);
  await service.answer('demo', approvalOf(await service.decide(ask)), { answer: 'once' });
  expect(await service.decide(memory)).toMatchObject({ allow: true, source: 'grant' });
  return recentIds(service);
}

async function recentIds(service: Service): Promise<string[]> {
  const response = await service.call('GET', '/projects/demo/decisions');
  expect(response.statusCode).toBe(200);
  return response.json<{ decisions: { decisionId: string }[] }>().decisions.map((decision) => decision.decisionId);
}

/** Once the root lists again: the grant allows, the `once` answer allows once, and the history is there. */
async function expectAllKept(service: Service, remembered: string[]): Promise<void> {
  await waitFor(async () => (await service.decide(memory)).allow, 'demo served again with its grant', 10_000);
  expect(await service.decide(memory)).toMatchObject({ allow: true, source: 'grant' });
  expect(await service.decide(ask)).toMatchObject({ allow: true, source: 'approval' });
  expect(await service.decide(ask)).toMatchObject({ allow: false, reason: 'approval_required' });
  expect(await recentIds(service)).toEqual(expect.arrayContaining(remembered));
}

describe('a projects root that cannot be listed', () => {
  it('at start: every decision denies, and nothing kept for its projects is forgotten', async (t) => {
    const stateDir = await tempFolder();
    const first = await buildApprovalsApp(t, { demo: { policy } }, { stateDir });
    const remembered = await grantAndRemember(first);
    await first.close();
    const savedHistory = path.join(stateDir, 'recent-decisions');
    expect(await readdir(savedHistory)).toContain('demo.json');

    const root = await unlistable(first);
    await root.break();
    let restored = false;
    try {
      expect(await listingError(root.projects.root)).not.toMatch(/^(listed|ENOENT)$/);
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
      const second = await buildApprovalsApp(t, {}, { stateDir, projects: root.projects, rescanMs: RESCAN_MS, logger });
      expect(await second.decide(memory)).toMatchObject({ allow: false, reason: 'unknown_project' });
      expect(await second.decide(ask)).toMatchObject({ allow: false });
      // Not ready: the projects the root holds are unknown, not loaded.
      const unready = await second.call('GET', '/readyz');
      expect(unready.statusCode).toBe(503);
      expect(unready.json()).toMatchObject({ status: 'degraded', projects: 0 });
      expect(unready.json<{ message: string }>().message).toContain(`cannot be listed (${String(await listingError(root.projects.root))})`);
      await elapse(ABSENCE_CONFIRM_MS * 2); // rescans whose listing fails: none may count as "every project removed"
      expect(await readdir(savedHistory)).toContain('demo.json');
      await root.restore();
      restored = true;
      await expectAllKept(second, remembered);
      expect((await second.call('GET', '/readyz')).json()).toEqual({ status: 'ready', projects: 1 });
      // Once per run of failures, though the rescan tried every 50 ms.
      const messages = lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(messages.filter((message) => message === 'cannot list the projects root')).toHaveLength(1);
      expect(messages.filter((message) => message === 'projects root listed again')).toHaveLength(1);
    } finally {
      if (!restored) await root.restore();
    }
  });

  it('the first listing that succeeds forgets what belonged to a project gone meanwhile, and only that', async (t) => {
    const stateDir = await tempFolder();
    const first = await buildApprovalsApp(t, { demo: { policy }, gone: { policy } }, { stateDir });
    const remembered = await grantAndRemember(first);
    await first.grant('gone', 'QA', ['idea_memory_write'], 3600);
    expect(await first.decide({ ...memory, project: 'gone' })).toMatchObject({ allow: true, source: 'grant' });
    await first.close();
    const savedHistory = path.join(stateDir, 'recent-decisions');
    expect((await readdir(savedHistory)).sort()).toEqual(['demo.json', 'gone.json']);
    await rm(path.join(first.root, 'gone'), { recursive: true });

    const root = await unlistable(first);
    await root.break();
    let restored = false;
    try {
      const second = await buildApprovalsApp(t, {}, { stateDir, projects: root.projects, rescanMs: RESCAN_MS });
      expect(await second.decide(memory)).toMatchObject({ allow: false });
      await root.restore();
      restored = true;
      await expectAllKept(second, remembered);
      await waitFor(async () => !(await readdir(savedHistory)).includes('gone.json'), 'the history of the project gone removed');
      expect(await readdir(savedHistory)).toEqual(['demo.json']);
      const kept = JSON.parse(await readFile(path.join(stateDir, STATE_FILE_NAME), 'utf8')) as { grants: { project: string }[] };
      expect(kept.grants.map((grant) => grant.project)).toEqual(['demo']);
    } finally {
      if (!restored) await root.restore();
    }
  });

  it('while running: the rescans that fail to list it forget no grant and no history', async (t) => {
    const stateDir = await tempFolder();
    const root = await unlistable(await makeTestProjects(t, { demo: { policy } }));
    const service = await buildApprovalsApp(t, {}, { stateDir, projects: root.projects, rescanMs: RESCAN_MS });
    const remembered = await grantAndRemember(service);
    await root.break();
    let restored = false;
    try {
      expect(await listingError(root.projects.root)).not.toMatch(/^(listed|ENOENT)$/);
      await elapse(ABSENCE_CONFIRM_MS * 2); // rescans whose listing fails
      expect(await service.decide(memory)).toMatchObject({ allow: false });
      await root.restore();
      restored = true;
      await waitFor(async () => (await service.decide(memory)).allow, 'demo served again with its grant', 10_000);
      expect(await service.decide(memory)).toMatchObject({ allow: true, source: 'grant' });
      expect(await recentIds(service)).toEqual(expect.arrayContaining(remembered));
    } finally {
      if (!restored) await root.restore();
    }
  });
});
