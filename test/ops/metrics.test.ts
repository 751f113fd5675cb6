import { describe, expect, it } from 'vitest';
import { DECISION_BUCKETS, createMetrics, type PdpMetrics } from '../../server/ops/metrics.js';
import { DECISION_REASONS } from '../../schemas/index.js';
import { DECIDE_TOKEN, buildTestApp } from '../support/app.js';

/** The value of the sample `series` (name with its labels exactly as exported), or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

function newMetrics(): PdpMetrics {
  // Default process metrics are covered by one test; the others skip them to stay fast.
  return createMetrics({ defaultMetrics: false });
}

describe('createMetrics', () => {
  it('counts a decision under its outcome and reason, and only there', async () => {
    const metrics = newMetrics();
    metrics.recordDecision(false, 'not_in_allowlist', 0.000003);
    metrics.recordDecision(false, 'not_in_allowlist', 0.000003);
    metrics.recordDecision(true, 'allowed', 0.00002);
    const text = await metrics.render();
    expect(sample(text, 'pdp_decisions_total{allow="false",reason="not_in_allowlist"}')).toBe(2);
    expect(sample(text, 'pdp_decisions_total{allow="true",reason="allowed"}')).toBe(1);
    expect(sample(text, 'pdp_decisions_total{allow="false",reason="unknown_tool"}')).toBe(0);
    // Scraping twice does not count twice (deltas are flushed once).
    metrics.recordDecision(false, 'policy_invalid', 0.000001);
    const again = await metrics.render();
    expect(sample(again, 'pdp_decisions_total{allow="false",reason="not_in_allowlist"}')).toBe(2);
    expect(sample(again, 'pdp_decisions_total{allow="false",reason="policy_invalid"}')).toBe(1);
  });

  it('exports every possible denial reason at zero from the start', async () => {
    const text = await newMetrics().render();
    for (const reason of DECISION_REASONS.filter((reason) => reason !== 'allowed')) {
      expect(sample(text, `pdp_decisions_total{allow="false",reason="${reason}"}`), reason).toBe(0);
    }
    expect(sample(text, 'pdp_decisions_total{allow="true",reason="allowed"}')).toBe(0);
  });

  it('observes decision latency in a cumulative histogram with µs buckets', async () => {
    const metrics = newMetrics();
    metrics.recordDecision(true, 'allowed', 0.000004); // ≤ 5 µs
    metrics.recordDecision(true, 'allowed', 0.0002); // ≤ 250 µs
    metrics.recordDecision(true, 'allowed', 3); // beyond every bound
    metrics.recordDecision(true, 'allowed', Number.NaN); // ignored, must not poison the sum
    const text = await metrics.render();
    expect(text).toContain('# TYPE pdp_decision_duration_seconds histogram');
    expect(sample(text, 'pdp_decision_duration_seconds_bucket{le="0.0000025"}')).toBe(0);
    expect(sample(text, 'pdp_decision_duration_seconds_bucket{le="0.000005"}')).toBe(1);
    expect(sample(text, 'pdp_decision_duration_seconds_bucket{le="0.00025"}')).toBe(2);
    expect(sample(text, `pdp_decision_duration_seconds_bucket{le="${DECISION_BUCKETS.at(-1)}"}`)).toBe(2);
    expect(sample(text, 'pdp_decision_duration_seconds_bucket{le="+Inf"}')).toBe(3);
    expect(sample(text, 'pdp_decision_duration_seconds_count')).toBe(3);
    expect(sample(text, 'pdp_decision_duration_seconds_sum')).toBeCloseTo(3.000204, 9);
  });

  it('exports reloads, writes and project gauges', async () => {
    let invalid = 2;
    let failing = false;
    const metrics = createMetrics({
      defaultMetrics: false,
      projects: {
        summaries: () => {
          if (failing) throw new Error('store not ready');
          return Array.from({ length: 5 }, (_, index) => ({
            project: `p${String(index)}`,
            revision: 'r',
            status: index < invalid ? ('invalid' as const) : ('ok' as const),
          }));
        },
        unwatchedFolders: () => new Map<string, number>(),
      },
    });
    metrics.recordReload('demo', 'ok');
    metrics.recordReload('demo', 'ok');
    metrics.recordReload('broken', 'invalid');
    metrics.recordPolicyWrite('ok');
    metrics.recordPolicyWrite('revision_mismatch');
    let text = await metrics.render();
    expect(sample(text, 'pdp_policy_reloads_total{project="demo",outcome="ok"}')).toBe(2);
    expect(sample(text, 'pdp_policy_reloads_total{project="broken",outcome="invalid"}')).toBe(1);
    expect(sample(text, 'pdp_policy_writes_total{outcome="ok"}')).toBe(1);
    expect(sample(text, 'pdp_policy_writes_total{outcome="revision_mismatch"}')).toBe(1);
    expect(sample(text, 'pdp_projects')).toBe(5);
    expect(sample(text, 'pdp_projects_invalid')).toBe(2);

    metrics.forgetProject('broken');
    invalid = 0;
    text = await metrics.render();
    expect(text).not.toContain('project="broken"');
    expect(sample(text, 'pdp_projects_invalid')).toBe(0);

    failing = true;
    expect(sample(await metrics.render(), 'pdp_projects')).toBe(5); // last known numbers
  });

  it('keeps each instance in its own registry', async () => {
    const first = newMetrics();
    const second = newMetrics();
    first.recordDecision(false, 'unknown_tool', 0.000001);
    expect(first.registry).not.toBe(second.registry);
    expect(sample(await first.render(), 'pdp_decisions_total{allow="false",reason="unknown_tool"}')).toBe(1);
    expect(sample(await second.render(), 'pdp_decisions_total{allow="false",reason="unknown_tool"}')).toBe(0);
  });

  it('includes default process metrics with the pdp_ prefix, in several instances at once', async () => {
    const [first, second] = [createMetrics(), createMetrics()];
    for (const metrics of [first, second]) {
      const text = await metrics.render();
      expect(text).toMatch(/^pdp_process_cpu_seconds_total \d/m);
      expect(text).toMatch(/^pdp_nodejs_heap_size_used_bytes \d/m);
    }
  });

  it('resets through the registry without counting old decisions again', async () => {
    const metrics = newMetrics();
    metrics.recordDecision(false, 'unknown_project', 0.00001);
    await metrics.render();
    metrics.registry.resetMetrics();
    metrics.recordDecision(false, 'unknown_project', 0.00002);
    const text = await metrics.render();
    expect(sample(text, 'pdp_decisions_total{allow="false",reason="unknown_project"}')).toBe(1);
    expect(sample(text, 'pdp_decision_duration_seconds_count')).toBe(1);
  });
});

describe('metrics wired into the app', () => {
  it('counts a POST /decide denial and serves it on GET /metrics behind the decide token', async (t) => {
    const { app } = await buildTestApp(t, { demo: {} }, { decideToken: DECIDE_TOKEN });
    const auth = { authorization: `Bearer ${DECIDE_TOKEN}` };
    const series = 'pdp_decisions_total{allow="false",reason="not_in_allowlist"}';

    const before = await app.inject({ method: 'GET', url: '/metrics', headers: auth });
    expect(before.statusCode).toBe(200);
    expect(before.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(sample(before.body, series)).toBe(0);
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);

    const decided = await app.inject({
      method: 'POST',
      url: '/decide',
      headers: auth,
      payload: { project: 'demo', requester: 'DevFrontend', tool: 'idea_memory_write' },
    });
    expect(decided.json()).toMatchObject({ allow: false, reason: 'not_in_allowlist' });

    const after = await app.inject({ method: 'GET', url: '/metrics', headers: auth });
    expect(sample(after.body, series)).toBe(1);
    expect(sample(after.body, 'pdp_decision_duration_seconds_count')).toBe(1);
    expect(sample(after.body, 'pdp_projects')).toBe(1);
    expect(sample(after.body, 'pdp_http_requests_total{method="POST",route="/decide",status="200"}')).toBe(1);

    // Every answer is counted once under its route pattern: refusals, schema errors, other routes, unmatched URLs.
    expect((await app.inject({ method: 'POST', url: '/decide', payload: { project: 'demo' } })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/decide', headers: auth, payload: { project: 'demo' } })).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/docs/json' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/nope', headers: auth })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/projects/demo/mcp-tool-permissions', headers: auth })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/projects/gone/mcp-tool-permissions', headers: auth })).statusCode).toBe(404);
    const errorsCounted = await app.inject({ method: 'GET', url: '/metrics', headers: auth });
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="POST",route="/decide",status="401"}')).toBe(1);
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="POST",route="/decide",status="400"}')).toBe(1);
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="GET",route="/docs/json",status="200"}')).toBe(1);
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    const permissions = '{method="GET",route="/projects/:project/mcp-tool-permissions"';
    expect(sample(errorsCounted.body, `pdp_http_requests_total${permissions},status="200"}`)).toBe(1);
    expect(sample(errorsCounted.body, `pdp_http_requests_total${permissions},status="404"}`)).toBe(1);
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="POST",route="/decide",status="200"}')).toBe(1);
    expect(errorsCounted.body).not.toContain('/projects/gone');
    // Scraping again counts nothing twice (the counts are handed to prom-client once).
    const again = await app.inject({ method: 'GET', url: '/metrics', headers: auth });
    expect(sample(again.body, 'pdp_http_requests_total{method="POST",route="/decide",status="200"}')).toBe(1);
    expect(sample(again.body, series)).toBe(1);
    expect(sample(again.body, 'pdp_http_requests_total{method="GET",route="/metrics",status="200"}')).toBe(3);
  });
});
