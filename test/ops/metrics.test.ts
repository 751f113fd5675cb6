import Fastify from 'fastify';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DECISION_BUCKETS,
  METRICS_CONTENT_TYPE,
  createMetrics,
  installMetrics,
  notFoundRecorder,
  metricsPlugin,
  type PdpMetrics,
} from '../../server/ops/metrics.js';
import { DECISION_REASONS } from '../../schemas/index.js';
import { buildApp } from '../../server/http/app.js';
import { installErrorHandling } from '../../server/http/error-handler.js';

/** The value of the sample `series` (name with its labels exactly as exported), or undefined. */
function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return undefined;
}

const apps: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

function newMetrics(): PdpMetrics {
  // Default process metrics are covered by one test; the others skip them to stay fast.
  return createMetrics({ defaultMetrics: false });
}

describe('createMetrics', () => {
  it('counts a decision under its outcome and reason, and only there', async () => {
    const metrics = newMetrics();
    metrics.recordDecision(false, 'not_in_allowlist', 0.000003);
    metrics.recordDecision(false, 'not_in_allowlist');
    metrics.recordDecision(true, 'allowed', 0.00002);
    const text = await metrics.render();
    expect(sample(text, 'pdp_decisions_total{allow="false",reason="not_in_allowlist"}')).toBe(2);
    expect(sample(text, 'pdp_decisions_total{allow="true",reason="allowed"}')).toBe(1);
    expect(sample(text, 'pdp_decisions_total{allow="false",reason="unknown_tool"}')).toBe(0);
    // Scraping twice does not count twice (deltas are flushed once).
    metrics.recordDecision(false, 'policy_invalid');
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
    const metrics = newMetrics();
    metrics.recordReload('demo', 'ok');
    metrics.recordReload('demo', 'ok');
    metrics.recordReload('broken', 'invalid');
    metrics.recordPolicyWrite('ok');
    metrics.recordPolicyWrite('revision_mismatch');
    metrics.setProjectCounts({ total: 3, invalid: 1 });
    let text = await metrics.render();
    expect(sample(text, 'pdp_policy_reloads_total{project="demo",outcome="ok"}')).toBe(2);
    expect(sample(text, 'pdp_policy_reloads_total{project="broken",outcome="invalid"}')).toBe(1);
    expect(sample(text, 'pdp_policy_writes_total{outcome="ok"}')).toBe(1);
    expect(sample(text, 'pdp_policy_writes_total{outcome="revision_mismatch"}')).toBe(1);
    expect(sample(text, 'pdp_projects')).toBe(3);
    expect(sample(text, 'pdp_projects_invalid')).toBe(1);

    let invalid = 2;
    metrics.setProjectCountsProvider(() => ({ total: 5, invalid }));
    metrics.forgetProject('broken');
    text = await metrics.render();
    expect(sample(text, 'pdp_projects')).toBe(5);
    expect(sample(text, 'pdp_projects_invalid')).toBe(2);
    expect(text).not.toContain('project="broken"');
    invalid = 0;
    expect(sample(await metrics.render(), 'pdp_projects_invalid')).toBe(0);

    metrics.setProjectCountsProvider(() => {
      throw new Error('store not ready');
    });
    expect(sample(await metrics.render(), 'pdp_projects')).toBe(5); // last known numbers
  });

  it('keeps each instance in its own registry', async () => {
    const first = newMetrics();
    const second = newMetrics();
    first.recordDecision(false, 'unknown_tool');
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
    metrics.recordDecision(false, 'unknown_project');
    const text = await metrics.render();
    expect(sample(text, 'pdp_decisions_total{allow="false",reason="unknown_project"}')).toBe(1);
    expect(sample(text, 'pdp_decision_duration_seconds_count')).toBe(0);
  });
});

