/**
 * A hostile preview (bench/README.md#targets): a 4 MiB document naming 16,000 unknown tools, sent as the body
 * while another connection keeps deciding. Its answer time, the decisions' p99 meanwhile, and
 * the in-process check of the same shape at 1 and 4 MiB (the cost grows linearly).
 */
import { rm } from 'node:fs/promises';
import { compilePolicyFile } from '../../server/domain/compile.js';
import { checkPolicy } from '../../server/domain/policy-check.js';
import { hostilePolicy } from '../../test/support/hostile-policy.js';
import { makeDemoRoot } from '../lib/fixtures.js';
import { postDecide, singleConnectionPool, type BenchContext, type SectionResult } from '../lib/context.js';
import { startServer } from '../lib/processes.js';
import { fmt, median, quantile } from '../lib/stats.js';

const MIB = 1024 * 1024;
const ROUNDS = 5;

function checkMs(names: number, bytes: number): number {
  const text = hostilePolicy(names, bytes);
  const samples: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    checkPolicy('p.json', text, compilePolicyFile(Buffer.from(text)));
    samples.push(performance.now() - started);
  }
  return median(samples);
}

export async function hostilePreviewSection(ctx: BenchContext): Promise<SectionResult> {
  const section = 'hostile preview (16,000 unknown names, 4 MiB)';
  const small = checkMs(4_000, MIB - 16 * 1024);
  const big = checkMs(16_000, 4 * MIB - 64 * 1024);
  const root = await makeDemoRoot();
  const server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule });
  const previewPool = singleConnectionPool(server.origin);
  const decidePool = singleConnectionPool(server.origin);
  const query = { project: 'demo', requester: 'QA', tool: 'idea_memory_read' };
  try {
    const body = hostilePolicy(16_000, 4 * MIB - 64 * 1024);
    const send = async (): Promise<number> => {
      const started = performance.now();
      const response = await previewPool.request({
        method: 'POST',
        path: '/projects/demo/mcp-tool-permissions/preview',
        headers: { 'content-type': 'application/json' },
        body,
      });
      await response.body.text();
      if (response.statusCode !== 200) throw new Error(`preview answered ${response.statusCode}`);
      return performance.now() - started;
    };
    // The first one starts the parse worker.
    await send();
    for (let i = 0; i < 200; i++) await postDecide(decidePool, query);
    const previews: number[] = [];
    const during: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      let done = false;
      const previewing = send().finally(() => (done = true));
      while (!done) {
        const started = performance.now();
        await postDecide(decidePool, query);
        during.push(performance.now() - started);
      }
      previews.push(await previewing);
    }
    const p99 = quantile(during, 0.99);
    const worst = quantile(previews, 1);
    ctx.log(
      `  hostile preview: worst ${fmt(worst, 'ms')}, /decide p99 meanwhile ${fmt(p99, 'ms')}; check 1 MiB ${fmt(small, 'ms')}, 4 MiB ${fmt(big, 'ms')}`,
    );
    return {
      rows: [
        { section, figure: `preview answered, worst of ${ROUNDS}`, value: fmt(worst, 'ms'), target: '≤ 1000 ms', pass: worst <= 1000 },
        {
          section,
          figure: `/decide p99 while previews run (${during.length} decisions)`,
          value: fmt(p99, 'ms'),
          target: '≤ 20 ms',
          pass: p99 <= 20,
        },
        { section, figure: 'check (in process), 4,000 names in 1 MiB, median', value: fmt(small, 'ms'), target: '', pass: null },
        {
          section,
          figure: 'check (in process), 16,000 names in 4 MiB, median',
          value: fmt(big, 'ms'),
          target: '≤ 1000 ms',
          pass: big <= 1000,
        },
        {
          section,
          figure: 'check 4 MiB / 1 MiB (linear: ~4×)',
          value: `${(big / small).toFixed(2)}×`,
          target: '≤ 6×',
          pass: big / small <= 6,
        },
      ],
      raw: { previews, decideP50: quantile(during, 0.5), decideP99: p99, decisions: during.length, checkSmall: small, checkBig: big },
    };
  } finally {
    await previewPool.close();
    await decidePool.close();
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
}
