/**
 * A preview (or a check) of a document naming 16,000 unknown tools in 4 MiB (bench/README.md#targets): answered
 * in about a second with its problems bounded and the rest counted, and decisions still answered
 * meanwhile. Locating each name from the start of the text used to take minutes for it.
 */
import { describe, expect, it } from 'vitest';
import type { PreviewResponse } from '../../schemas/index.js';
import { compilePolicyFile } from '../../server/domain/compile.js';
import { MAX_LISTED_PROBLEMS, checkPolicy } from '../../server/domain/policy-check.js';
import { makeTestProjects } from '../support/app.js';
import { policyDoc } from '../support/files.js';
import { hostilePolicy } from '../support/hostile-policy.js';
import { startService } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';

const NAMES = 16_000;
const BYTES = 4 * 1024 * 1024 - 64 * 1024;
const ADMIN = 'hostile-admin-token-0123456789';
const DECIDE = 'hostile-decide-token-0123456789';

describe('a document naming 16,000 unknown tools in 4 MiB', () => {
  it('is checked in a few seconds at most, its first problems listed and the others counted', () => {
    const text = hostilePolicy(NAMES, BYTES);
    expect(text.length).toBeGreaterThan(3.9 * 1024 * 1024);
    const started = performance.now();
    const { problems, more } = checkPolicy('p.json', text, compilePolicyFile(Buffer.from(text)));
    const elapsed = performance.now() - started;
    // 0.4-0.9 s at load 15 on 2 cores; one walk of the text per name took minutes (86 s for half as many).
    expect(elapsed).toBeLessThan(15_000);
    expect(problems).toHaveLength(MAX_LISTED_PROBLEMS);
    expect(problems[0]).toMatchObject({ line: 5, code: 'unknown_tool', severity: 'warning' });
    expect(problems.at(-1)?.line).toBeGreaterThan(problems[0]?.line ?? 0);
    expect(more).toEqual({ errors: 0, warnings: NAMES - MAX_LISTED_PROBLEMS });
  });

  it('as a preview body, answers while /decide keeps answering on time', async (t) => {
    const { root } = await makeTestProjects(t, { demo: { policy: policyDoc(['idea_memory_read']) } });
    const service = await startService({
      PDP_PROJECTS_ROOT: root,
      PDP_STATE_DIR: await tempFolder('pdp-hostile-state-'),
      PDP_ADMIN_TOKEN: ADMIN,
      PDP_DECIDE_TOKEN: DECIDE,
      PDP_LOG_LEVEL: 'warn',
    });
    try {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${DECIDE}` };
      const decideOnce = async (): Promise<number> => {
        const started = performance.now();
        const response = await fetch(`${service.baseUrl}/decide`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ project: 'demo', requester: 'QA', tool: 'idea_memory_read' }),
        });
        expect(response.status).toBe(200);
        await response.arrayBuffer();
        return performance.now() - started;
      };
      for (let i = 0; i < 50; i++) await decideOnce();
      // A first big body starts the parse worker (seconds from the TypeScript sources, ~50 ms built).
      const warm = await fetch(`${service.baseUrl}/projects/demo/mcp-tool-permissions/preview`, {
        method: 'POST',
        headers,
        body: hostilePolicy(1000, 256 * 1024),
      });
      expect(warm.status).toBe(200);
      await warm.arrayBuffer();
      const body = hostilePolicy(NAMES, BYTES);
      const state = { done: false };
      const previewing = (async () => {
        const started = performance.now();
        // The raw document as the body: what `idea-pdp preview --server` sends.
        const response = await fetch(`${service.baseUrl}/projects/demo/mcp-tool-permissions/preview`, {
          method: 'POST',
          headers,
          body,
          signal: AbortSignal.timeout(60_000),
        });
        const answer = (await response.json()) as PreviewResponse;
        state.done = true;
        return { status: response.status, answer, elapsed: performance.now() - started };
      })();
      const latencies: number[] = [];
      while (!state.done) latencies.push(await decideOnce());
      const { status, answer, elapsed } = await previewing;
      expect(status).toBe(200);
      expect(answer.valid).toBe(true);
      expect(answer.errors).toHaveLength(MAX_LISTED_PROBLEMS + 1);
      expect(answer.errors.at(-1)).toMatchObject({ code: 'too_many_problems', severity: 'warning' });
      expect(answer.errors.at(-1)?.message).toContain(`${NAMES - MAX_LISTED_PROBLEMS} more problems`);
      // About 1 s here (the body crosses to the worker and back); it froze every decision for minutes.
      expect(elapsed).toBeLessThan(15_000);
      latencies.sort((a, b) => a - b);
      const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))] ?? 0;
      void t.annotate(`preview ${elapsed.toFixed(0)} ms, ${latencies.length} decisions meanwhile, p99 ${p99.toFixed(1)} ms`);
      expect(latencies.length).toBeGreaterThan(10);
      // The 20 ms of bench/README.md#targets is measured by the bench on a quiet machine; here the bound only has to tell
      // a busy machine (20-450 ms seen at load 15 on 2 cores, the worker taking a core) from a decision
      // stuck behind the whole preview.
      expect(p99).toBeLessThan(1_000);
      expect(latencies.at(-1) ?? 0).toBeLessThan(Math.max(1_000, elapsed / 2));
    } finally {
      await service.stop();
    }
  }, 120_000);
});
