/**
 * `git checkout` deletes the policy file before it writes the other branch's
 * version. A policy file that disappears denies every call for VANISHED_GRACE_MS, then is checked
 * again, before the built-in read set applies: nothing is allowed during a swap that neither
 * version allows. Real files, the real watcher.
 */
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { promises as fsPromises, unlinkSync, writeFileSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { TOOL_CATALOG } from '../../schemas/index.js';
import { VANISHED_GRACE_MS } from '../../server/projects/project.js';
import { policyText } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, policyPathOf, startRegistry, timeUntil } from '../support/folder-registry.js';
import { elapse } from '../support/wait.js';

const BRANCH_A = { QA: ['idea_ticket_read'] };
const BRANCH_B = { QA: ['idea_ticket_list'] };
const REQUESTERS = ['QA', 'Main'];
const TOOLS = TOOL_CATALOG.map((tool) => tool.name);
/** What either branch allows (both deny everything to everyone else: their project default is empty). */
const allowedByABranch = (requester: string, tool: string): boolean =>
  requester === 'QA' && (BRANCH_A.QA.includes(tool) || BRANCH_B.QA.includes(tool));

/**
 * A monotonic clock that moves only by the checkout's own gaps, from the real one at the start: a
 * loaded machine that stalls this process for 150 ms in a gap would otherwise leave the file
 * really missing for 150 ms, which rightly ends the grace, and the test would fail by chance.
 */
function checkoutClock(): { advance(ms: number): void; restore(): void } {
  let now = performance.now();
  const spy = vi.spyOn(performance, 'now').mockImplementation(() => now);
  return {
    advance: (ms) => (now += ms),
    restore: () => {
      spy.mockRestore();
    },
  };
}

describe('a policy file that disappears', () => {
  it('allows nothing that neither branch allows while a checkout deletes and rewrites it (80 swaps)', async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], BRANCH_A));
    const file = policyPathOf(root);
    const { registry } = await startRegistry({ projectsRoot: folder });
    const checkedOut = new AbortController();
    const clock = checkoutClock();
    const gap = async (ms: number): Promise<void> => {
      clock.advance(ms);
      await elapse(ms);
    };
    const checkout = (async () => {
      for (let swap = 0; swap < 80; swap++) {
        await unlink(file);
        // Git's gap between the two, stretched to a few ms so that the service sees it (part of the scenario).
        await gap(Math.random() * 8);
        await writeFile(file, policyText([], swap % 2 === 0 ? BRANCH_B : BRANCH_A));
        await gap(Math.random() * 4);
      }
    })().finally(() => {
      checkedOut.abort();
      clock.restore();
    });
    const wrong: string[] = [];
    let decisions = 0;
    while (!checkedOut.signal.aborted) {
      for (const requester of REQUESTERS) {
        for (const tool of TOOLS) {
          const decision = decideWith(registry, 'demo', requester, tool);
          decisions++;
          if (decision.allow && !allowedByABranch(requester, tool)) wrong.push(`${requester} ${tool} (${decision.source})`);
        }
      }
      await yieldToEvents();
    }
    await checkout;
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(decisions).toBeGreaterThan(1_000);
  }, 60_000);

  it('lets no read begun before the file came back end the grace, however long the read takes', async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], BRANCH_A));
    const file = policyPathOf(root);
    const { registry } = await startRegistry({ projectsRoot: folder });
    // What decisions see at each change, the moment it is published.
    const published: string[] = [];
    registry.changes.subscribe({
      projectChanged: (project) => {
        if (project === 'demo') published.push(decideWith(registry, 'demo', 'Main', 'idea_memory_read').source);
      },
    });
    // The second read that finds the file missing is held, as a loaded machine may hold it.
    let misses = 0;
    let release = (): void => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    let held = (): void => undefined;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const realOpen = fsPromises.open.bind(fsPromises);
    const open = vi.spyOn(fsPromises, 'open').mockImplementation(async (...args: Parameters<typeof fsPromises.open>) => {
      try {
        return await realOpen(...args);
      } catch (error) {
        if (args[0] === file && ++misses === 2) {
          held();
          await released;
        }
        throw error;
      }
    });
    try {
      await unlink(file);
      await holding;
      await writeFile(file, policyText([], BRANCH_B));
      // Back for twice the grace while the read that missed it is held: it must not end the grace.
      await elapse(VANISHED_GRACE_MS * 2);
      release();
      await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_ticket_list').allow, 'branch B');
    } finally {
      release();
      open.mockRestore();
    }
    expect(misses).toBeGreaterThanOrEqual(2);
    expect(published.filter((source) => source === 'builtin-read-only')).toEqual([]);
    expect(published.at(-1)).toBe('project-default');
  });

  it(`denies with policy_invalid for ${VANISHED_GRACE_MS} ms, then falls back to the built-in read set`, async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], BRANCH_A));
    const { registry, changes } = await startRegistry({ projectsRoot: folder });
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_read').allow).toBe(false);
    await unlink(policyPathOf(root));
    const deleted = performance.now();
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_read').reason === 'policy_invalid', 'denied as invalid');
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_read')).toMatchObject({ allow: false, reason: 'policy_invalid' });
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_read').allow, 'the built-in read set', 5_000);
    expect(performance.now() - deleted).toBeGreaterThanOrEqual(VANISHED_GRACE_MS);
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_read')).toMatchObject({ source: 'builtin-read-only', revision: 'builtin' });
    // Both steps were told to the listener, the built-in state once it was in place.
    expect(changes.filter((entry) => entry.project === 'demo').map((entry) => entry.change)).toEqual(['added', 'invalid', 'ok']);
  });

  it('goes back to the file without the built-in step when it comes back within the grace period', async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], BRANCH_A));
    const { registry } = await startRegistry({ projectsRoot: folder });
    await unlink(policyPathOf(root));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_ticket_read').reason === 'policy_invalid', 'denied as invalid');
    await writeFile(policyPathOf(root), policyText([], BRANCH_B));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_ticket_list').allow, 'branch B');
    await elapse(VANISHED_GRACE_MS * 2); // a window in which nothing may change: the grace's end must not deny branch B
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_list').allow).toBe(true);
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_read').allow).toBe(false);
  });

  it('ends its grace on time when the wall clock is set back meanwhile (NTP, a resumed VM)', async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], BRANCH_A));
    const { registry } = await startRegistry({ projectsRoot: folder });
    await unlink(policyPathOf(root));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_read').reason === 'policy_invalid', 'denied as invalid');
    const realNow = Date.now.bind(Date);
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() - 3_600_000);
    try {
      await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_read').allow, 'the built-in read set', 3_000);
    } finally {
      clock.mockRestore();
    }
  });

  it('starts the grace again when the file comes and goes between two reads', async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], BRANCH_A));
    const file = policyPathOf(root);
    const { registry } = await startRegistry({ projectsRoot: folder });
    await unlink(file);
    const deleted = performance.now();
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_ticket_read').reason === 'policy_invalid', 'denied as invalid');
    await elapse(VANISHED_GRACE_MS * 0.4 - (performance.now() - deleted));
    // A checkout's next swap, too quick for any read to see the file: only the watcher hears it.
    writeFileSync(file, policyText([], BRANCH_B));
    unlinkSync(file);
    const blip = performance.now();
    await elapse(VANISHED_GRACE_MS * 1.15 - (performance.now() - deleted));
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_read')).toMatchObject({ allow: false, reason: 'policy_invalid' });
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_read').allow, 'the built-in read set', 5_000);
    expect(performance.now() - blip).toBeGreaterThanOrEqual(VANISHED_GRACE_MS);
  });
});
