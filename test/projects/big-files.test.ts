/**
 * A policy file is at most MAX_FILE_BYTES, and compiling one huge or
 * pathological file does not stall the decisions of other projects: files above
 * INLINE_PARSE_BYTES are compiled in a worker thread, and nesting deeper than any policy document
 * is refused before JSON.parse. Measured: the longest this thread runs without turning its event
 * loop while each file is loaded, decisions of another project being answered all along.
 */
import { readFileSync } from 'node:fs';
import { setImmediate as yieldToEvents } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { TOOL_CATALOG } from '../../schemas/index.js';
import { MAX_FILE_BYTES } from '../../server/projects/file-read.js';
import { policyText, saveAtomically } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, policyPathOf, startRegistry, timeUntil } from '../support/folder-registry.js';

/** The longest the decisions of another project may wait while a huge file compiles. */
const MAX_STALL_MS = 50;
const SIZE = MAX_FILE_BYTES - 64;
const ROUNDS = 2;

const nestedArrays = `{"version":1,"agents":${'['.repeat(SIZE / 2 - 16)}${']'.repeat(SIZE / 2 - 16)}}`;
const nestedObjects = `${'{"a":'.repeat(Math.floor(SIZE / 6))}1${'}'.repeat(Math.floor(SIZE / 6))}`;
const manyKeys = `{${Array.from({ length: 100_000 }, (_, index) => `"k${index}":1`).join(',')},"version":1}`;
const bigString = JSON.stringify({ version: 1, agents: [], note: 'x'.repeat(SIZE - 64) });
const manyNames = JSON.stringify({
  version: 1,
  projectDefault: { allowedTools: Array.from({ length: 100_000 }, (_, index) => `n${index}`) },
});
const tools = TOOL_CATALOG.map((tool) => tool.name);
/** What 1,000 agents that each list every tool need: valid, and loaded. */
const thousandAgents = `${JSON.stringify(
  {
    version: 1,
    agents: Array.from({ length: 1000 }, (_, index) => ({
      agentId: `Agent-${String(index).padStart(4, '0')}`,
      policy: { allowedTools: tools },
    })),
  },
  null,
  2,
)}\n`;

const pathological: [string, string][] = [
  ['arrays nested 2 M deep', nestedArrays],
  ['objects nested 700 k deep', nestedObjects],
  ['100,000 keys in one object', manyKeys],
  ['one 4 MiB string', bigString],
  ['100,000 unknown tool names', manyNames],
];

/** CPU time this thread has run, in ms (Linux: the first field of its schedstat, in ns). */
function mainThreadCpuMs(): number {
  return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/**
 * Runs `load` while another project is decided in a loop; returns the longest time this thread
 * ran between two turns of its event loop: how long a decision could have waited. CPU time, not
 * wall time: on a shared machine the thread also waits for a core, which is no work of ours.
 */
async function longestStall(load: () => Promise<void>, decideOther: () => boolean): Promise<number> {
  const loaded = new AbortController();
  let longest = 0;
  const watching = (async () => {
    let last = mainThreadCpuMs();
    while (!loaded.signal.aborted) {
      expect(decideOther()).toBe(true);
      await yieldToEvents();
      const now = mainThreadCpuMs();
      longest = Math.max(longest, now - last);
      last = now;
    }
  })();
  try {
    await load();
  } finally {
    loaded.abort();
    await watching;
  }
  return longest;
}

describe.skipIf(process.platform !== 'linux')('big and pathological policy files', () => {
  it(`do not stall another project's decisions for more than ${MAX_STALL_MS} ms`, async () => {
    const folder = await tempFolder();
    await makeProject(folder, 'busy', policyText(undefined, { QA: ['idea_memory_write'] }));
    const huge = await makeProject(folder, 'huge', policyText(undefined, { QA: ['idea_memory_write'] }));
    const { registry } = await startRegistry({ projectsRoot: folder });
    const busyAllowed = (): boolean => decideWith(registry, 'busy', 'QA', 'idea_memory_write').allow;
    const grantedInHuge = (agent: string): boolean => decideWith(registry, 'huge', agent, 'idea_memory_write').allow;
    let worst = 0;
    const files: [string, string, () => boolean][] = [
      ...pathological.map(([what, content]): [string, string, () => boolean] => [
        what,
        content,
        () => decideWith(registry, 'huge', 'QA', 'idea_memory_write').reason === 'policy_invalid',
      ]),
      [`1,000 agents (${(thousandAgents.length / 1024).toFixed(0)} KiB, valid)`, thousandAgents, () => grantedInHuge('Agent-0999')],
    ];
    for (const [what, content, loaded] of files) {
      expect(Buffer.byteLength(content) + ROUNDS, what).toBeLessThanOrEqual(MAX_FILE_BYTES);
      // A stall is the same work every time; a garbage collection that happens to fall in one round is not: the least of the rounds.
      let least = Infinity;
      for (let round = 0; round < ROUNDS; round++) {
        await saveAtomically(policyPathOf(huge), policyText(undefined, { QA: ['idea_memory_write'] }));
        await timeUntil(() => grantedInHuge('QA') && !grantedInHuge('Agent-0999'), `${what}: granted first`);
        // Encoded before the measure: turning 4 MiB of text into bytes is the test's work, not the service's.
        const bytes = Buffer.from(`${content}${' '.repeat(round)}`);
        const stall = await longestStall(async () => {
          await saveAtomically(policyPathOf(huge), bytes);
          await timeUntil(loaded, `${what}: loaded`, 20_000);
        }, busyAllowed);
        least = Math.min(least, stall);
      }
      worst = Math.max(worst, least);
    }
    expect(worst).toBeLessThan(MAX_STALL_MS);
  }, 300_000);

  it(`refuses a file larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB without reading it`, async () => {
    const folder = await tempFolder();
    const root = await makeProject(folder, 'demo', policyText(undefined, { QA: ['idea_memory_write'] }));
    const { registry } = await startRegistry({ projectsRoot: folder });
    await saveAtomically(policyPathOf(root), JSON.stringify({ version: 1, agents: [], note: 'x'.repeat(MAX_FILE_BYTES) }));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_memory_write').reason === 'policy_invalid', 'invalid');
    const { policy } = registry.get('demo')?.state ?? {};
    expect(policy?.status === 'invalid' && policy.error.message).toMatch(/larger than 4 MiB/);
  });
});
