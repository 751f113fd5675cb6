/**
 * docs/design.md#writes-a-compare-and-swap-on-the-file: an API write racing an editor's atomic save from another thread never
 * loses the editor's revocation. The editor runs in a worker thread (truly in parallel, as another
 * process would) and renames its save over the file at a random moment inside the PUT, half of the
 * time right when the write is seen replacing the file. Whatever the interleaving, the revoked
 * agent must end up denied, in the file and in decisions. Check-then-rename lost 9 of 65 rounds.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { revisionOf } from '../../server/domain/compile.js';
import { agentUrl, buildTestApp, call, decide } from '../support/app.js';
import { policyText, saveAtomically } from '../support/files.js';
import { waitFor } from '../support/wait.js';

/** Long enough for ~150 rounds on a loaded 2-core machine, short enough for the suite. */
const BUDGET_MS = 20_000;
const MAX_ROUNDS = 150;

// ~400 filler agents: a ~40 kB file, so reading and comparing it takes a measurable time.
const FILLER: Record<string, string[]> = Object.fromEntries(
  Array.from({ length: 400 }, (_, index) => [`filler-${index}`, ['idea_ticket_read', 'idea_memory_read']]),
);
const GRANTED = policyText(undefined, { ...FILLER, Evil: ['idea_run_in_background'] });
const REVOKED = policyText(undefined, FILLER);

/**
 * The editor: told a temp file, it waits until the service's write is visibly under way (a second
 * name for the policy file, or the file missing: the moment a write replaces it), at most
 * `waitMs`, then spins `delayUs` more and renames the temp over the file.
 */
const EDITOR_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { renameSync, statSync } = require('node:fs');
const { performance } = require('node:perf_hooks');
const nlink = (file) => statSync(file, { throwIfNoEntry: false })?.nlink ?? 0;
parentPort.on('message', ({ temp, file, delayUs, waitMs }) => {
  const give = performance.now() + waitMs;
  while (nlink(file) === 1 && performance.now() < give);
  const until = performance.now() + delayUs / 1000;
  while (performance.now() < until);
  renameSync(temp, file);
  parentPort.postMessage('saved');
});
`;

describe('an API write racing an editor’s save in another thread', () => {
  it('never brings a revoked agent back, over many rounds', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: GRANTED } }, { rescanMs: 0 });
    const file = server.policyPath('demo');
    const editor = new Worker(EDITOR_SOURCE, { eval: true });
    try {
      const evil = async () => (await decide(server.app, { project: 'demo', requester: 'Evil', tool: 'idea_run_in_background' })).allow;
      const put = (round: number) =>
        call(server.app, 'PUT', agentUrl('demo', `Other${round}`), { auth: true, body: { allowedTools: ['idea_ticket_read'] } });

      // How long a PUT takes here, so the editor's save is spread over the whole of it.
      const started = performance.now();
      for (let round = 0; round < 3; round++) expect((await put(-1 - round)).statusCode).toBe(200);
      const putUs = ((performance.now() - started) / 3) * 1000;

      const lost: number[] = [];
      const outcomes = new Map<number, number>();
      const deadline = Date.now() + BUDGET_MS;
      let rounds = 0;
      for (; rounds < MAX_ROUNDS && Date.now() < deadline; rounds++) {
        await saveAtomically(file, GRANTED);
        await waitFor(evil, `round ${rounds}: the grant is heard`);
        const temp = `${file}.editor-${rounds}`;
        await writeFile(temp, REVOKED);
        const saved = new Promise((resolve) => editor.once('message', resolve));
        // Even rounds: right as the write replaces the file; odd rounds: anywhere in the PUT.
        const timing =
          rounds % 2 === 0 ? { delayUs: Math.random() * 400, waitMs: putUs / 1000 } : { delayUs: Math.random() * putUs, waitMs: 0 };
        editor.postMessage({ temp, file, ...timing });
        const status = (await put(rounds)).statusCode;
        outcomes.set(status, (outcomes.get(status) ?? 0) + 1);
        await saved;
        // Settled: the service decides with what the file now holds.
        await waitFor(
          async () =>
            revisionOf(await readFile(file)) ===
            (await decide(server.app, { project: 'demo', requester: 'Evil', tool: 'idea_ticket_read' })).revision,
          `round ${rounds}: the service follows the file`,
        );
        const text = await readFile(file, 'utf8');
        if (text.includes('"Evil"') || (await evil())) lost.push(rounds);
      }
      expect(rounds).toBeGreaterThanOrEqual(40);
      expect(lost, `revocation lost in rounds ${lost.join(', ')} of ${rounds}; PUT answers ${JSON.stringify([...outcomes])}`).toEqual([]);
      expect([...outcomes.keys()].every((status) => status === 200 || status === 409)).toBe(true);
    } finally {
      await editor.terminate();
    }
  }, 60_000);
});