describe('installMetrics', () => {
  it('serves GET /metrics in the Prometheus text format and records requests by route pattern', async () => {
    const metrics = newMetrics();
    const app = Fastify();
    apps.push(app);
    // Unmatched URLs are counted by the not-found handler (the app's own, told by notFoundRecorder).
    installErrorHandling(app, { onNotFound: notFoundRecorder(metrics) });
    installMetrics(app, metrics);
    app.get('/projects/:project', async () => ({ ok: true }));
    app.post('/boom', async () => {
      throw new Error('boom');
    });

    await app.inject({ method: 'GET', url: '/projects/demo' });
    await app.inject({ method: 'GET', url: '/projects/sandbox' });
    await app.inject({ method: 'POST', url: '/boom' });
    await app.inject({ method: 'GET', url: '/no/such/route?x=1' });

    const response = await app.inject({ method: 'GET', url: '/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(METRICS_CONTENT_TYPE);
    const text = response.body;
    expect(sample(text, 'pdp_http_requests_total{method="GET",route="/projects/:project",status="200"}')).toBe(2);
    expect(sample(text, 'pdp_http_requests_total{method="POST",route="/boom",status="500"}')).toBe(1);
    expect(sample(text, 'pdp_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(text).not.toContain('/projects/demo');
    expect(text).not.toContain('/no/such/route');
    expect(sample(text, 'pdp_http_request_duration_seconds_count{method="GET",route="/projects/:project"}')).toBe(2);
  });

  it('can leave HTTP metrics out and serve another path', async () => {
    const metrics = newMetrics();
    const app = Fastify();
    apps.push(app);
    installMetrics(app, metrics, { httpMetrics: false, path: '/internal/metrics' });
    app.get('/ping', async () => 'pong');
    await app.inject({ method: 'GET', url: '/ping' });
    const response = await app.inject({ method: 'GET', url: '/internal/metrics' });
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain('pdp_http_requests_total{');
  });

  it('works as a plugin whose hook covers routes outside it', async () => {
    const metrics = newMetrics();
    const app = Fastify();
    apps.push(app);
    await app.register(metricsPlugin, { metrics });
    app.get('/ping', async () => 'pong');
    await app.inject({ method: 'GET', url: '/ping' });
    const response = await app.inject({ method: 'GET', url: '/metrics' });
    expect(sample(response.body, 'pdp_http_requests_total{method="GET",route="/ping",status="200"}')).toBe(1);
  });
});

describe('metrics wired into the app', () => {
  it('counts a POST /decide denial and serves it on GET /metrics behind the decide token', async () => {
    const root = await mkdtemp(join(tmpdir(), 'pdp-metrics-'));
    await mkdir(join(root, 'demo'));
    const app = await buildApp({ projectsRoot: root, adminToken: 'admin-token-for-test', decideToken: 'decide-token-for-test' });
    apps.push({
      close: async () => {
        await app.close();
        await rm(root, { recursive: true, force: true });
      },
    });
    await app.ready();
    const auth = { authorization: 'Bearer decide-token-for-test' };
    const series = 'pdp_decisions_total{allow="false",reason="not_in_allowlist"}';

    const before = await app.inject({ method: 'GET', url: '/metrics', headers: auth });
    expect(before.statusCode).toBe(200);
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

    // /decide counts its own requests (no onResponse hook): its errors are counted by the error handler.
    expect((await app.inject({ method: 'POST', url: '/decide', payload: { project: 'demo' } })).statusCode).toBe(401);
    expect((await app.inject({ method: 'POST', url: '/decide', headers: auth, payload: { project: 'demo' } })).statusCode).toBe(400);
    expect((await app.inject({ method: 'GET', url: '/docs/json' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/nope', headers: auth })).statusCode).toBe(404);
    const errorsCounted = await app.inject({ method: 'GET', url: '/metrics', headers: auth });
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="POST",route="/decide",status="401"}')).toBe(1);
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="POST",route="/decide",status="400"}')).toBe(1);
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="GET",route="/docs/json",status="200"}')).toBe(1);
    expect(sample(errorsCounted.body, 'pdp_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
  });
});
