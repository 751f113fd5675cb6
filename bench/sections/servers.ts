/**
 * Other MCP servers' tools (docs/api.md#other-mcp-servers-tools, bench/README.md#targets): in a project whose
 * `.ideai/mcp-servers.json` declares 500 tools, `/decide` of a declared `<server>/<tool>` vs an IdeA
 * tool, one server, the two loads interleaved in the same run (≥ 0.95×); and `idea-pdp check` of that
 * project from dist/, wall time, median of several runs (≤ 0.3 s). Both calls are allowed by an
 * override, so only the name's lookup in the project's catalog differs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DecideQuery } from '../../schemas/index.js';
import { postDecide, singleConnectionPool, type BenchContext, type SectionResult } from '../lib/context.js';
import { interleavedLoad } from '../lib/interleave.js';
import { REPO_ROOT } from '../lib/fixtures.js';
import { startServer } from '../lib/processes.js';
import { fmt, median, pairedRatio } from '../lib/stats.js';

const RATIO_TARGET = 0.95;
const CHECK_TARGET_MS = 300;
const CHECK_RUNS = 9;
/** 5 servers × 100 tools: the catalog the target names. */
const SERVERS = 5;
const TOOLS_PER_SERVER = 100;
const DECLARED = 'srv2/tool_050';
const IDEA = 'idea_memory_read';

function serversDocument(): unknown {
  const servers: Record<string, unknown> = {};
  for (let server = 0; server < SERVERS; server++) {
    const tools: Record<string, unknown> = {};
    for (let tool = 0; tool < TOOLS_PER_SERVER; tool++) {
      tools[`tool_${String(tool).padStart(3, '0')}`] = { access: tool % 2 === 0 ? 'read' : 'write', label: `Outil ${tool}` };
    }
    servers[`srv${server}`] = { label: `Serveur ${server}`, tools };
  }
  return { version: 1, servers };
}

const POLICY = {
  version: 1,
  agents: [
    { agentId: 'Idea', policy: { allowedTools: [IDEA] } },
    { agentId: 'Server', policy: { allowedTools: [DECLARED, 'srv4/tool_099', 'srv0/tool_001'] } },
  ],
};

const query = (requester: string): DecideQuery => ({
  project: 'bench',
  requester,
  tool: requester === 'Idea' ? IDEA : DECLARED,
  arguments: { path: '/work/app/README.md' },
});

/** Median wall time of `idea-pdp check DIR` from dist/, in ms, or undefined when dist/ has no CLI. */
function checkWallMs(dir: string): number | undefined {
  const bin = path.join(REPO_ROOT, 'dist', 'server', 'cli', 'idea-pdp.js');
  if (!existsSync(bin)) return undefined;
  const times: number[] = [];
  for (let run = 0; run < CHECK_RUNS + 1; run++) {
    const started = process.hrtime.bigint();
    const result = spawnSync(process.execPath, [bin, 'check', dir], { encoding: 'utf8' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.status !== 0) throw new Error(`idea-pdp check failed (${String(result.status)}): ${result.stdout}${result.stderr}`);
    // The first run warms the file cache.
    if (run > 0) times.push(ms);
  }
  return median(times);
}

export async function serversSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-servers-'));
  const dir = path.join(root, 'bench');
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  await writeFile(path.join(dir, '.ideai', 'mcp-servers.json'), `${JSON.stringify(serversDocument(), null, 2)}\n`);
  await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.json'), `${JSON.stringify(POLICY, null, 2)}\n`);
  const server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule });
  try {
    const pool = singleConnectionPool(server.origin);
    try {
      for (const requester of ['Idea', 'Server']) {
        const decision = await postDecide(pool, query(requester));
        if (!decision.allow) throw new Error(`${requester} is not allowed: ${decision.message}`);
      }
    } finally {
      await pool.close();
    }
    const targets = ['Idea', 'Server'].map((requester) => ({
      name: requester === 'Idea' ? 'IdeA tool' : 'declared tool',
      origin: server.origin,
      bodies: [query(requester)],
      pid: server.pid,
    }));
    const results = await interleavedLoad(ctx, targets);
    const rps = (name: string) => (results.get(name) ?? []).map((round) => round.requestsPerSec);
    const cpu = (name: string) => median((results.get(name) ?? []).map((round) => round.cpuUsPerRequest));
    const ratio = pairedRatio(rps('declared tool'), rps('IdeA tool'));
    const check = ctx.useDist ? checkWallMs(dir) : undefined;
    if (check === undefined) ctx.note('servers: idea-pdp check was not timed (it is timed from dist/, which this run does not use)');
    const section = 'servers (a catalog of 500 declared tools)';
    ctx.log(
      `  declared / IdeA tool: ${fmt(ratio)}× (CPU ${fmt(cpu('declared tool'), 'µs')} vs ${fmt(cpu('IdeA tool'), 'µs')} per request); check ${check === undefined ? 'not timed' : fmt(check, 'ms')}`,
    );
    return {
      rows: [
        { section, figure: `/decide of ${IDEA}`, value: fmt(median(rps('IdeA tool')), 'req/s'), target: '', pass: null },
        { section, figure: `/decide of ${DECLARED}`, value: fmt(median(rps('declared tool')), 'req/s'), target: '', pass: null },
        {
          section,
          figure: 'declared / IdeA tool (paired rounds)',
          value: `${fmt(ratio)}×`,
          target: `≥ ${RATIO_TARGET}×`,
          pass: ratio >= RATIO_TARGET,
        },
        {
          section,
          figure: `idea-pdp check of the project (dist/, wall, median of ${CHECK_RUNS})`,
          value: check === undefined ? 'not timed' : fmt(check, 'ms'),
          target: `≤ ${CHECK_TARGET_MS} ms`,
          pass: check === undefined ? null : check <= CHECK_TARGET_MS,
        },
      ],
      raw: {
        ratio,
        idea: rps('IdeA tool'),
        declared: rps('declared tool'),
        cpuIdea: cpu('IdeA tool'),
        cpuDeclared: cpu('declared tool'),
        checkMs: check,
      },
    };
  } finally {
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
}
