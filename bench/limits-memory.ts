/**
 * What usage limits cost in memory (docs/design.md#usage-limits): 1,000 projects × 50 agents × 5
 * limited tools, every pair at its cap of 20 calls, counted through the real counts. Prints the heap
 * the counts hold and the bytes per counted call. `node --expose-gc --import tsx bench/limits-memory.ts`.
 */
import type { ToolLimit } from '../server/domain/limits.js';
import { UsageCounts } from '../server/limits/usage-counts.js';

const PROJECTS = 1_000;
const AGENTS = 50;
const TOOLS = ['idea_ask_agent', 'idea_launch_agent', 'idea_memory_write', 'idea_run_in_background', 'idea_ticket_create'];
const LIMIT: ToolLimit = { max: 20, per: '1h', windowMs: 3_600_000 };

function heap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
}

export function measure(projects = PROJECTS, agents = AGENTS): { calls: number; bytes: number; perCall: number; rings: number } {
  const before = heap();
  let now = 1;
  const counts = new UsageCounts({ clock: { monotonic: () => now, wall: () => now }, projects: { folderOf: () => 'folder' } });
  let calls = 0;
  for (let project = 0; project < projects; project++) {
    for (let agent = 0; agent < agents; agent++) {
      for (const tool of TOOLS) {
        for (let call = 0; call < LIMIT.max; call++) {
          now++;
          if (counts.retryAfter(`p${project}`, `Agent${agent}`, tool, LIMIT) !== undefined) throw new Error('refused under the cap');
          counts.count(`p${project}`, `Agent${agent}`, tool, LIMIT);
          calls++;
        }
        if (counts.retryAfter(`p${project}`, `Agent${agent}`, tool, LIMIT) === undefined) throw new Error('allowed past the cap');
      }
    }
  }
  const bytes = heap() - before;
  return { calls, bytes, perCall: bytes / calls, rings: counts.bytes };
}

if (import.meta.url === `file://${process.argv[1] ?? ''}`) {
  const started = performance.now();
  const { calls, bytes, perCall, rings } = measure();
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(
    `${PROJECTS} projects × ${AGENTS} agents × ${TOOLS.length} tools at a cap of ${LIMIT.max}: ${calls.toLocaleString('en')} counted calls, ` +
      `${(bytes / 1e6).toFixed(1)} MB held (${perCall.toFixed(1)} B a counted call; rings ${(rings / 1e6).toFixed(1)} MB), ${seconds.toFixed(1)} s\n`,
  );
}
