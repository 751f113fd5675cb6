/** `once` answers (docs/api.md#approvals-and-temporary-grants): the next matching call only, exactly once, even under concurrent calls and restarts. */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TOOL_CATALOG } from '../../schemas/catalog.js';
import { STATE_FILE_NAME } from '../../server/approvals/state-file.js';
import { tempFolder } from '../support/temp-folder.js';
import { failureLogger, open, TestClock } from '../support/clocked-approvals.js';
import { elapse } from '../support/wait.js';

const writeTools = TOOL_CATALOG.filter((tool) => tool.access === 'write').map((tool) => tool.name);

/** Opens a request of `requester` for `tool` and answers it `once`. */
async function approveOnce(harness: ReturnType<typeof open>, requester: string, tool: string, issueRef?: string): Promise<string> {
  const outcome = harness.requests.request('demo', requester, tool, issueRef, harness.clock.now);
  if (outcome.kind !== 'pending') throw new Error(`expected a pending request, got ${outcome.kind}`);
  await harness.requests.answer('demo', outcome.approval.id, 'once', undefined, harness.clock.now);
  return outcome.approval.id;
}

/** 0–4 ms of jitter so that the 50 callers interleave differently on every run (the scenario). */
const randomPause = () => elapse(Math.floor(Math.random() * 5));

