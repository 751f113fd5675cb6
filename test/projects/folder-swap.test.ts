/**
 * The watcher follows folders that are replaced, not only files. After the
 * projects root is moved away and back, or a project's `.ideai` is swapped for a prepared one,
 * an external revocation is still heard within the 100 ms target (docs/api.md#targets), with the
 * rescan off so that only the watcher can hear it. At 2 and at 1,000 projects; the worst stale
 * time is printed.
 */
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { POLICY_FILE, policyText, saveAtomically } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, startRegistry, timeUntil } from '../support/folder-registry.js';
import type { ProjectRegistry } from '../../server/projects/registry.js';
import { elapse } from '../support/wait.js';

const GRANT = policyText(undefined, { QA: ['idea_memory_write'] });
const GRANT_SWAPPED = policyText(undefined, { QA: ['idea_memory_write'], Swapped: [] });
const REVOKED = policyText(undefined, { QA: [] });
/** The target of docs/api.md#targets, for the median of the sample. */
const TARGET_MS = 100;
/** Every revocation must be heard within this (a deaf watch never hears it); the machine is shared, so single ones may be slow. */
const HEARD_WITHIN_MS = 1_000;
/** Projects whose revocation is timed in the 1,000-project runs. */
const SAMPLE = 20;

const granted = (registry: ProjectRegistry, id: string): boolean => decideWith(registry, id, 'QA', 'idea_memory_write').allow;

async function makeProjects(count: number): Promise<{ root: string; ids: string[] }> {
  const root = path.join(await tempFolder(), 'projects');
  await mkdir(root);
  const ids = Array.from({ length: count }, (_, index) => `p${String(index).padStart(4, '0')}`);
  for (const id of ids) await makeProject(root, id, GRANT);
  return { root, ids };
}

function sampleOf(ids: readonly string[]): string[] {
  if (ids.length <= SAMPLE) return [...ids];
  const step = Math.floor(ids.length / SAMPLE);
  return ids
    .filter((_, index) => index % step === 0)
    .slice(0, SAMPLE - 1)
    .concat(ids[ids.length - 1] as string);
}

/** Revokes QA's grant in each project, one after the other; returns how long a decision still allowed it, for each. */
async function staleTimes(registry: ProjectRegistry, root: string, ids: readonly string[]): Promise<number[]> {
  const times: number[] = [];
  for (const id of ids) {
    expect(granted(registry, id), id).toBe(true);
    await saveAtomically(path.join(root, id, '.ideai', POLICY_FILE), REVOKED);
    times.push(await timeUntil(() => !granted(registry, id), `${id}: the revocation heard`, 5_000));
  }
  return times;
}

/** Each revocation heard, the median within the target. */
function check(what: string, times: readonly number[]): void {
  const sorted = [...times].sort((a, b) => a - b);
  const median = sorted[Math.floor((sorted.length - 1) / 2)] as number;
  const worst = sorted[sorted.length - 1] as number;
  expect(worst, what).toBeLessThan(HEARD_WITHIN_MS);
  expect(median, what).toBeLessThan(TARGET_MS);
}

describe.each([2, 1000])('with %i projects', (count) => {
  it('hears a revocation after the projects root is moved away and back (at once, and after a pause)', async () => {
    const { root, ids } = await makeProjects(count);
    const { registry } = await startRegistry({ projectsRoot: root });
    const sample = sampleOf(ids);
    const [first, second] = [sample.slice(0, Math.ceil(sample.length / 2)), sample.slice(Math.ceil(sample.length / 2))];
    await rename(root, `${root}.away`);
    await rename(`${root}.away`, root);
    const atOnce = await staleTimes(registry, root, first);
    await rename(root, `${root}.away`);
    // Away for 300 ms (the scenario), long enough for the watcher to see the root gone before it comes back.
    await elapse(300);
    await rename(`${root}.away`, root);
    // Meanwhile every project read its files as gone; all are read again once the root is back.
    const untouched = ids.filter((id) => !first.includes(id));
    await timeUntil(() => untouched.every((id) => granted(registry, id)), 'every project back', 10_000);
    const afterPause = await staleTimes(registry, root, second);
    check('root moved away and back at once', atOnce);
    check('root moved away and back after 300 ms', afterPause);
    expect(registry.size).toBe(count);
  }, 120_000);

  it('hears a revocation after a project’s .ideai is swapped for .ideai.new', async () => {
    const { root, ids } = await makeProjects(count);
    const { registry } = await startRegistry({ projectsRoot: root });
    const sample = sampleOf(ids);
    for (const id of sample) {
      const ideai = path.join(root, id, '.ideai');
      await mkdir(`${ideai}.new`);
      await writeFile(path.join(`${ideai}.new`, POLICY_FILE), GRANT_SWAPPED);
      await rename(ideai, `${ideai}.old`);
      await rename(`${ideai}.new`, ideai);
    }
    const swapped = (id: string): boolean => {
      const { policy } = registry.get(id)?.state ?? {};
      return policy?.status === 'ok' && policy.overrides.has('Swapped');
    };
    await timeUntil(() => sample.every(swapped), 'every swap seen', 10_000);
    check('.ideai swapped', await staleTimes(registry, root, sample));
  }, 120_000);
});

describe('a watch that hears nothing any more', () => {
  it('is rebuilt by the rescan: the root replaced through an ancestor nobody watches', async () => {
    const top = await tempFolder();
    const root = path.join(top, 'a', 'projects');
    await makeProject(root, 'demo', GRANT);
    const { registry } = await startRegistry({ projectsRoot: root });
    expect(granted(registry, 'demo')).toBe(true);
    // The root's parent moves away with the root in it: only the rescan can notice the new root.
    await rename(path.join(top, 'a'), path.join(top, 'a-old'));
    await makeProject(root, 'demo', GRANT_SWAPPED);
    const swapped = (): boolean => {
      const { policy } = registry.get('demo')?.state ?? {};
      return policy?.status === 'ok' && policy.overrides.has('Swapped');
    };
    await registry.rescan();
    expect(swapped()).toBe(true);
    // No rescan from here on: only rebuilt watches can hear the revocation.
    await saveAtomically(path.join(root, 'demo', '.ideai', POLICY_FILE), REVOKED);
    const stale = await timeUntil(() => !granted(registry, 'demo'), 'the revocation heard', 5_000);
    check('root replaced through its parent, after the rescan', [stale]);
  });
});
