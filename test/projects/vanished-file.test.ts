/**
 * `git checkout` deletes the policy file before it writes the other branch's
 * version. A policy file that disappears denies every call for VANISHED_GRACE_MS, then is checked
 * again, before the built-in read set applies: nothing is allowed during a swap that neither
 * version allows. Real files, the real watcher.
 */
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { unlinkSync, writeFileSync } from 'node:fs';
import { unlink, writeFile } from 'node:fs/promises';
import { describe, expect, it, vi } from 'vitest';
import { TOOL_CATALOG } from '../../schemas/index.js';
import { VANISHED_GRACE_MS } from '../../server/projects/project.js';
import { policyText } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, policyPathOf, startRegistry, timeUntil } from './support.js';
import { elapse } from '../support/wait.js';

const BRANCH_A = { QA: ['idea_ticket_read'] };
const BRANCH_B = { QA: ['idea_ticket_list'] };
const REQUESTERS = ['QA', 'Main'];
const TOOLS = TOOL_CATALOG.map((tool) => tool.name);
/** What either branch allows (both deny everything to everyone else: their project default is empty). */
const allowedByABranch = (requester: string, tool: string): boolean =>
  requester === 'QA' && (BRANCH_A.QA.includes(tool) || BRANCH_B.QA.includes(tool));

describe('a policy file that disappears', () => {
  it('allows nothing that neither branch allows while a checkout deletes and rewrites it (80 swaps)', async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText([], BRANCH_A));
    const file = policyPathOf(root);
    const { registry } = await startRegistry({ projectsRoot: folder });
    const checkedOut = new AbortController();
    const checkout = (async () => {
      for (let swap = 0; swap < 80; swap++) {
        await unlink(file);
        // Git's gap between the two, stretched to a few ms so that the service sees it (part of the scenario).
        await elapse(Math.random() * 8);
        await writeFile(file, policyText([], swap % 2 === 0 ? BRANCH_B : BRANCH_A));
        await elapse(Math.random() * 4);
      }
    })().finally(() => {
      checkedOut.abort();
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