describe('once answers', () => {
  it('50 concurrent calls after a once answer: exactly one is allowed, and the next call is not', async () => {
    const harness = open({ stateDirectory: await tempFolder() });
    await approveOnce(harness, 'QA', 'idea_memory_write');
    const results = await Promise.all(
      Array.from({ length: 50 }, async () => {
        await randomPause();
        return harness.requests.consumeOnce('demo', 'QA', 'idea_memory_write', undefined, harness.clock.now);
      }),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_memory_write', undefined, harness.clock.now)).toBe(false);
  });

  it('allows only the requester, tool and project answered', async () => {
    const harness = open();
    await approveOnce(harness, 'QA', 'idea_memory_write');
    const { now } = harness.clock;
    expect(harness.requests.consumeOnce('demo', 'Git', 'idea_memory_write', undefined, now)).toBe(false);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ask_agent', undefined, now)).toBe(false);
    expect(harness.requests.consumeOnce('other', 'QA', 'idea_memory_write', undefined, now)).toBe(false);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_memory_write', undefined, now)).toBe(true);
  });

  it('is bound to the ticket of the request: "#82" and "82" match, another ticket or none does not', async () => {
    const harness = open();
    const { now } = harness.clock;
    await approveOnce(harness, 'QA', 'idea_ticket_update_carnet', '#82');
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ticket_update_carnet', '83', now)).toBe(false);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ticket_update_carnet', undefined, now)).toBe(false);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ticket_update_carnet', ' 82 ', now)).toBe(true);
    await approveOnce(harness, 'QA', 'idea_ticket_update_carnet');
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ticket_update_carnet', '#82', now)).toBe(false);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ticket_update_carnet', undefined, now)).toBe(true);
  });

  it('binds an over-long ticket reference exactly, though it shows it cut', async () => {
    const harness = open();
    const long = `#${'9'.repeat(100)}`;
    const id = await approveOnce(harness, 'QA', 'idea_ticket_update', long);
    expect(harness.requests.get('demo', id, harness.clock.now)?.issueRef).toBe(`#${'9'.repeat(64)}…`);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ticket_update', `${'9'.repeat(99)}8`, harness.clock.now)).toBe(false);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ticket_update', long, harness.clock.now)).toBe(true);
  });

  it('expires unused after its lifetime', async () => {
    const harness = open({ onceTtlSeconds: 60 });
    await approveOnce(harness, 'QA', 'idea_memory_write');
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_memory_write', undefined, harness.clock.advance(60_000))).toBe(false);
  });

  it('is removed from the state file before the call it allows runs', async () => {
    const folder = await tempFolder();
    const harness = open({ stateDirectory: folder });
    await approveOnce(harness, 'QA', 'idea_memory_write');
    const saved = () => readFile(path.join(folder, STATE_FILE_NAME), 'utf8').then((text) => JSON.parse(text) as { onces: unknown[] });
    expect((await saved()).onces).toEqual([expect.objectContaining({ requester: 'QA', tool: 'idea_memory_write' })]);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_memory_write', undefined, harness.clock.now)).toBe(true);
    expect((await saved()).onces).toEqual([]);
  });

  it('survives a restart unused, and allows once across restarts', async () => {
    const folder = await tempFolder();
    const clock = new TestClock();
    const first = open({ stateDirectory: folder }, clock);
    await approveOnce(first, 'QA', 'idea_ticket_update', '#5');
    first.close();
    const second = open({ stateDirectory: folder }, clock);
    expect(second.warnings).toEqual([]);
    expect(second.requests.consumeOnce('demo', 'QA', 'idea_ticket_update', '6', clock.now)).toBe(false);
    expect(second.requests.consumeOnce('demo', 'QA', 'idea_ticket_update', '5', clock.now)).toBe(true);
    second.close();
    const third = open({ stateDirectory: folder }, clock);
    expect(third.requests.consumeOnce('demo', 'QA', 'idea_ticket_update', '5', clock.now)).toBe(false);
  });

  it('refuses the call when its consumption cannot be saved, and keeps the answer for the next call', async () => {
    const folder = await tempFolder();
    const failures: Error[] = [];
    const harness = open({ stateDirectory: folder, logger: failureLogger(failures) });
    await approveOnce(harness, 'QA', 'idea_memory_write');
    const moved = `${folder}-moved`;
    await rename(folder, moved);
    await writeFile(folder, 'not a folder');
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_memory_write', undefined, harness.clock.now)).toBe(false);
    expect(failures).toHaveLength(1);
    await rm(folder);
    await rename(moved, folder);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_memory_write', undefined, harness.clock.now)).toBe(true);
  });

  it('arms nothing and leaves the request pending when the answer cannot be saved', async () => {
    const folder = await tempFolder();
    const harness = open({ stateDirectory: folder });
    const outcome = harness.requests.request('demo', 'QA', 'idea_memory_write', undefined, harness.clock.now);
    if (outcome.kind !== 'pending') throw new Error('expected a pending request');
    await rm(folder, { recursive: true });
    await writeFile(folder, 'not a folder');
    await expect(harness.requests.answer('demo', outcome.approval.id, 'once', undefined, harness.clock.now)).rejects.toMatchObject({
      code: 'write_failed',
    });
    expect(harness.requests.get('demo', outcome.approval.id, harness.clock.now)?.status).toBe('pending');
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_memory_write', undefined, harness.clock.now)).toBe(false);
    await rm(folder);
  });

  it('property: whatever the calls, each once answer allows at most one call, and only a matching one', async () => {
    const requester = fc.constantFrom('QA', 'Git');
    const tool = fc.constantFrom(...writeTools.slice(0, 3));
    const issue = fc.constantFrom(undefined, '#1', '2');
    const step = fc.oneof(
      fc.record({ kind: fc.constant('approve' as const), requester, tool, issue }),
      fc.record({ kind: fc.constant('call' as const), requester, tool, issue, concurrent: fc.integer({ min: 1, max: 8 }) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const harness = open();
        const armed = new Map<string, string | undefined>();
        const key = (who: string, what: string) => `${who} ${what}`;
        const same = (a: string | undefined, b: string | undefined) => a?.replace('#', '') === b?.replace('#', '');
        for (const step of steps) {
          if (step.kind === 'approve') {
            const outcome = harness.requests.request('demo', step.requester, step.tool, step.issue, harness.clock.now);
            if (outcome.kind !== 'pending') continue;
            await harness.requests.answer('demo', outcome.approval.id, 'once', undefined, harness.clock.now);
            armed.set(key(step.requester, step.tool), harness.requests.get('demo', outcome.approval.id, harness.clock.now)?.issueRef);
            continue;
          }
          const allowed = await Promise.all(
            Array.from({ length: step.concurrent }, async () => {
              await Promise.resolve();
              return harness.requests.consumeOnce('demo', step.requester, step.tool, step.issue, harness.clock.now);
            }),
          );
          const k = key(step.requester, step.tool);
          const expected = armed.has(k) && same(armed.get(k), step.issue) ? 1 : 0;
          expect(allowed.filter(Boolean)).toHaveLength(expected);
          if (expected === 1) armed.delete(k);
        }
        harness.close();
      }),
      { numRuns: 200 },
    );
  });
});
