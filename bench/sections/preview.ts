/**
 * The preview route (docs/api.md#policy-as-code-idea-pdp-and-previews) over a full recent-decisions ring: 1,000 decisions, every one
 * a distinct call (250 requesters, the whole catalog, an issueRef each), so the replay decides
 * 2,000 calls with no repeat to reuse. Sequential previews on one connection; the target is the
 * whole round trip, replay included.
 */
import { rm } from 'node:fs/promises';
import { TOOL_CATALOG, type DecideQuery } from '../../schemas/index.js';
import { makeDemoRoot } from '../lib/fixtures.js';
import { postDecide, singleConnectionPool, type BenchContext, type SectionResult } from '../lib/context.js';
import { startServer } from '../lib/processes.js';
import { fmt, quantile } from '../lib/stats.js';

const RING_DECISIONS = 1000;
const PREVIEWS = 200;
const TARGET_MS = 50;

/** Every tool for everyone but the memory tools, and the memory writer gone: most kept calls change. */
function proposedDocument(): unknown {
  return {
    version: 1,
    projectDefault: { allowedTools: TOOL_CATALOG.filter((tool) => !tool.name.startsWith('idea_memory')).map((tool) => tool.name) },
    agents: [{ agentId: 'Agent7', policy: { allowedTools: ['idea_memory_read'], askTools: ['idea_memory_write'] } }],
  };
}

export async function previewSection(ctx: BenchContext): Promise<SectionResult> {
  const root = await makeDemoRoot();
  const server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule });
  const pool = singleConnectionPool(server.origin);
  try {
    for (let i = 0; i < RING_DECISIONS; i++) {
      const tool = TOOL_CATALOG[i % TOOL_CATALOG.length]?.name ?? 'idea_ticket_read';
      const query: DecideQuery = { project: 'demo', requester: `Agent${i % 250}`, tool, arguments: { issueRef: `#${i}` } };
      await postDecide(pool, query);
    }
    const body = JSON.stringify({ document: proposedDocument() });
    const samples: number[] = [];
    let replayed = 0;
    let changed = 0;
    for (let i = 0; i < PREVIEWS + 20; i++) {
      const started = performance.now();
      const response = await pool.request({
        method: 'POST',
        path: '/projects/demo/mcp-tool-permissions/preview',
        headers: { 'content-type': 'application/json' },
        body,
      });
      const text = await response.body.text();
      const elapsed = performance.now() - started;
      if (response.statusCode !== 200) throw new Error(`preview answered ${response.statusCode}: ${text}`);
      const answer = JSON.parse(text) as { replay: { decisions: number; changed: { calls: number }[] } };
      replayed = answer.replay.decisions;
      changed = answer.replay.changed.reduce((sum, group) => sum + group.calls, 0);
      // The first 20 warm the route up.
      if (i >= 20) samples.push(elapsed);
    }
    const p50 = quantile(samples, 0.5);
    const p99 = quantile(samples, 0.99);
    ctx.log(`  preview of ${replayed} decisions (${changed} changed): p50 ${fmt(p50, 'ms')} p99 ${fmt(p99, 'ms')}`);
    const section = 'preview (replay of the ring)';
    return {
      rows: [
        { section, figure: 'decisions replayed', value: String(replayed), target: `${RING_DECISIONS}`, pass: replayed === RING_DECISIONS },
        { section, figure: `preview p50 (${samples.length} previews)`, value: fmt(p50, 'ms'), target: '', pass: null },
        { section, figure: 'preview p99', value: fmt(p99, 'ms'), target: `≤ ${TARGET_MS} ms`, pass: p99 <= TARGET_MS },
      ],
      raw: { replayed, changed, p50, p90: quantile(samples, 0.9), p99, max: quantile(samples, 1) },
    };
  } finally {
    await pool.close();
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
}
