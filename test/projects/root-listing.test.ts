/**
 * A projects root that cannot be listed (too many open files, no permission)
 * removes no project; a project leaves only when its folder is found missing twice, at least
 * ABSENCE_CONFIRM_MS apart. Whatever hangs on a project (ephemeral policies) is dropped on
 * 'removed', so 'removed' must mean it.
 */
import { promises as fsPromises } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ABSENCE_CONFIRM_MS } from '../../server/projects/registry.js';
import { policyText } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { makeProject, startRegistry, timeUntil } from '../support/folder-registry.js';
import { elapse } from '../support/wait.js';

afterEach(() => vi.restoreAllMocks());

async function threeProjects(): Promise<string> {
  const root = await tempFolder();
  for (const id of ['p1', 'p2', 'p3']) await makeProject(root, id, policyText(undefined, { QA: ['idea_memory_write'] }));
  return root;
}

describe('the projects root', () => {
  for (const code of ['EMFILE', 'EACCES', 'EIO']) {
    it(`removes no project while it cannot be listed (${code})`, async () => {
      const root = await threeProjects();
      const { registry, changes } = await startRegistry({ projectsRoot: root });
      const failure = Object.assign(new Error(`${code}: cannot list`), { code });
      const readdir = vi.spyOn(fsPromises, 'readdir').mockRejectedValue(failure);
      for (let scan = 0; scan < 4; scan++) {
        await registry.rescan();
        await elapse(ABSENCE_CONFIRM_MS / 2); // time in which a listing failure must not count as an absence
      }
      expect(readdir).toHaveBeenCalled();
      readdir.mockRestore();
      await registry.rescan();
      expect(registry.list().map((project) => project.id)).toEqual(['p1', 'p2', 'p3']);
      expect(changes.filter((entry) => entry.change === 'removed')).toEqual([]);
    });
  }

  it('removes a project whose folder is gone only once that is seen twice', async () => {
    const root = await threeProjects();
    const { registry, changes } = await startRegistry({ projectsRoot: root });
    await rm(path.join(root, 'p3'), { recursive: true });
    const removedAfter = await timeUntil(() => registry.get('p3') === undefined, 'p3 removed', 10_000);
    expect(removedAfter).toBeGreaterThanOrEqual(ABSENCE_CONFIRM_MS * 0.9);
    expect(changes.filter((entry) => entry.change === 'removed')).toEqual([{ project: 'p3', change: 'removed' }]);
  });

  it('keeps a project whose folder is moved away and back within the confirmation delay', async () => {
    const root = await threeProjects();
    const { registry, changes } = await startRegistry({ projectsRoot: root, rescanMs: 20 });
    await rename(path.join(root, 'p2'), path.join(root, '.p2-away'));
    await elapse(ABSENCE_CONFIRM_MS / 3); // away for a third of the confirmation delay (the scenario)
    await rename(path.join(root, '.p2-away'), path.join(root, 'p2'));
    await elapse(ABSENCE_CONFIRM_MS * 3); // a window in which p2 must not be removed
    expect(registry.get('p2')).toBeDefined();
    // Added once (at start), never removed: what hangs on the project was never dropped.
    const comings = changes.filter((entry) => entry.change === 'added' || entry.change === 'removed');
    expect(comings.map((entry) => `${entry.project} ${entry.change}`).sort()).toEqual(['p1 added', 'p2 added', 'p3 added']);
  });
});
