/**
 * `/decide` of a tool with two conditions on its arguments vs the same tool without
 * (docs/api.md#conditions-on-a-tools-arguments, bench/README.md#targets: ≥ 0.9×), one server, the two loads interleaved in the same run. Both send the same
 * arguments and are allowed, so only reading the conditions (and keeping their values in the ring)
 * differs; a conditioned decision is never memoized, the plain one is.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DecideQuery } from '../../schemas/index.js';
import { postDecide, singleConnectionPool, type BenchContext, type SectionResult } from '../lib/context.js';
import { interleavedLoad } from '../lib/interleave.js';
import { startServer } from '../lib/processes.js';
import { fmt, median, pairedRatio } from '../lib/stats.js';

const TARGET = 0.9;
const TOOL = 'idea_run_in_background';

const POLICY = {
  version: 1,
  agents: [
    { agentId: 'Plain', policy: { allowedTools: [TOOL] } },
    {
      agentId: 'Conditioned',
      policy: {
        allowedTools: [TOOL],
        conditions: { [TOOL]: { command: { prefix: ['npm test --', 'npm run lint'] }, label: { notIn: ['deploy', 'release'] } } },
      },
    },
  ],
};

const query = (requester: string): DecideQuery => ({
  project: 'bench',
  requester,
  tool: TOOL,
  arguments: { command: 'npm test -- --run src/app', label: 'ci', cwd: '/work/app' },
});

export async function conditionsSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-conditions-'));
  await mkdir(path.join(root, 'bench', '.ideai'), { recursive: true });
  await writeFile(path.join(root, 'bench', '.ideai', 'mcp-tool-permissions.json'), JSON.stringify(POLICY));
  const server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule });
  try {
    const pool = singleConnectionPool(server.origin);
    try {
      for (const requester of ['Plain', 'Conditioned']) {
        const decision = await postDecide(pool, query(requester));
        if (!decision.allow) throw new Error(`${requester} is not allowed: ${decision.message}`);
      }
    } finally {
      await pool.close();
    }
    const targets = ['Plain', 'Conditioned'].map((requester) => ({
      name: requester === 'Plain' ? 'no condition' : 'two conditions',
      origin: server.origin,
      bodies: [query(requester)],
      pid: server.pid,
    }));
    const results = await interleavedLoad(ctx, targets);
    const rps = (name: string) => (results.get(name) ?? []).map((round) => round.requestsPerSec);
    const cpu = (name: string) => median((results.get(name) ?? []).map((round) => round.cpuUsPerRequest));
    const ratio = pairedRatio(rps('two conditions'), rps('no condition'));
    const section = 'conditions (/decide of a conditioned tool)';
    ctx.log(
      `  two conditions / none: ${fmt(ratio)}× (CPU ${fmt(cpu('two conditions'), 'µs')} vs ${fmt(cpu('no condition'), 'µs')} per request)`,
    );
    return {
      rows: [
        { section, figure: 'no condition', value: fmt(median(rps('no condition')), 'req/s'), target: '', pass: null },
        { section, figure: 'two conditions', value: fmt(median(rps('two conditions')), 'req/s'), target: '', pass: null },
        {
          section,
          figure: 'two conditions / none (paired rounds)',
          value: `${fmt(ratio)}×`,
          target: `≥ ${TARGET}×`,
          pass: ratio >= TARGET,
        },
      ],
      raw: {
        ratio,
        plain: rps('no condition'),
        conditioned: rps('two conditions'),
        cpuPlain: cpu('no condition'),
        cpuConditioned: cpu('two conditions'),
      },
    };
  } finally {
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
}
