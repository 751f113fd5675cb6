/**
 * `/decide` of a tool with a usage limit vs the same tool without (docs/api.md#usage-limits,
 * bench/README.md#targets: ≥ 0.9×), one server, the two loads interleaved in the same run. Both are
 * allowed (the cap, 100,000 calls a second, is never reached), so only reading and counting the
 * window differs; a limited decision is never memoized, the plain one is.
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
const TOOL = 'idea_ask_agent';

const POLICY = {
  version: 1,
  agents: [
    { agentId: 'Plain', policy: { allowedTools: [TOOL] } },
    { agentId: 'Limited', policy: { allowedTools: [TOOL], limits: { [TOOL]: { max: 100_000, per: '1s' } } } },
  ],
};

const query = (requester: string): DecideQuery => ({
  project: 'bench',
  requester,
  tool: TOOL,
  arguments: { agentId: 'QA', prompt: 'Review the change' },
});

export async function limitsSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-limits-'));
  await mkdir(path.join(root, 'bench', '.ideai'), { recursive: true });
  await writeFile(path.join(root, 'bench', '.ideai', 'mcp-tool-permissions.json'), JSON.stringify(POLICY));
  const server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule });
  try {
    const pool = singleConnectionPool(server.origin);
    try {
      for (const requester of ['Plain', 'Limited']) {
        const decision = await postDecide(pool, query(requester));
        if (!decision.allow) throw new Error(`${requester} is not allowed: ${decision.message}`);
      }
    } finally {
      await pool.close();
    }
    const targets = ['Plain', 'Limited'].map((requester) => ({
      name: requester === 'Plain' ? 'unlimited' : 'limited',
      origin: server.origin,
      bodies: [query(requester)],
      pid: server.pid,
    }));
    const results = await interleavedLoad(ctx, targets);
    const rps = (name: string) => (results.get(name) ?? []).map((round) => round.requestsPerSec);
    const cpu = (name: string) => median((results.get(name) ?? []).map((round) => round.cpuUsPerRequest));
    const ratio = pairedRatio(rps('limited'), rps('unlimited'));
    const section = 'limits (/decide of a limited tool)';
    ctx.log(`  limited / unlimited: ${fmt(ratio)}× (CPU ${fmt(cpu('limited'), 'µs')} vs ${fmt(cpu('unlimited'), 'µs')} per request)`);
    return {
      rows: [
        { section, figure: 'unlimited', value: fmt(median(rps('unlimited')), 'req/s'), target: '', pass: null },
        { section, figure: 'limited', value: fmt(median(rps('limited')), 'req/s'), target: '', pass: null },
        {
          section,
          figure: 'limited / unlimited (paired rounds)',
          value: `${fmt(ratio)}×`,
          target: `≥ ${TARGET}×`,
          pass: ratio >= TARGET,
        },
      ],
      raw: {
        ratio,
        plain: rps('unlimited'),
        limited: rps('limited'),
        cpuPlain: cpu('unlimited'),
        cpuLimited: cpu('limited'),
      },
    };
  } finally {
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
}
