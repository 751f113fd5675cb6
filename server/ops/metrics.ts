/**
 * Prometheus metrics of the PDP (SPEC §5 `GET /metrics`): decisions by outcome and reason,
 * decision latency, policy reloads, invalid projects, policy writes and HTTP requests.
 *
 * Every {@link createMetrics} call owns its own prom-client `Registry`, so several apps built in
 * one test process never clash on metric names.
 *
 * Why the hot path does not call prom-client directly: `Counter.inc` and `Histogram.observe`
 * hash their label set on every call (about 150 ns each, measured), while a whole in-memory
 * decision costs a few microseconds and `/decide/batch` makes up to 100 of them per request.
 * Decisions and HTTP requests are therefore counted in plain numbers and typed arrays, and
 * turned into Prometheus series only when `/metrics` is scraped (`collect()` for counters,
 * {@link FastHistogram#get} for histograms).
 */
import {
  Counter,
  Gauge,
  Registry,
  collectDefaultMetrics,
  type Metric,
  type MetricObjectWithValues,
  type MetricType,
  type MetricValueWithName,
} from 'prom-client';
import { Type } from '@sinclair/typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyPluginAsync,
  FastifyRequest,
  FastifyTypeProvider,
  onResponseHookHandler,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import { DECISION_REASONS, type DecisionReason } from '../../schemas/api.js';
import type { ErrorCode } from '../../schemas/errors.js';
import { droppedLogLines, logWriteErrors } from './logger.js';

/** Upper bounds (seconds) of the decision latency histogram: an in-memory decision is µs. */
export const DECISION_BUCKETS = [
  0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
] as const;
/** Upper bounds (seconds) of the HTTP request latency histogram. */
export const HTTP_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

/** Route label of requests that matched no route (bounds the label's cardinality). */
export const UNMATCHED_ROUTE = 'unmatched';
/** Content type of the Prometheus text exposition format served by `GET /metrics`. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Outcome of reloading one project's policy file (watcher or start-up). */
export type ReloadOutcome = 'ok' | 'invalid' | 'error';
/** Outcome of a policy write through the API: `ok` or the error code that was answered. */
export type PolicyWriteOutcome = 'ok' | ErrorCode;
/** Numbers exported by the `pdp_projects` and `pdp_projects_invalid` gauges. */
export interface ProjectCounts {
  total: number;
  invalid: number;
}

/** The metrics of one app. All `record*` functions are cheap and never throw on valid input. */
export interface PdpMetrics {
  /** The registry holding every metric of this instance (default process metrics included). */
  readonly registry: Registry;
  /**
   * Counts one decision and, when `seconds` is given, observes its latency. O(1), no allocation.
   * For a batch, count each decision and pass `seconds` for each (or only once per batch).
   */
  recordDecision(allow: boolean, reason: DecisionReason, seconds?: number): void;
  /** Counts one reload of a project's policy file. */
  recordReload(project: string, outcome: ReloadOutcome): void;
  /** Drops the reload series of a project that disappeared (bounds cardinality). */
  forgetProject(project: string): void;
  /** Counts one policy write through the API. */
  recordPolicyWrite(outcome: PolicyWriteOutcome): void;
  /** Sets the project gauges (push style). */
  setProjectCounts(counts: ProjectCounts): void;
  /** Reads the project gauges at every scrape (pull style); `undefined` removes the provider. */
  setProjectCountsProvider(provider: (() => ProjectCounts) | undefined): void;
  /**
   * Counts one HTTP request; `route` is the route pattern (e.g. `/projects/:project`), never the
   * raw URL. Without `seconds` (routes that count themselves, unmatched URLs) no duration is observed.
   */
  recordHttpRequest(method: string, route: string, statusCode: number, seconds?: number): void;
  /** {@link recordHttpRequest} without a duration, with the series looked up once: for a hot route's handler. */
  httpRequestCounter(method: string, route: string, statusCode: number): () => void;
  /** The Prometheus text exposition of every metric. */
  render(): Promise<string>;
}

/** Options of {@link createMetrics}. */
export interface CreateMetricsOptions {
  /** Also export the default Node process metrics, prefixed `pdp_` (default `true`). */
  defaultMetrics?: boolean;
}

/** Counts and buckets of one label set of a {@link FastHistogram}. */
interface HistogramCell {
  readonly labels: Readonly<Record<string, string>>;
  /** Non-cumulative counts; the last slot is `+Inf`. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * A histogram that prom-client's `Registry` can export, observed with one loop over the bounds
 * and three additions (prom-client's own `Histogram` hashes the labels on every observation).
 */
class FastHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly bounds: Float64Array;
  private readonly cells: HistogramCell[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    bounds: readonly number[],
  ) {
    this.bounds = Float64Array.from(bounds);
  }

  /** A new cell for one label set; the caller keeps it and passes it to {@link observe}. */
  cell(labels: Readonly<Record<string, string>>): HistogramCell {
    const created: HistogramCell = { labels, buckets: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
    this.cells.push(created);
    return created;
  }

  observe(cell: HistogramCell, seconds: number): void {
    // A NaN or negative duration is a caller bug; do not let it poison the sum.
    if (!(seconds >= 0)) return;
    const bounds = this.bounds;
    let slot = 0;
    while (slot < bounds.length && seconds > (bounds[slot] ?? Infinity)) slot++;
    cell.buckets[slot] = (cell.buckets[slot] ?? 0) + 1;
    cell.sum += seconds;
    cell.count++;
  }

  /** Same shape as prom-client's `Histogram#get`, which the registry formats. */
  async get(): Promise<MetricObjectWithValues<MetricValueWithName<string>>> {
    const values: MetricValueWithName<string>[] = [];
    for (const cell of this.cells) {
      let cumulative = 0;
      this.bounds.forEach((bound, slot) => {
        cumulative += cell.buckets[slot] ?? 0;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...cell.labels, le: bound }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...cell.labels, le: '+Inf' }, value: cell.count });
      values.push({ metricName: `${this.name}_sum`, labels: cell.labels, value: cell.sum });
      values.push({ metricName: `${this.name}_count`, labels: cell.labels, value: cell.count });
    }
    // prom-client declares `type` as a numeric enum while its runtime (and the text format) use
    // the string "histogram": the cast bridges that typing mistake.
    const type = 'histogram' as unknown as MetricType;
    return { name: this.name, help: this.help, type, aggregator: 'sum', collect: () => undefined, values };
  }

  /** Called by `Registry#resetMetrics`. */
  reset(): void {
    for (const cell of this.cells) {
      cell.buckets.fill(0);
      cell.sum = 0;
      cell.count = 0;
    }
  }
}

/** One (method, route, status) series of the HTTP request counter. */
interface HttpCell {
  readonly labels: { method: string; route: string; status: string };
  count: number;
  flushed: number;
  readonly latency: HistogramCell;
}

/** Creates the metrics of one app, in a registry of its own. */
export function createMetrics(options: CreateMetricsOptions = {}): PdpMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'pdp_' });

  // Decisions: slot = (allow ? 0 : 1) * reasons + reasonIndex. A reason outside DECISION_REASONS
  // (only possible through a cast) is counted as "other" rather than lost.
  const reasons: readonly string[] = [...DECISION_REASONS, 'other'];
  const reasonIndex = new Map<string, number>(DECISION_REASONS.map((reason, index) => [reason, index]));
  const otherIndex = reasons.length - 1;
  const decisionCounts = new Float64Array(2 * reasons.length);
  const decisionFlushed = new Float64Array(2 * reasons.length);
  const decisionLatency = new FastHistogram(
    'pdp_decision_duration_seconds',
    'Time to compute one decision in memory, in seconds.',
    DECISION_BUCKETS,
  );
  const decisionLatencyCell = decisionLatency.cell({});
  registry.registerMetric(decisionLatency as unknown as Metric);

  const decisions = new Counter({
    name: 'pdp_decisions_total',
    help: 'Decisions answered, by outcome and reason.',
    labelNames: ['allow', 'reason'] as const,
    registers: [registry],
    collect: () => flushDecisions(),
  });
  const decisionChildren = Array.from({ length: 2 * reasons.length }, (_, slot) =>
    decisions.labels(slot < reasons.length ? 'true' : 'false', reasons[slot % reasons.length] ?? 'other'),
  );
  // The series that can happen exist from the start at 0, so rate() works from the first scrape.
  decisionChildren[0]?.inc(0); // allow="true", reason="allowed"
  for (let index = 1; index < DECISION_REASONS.length; index++) decisionChildren[reasons.length + index]?.inc(0);
  const flushDecisions = (): void => {
    for (let slot = 0; slot < decisionCounts.length; slot++) {
      const delta = (decisionCounts[slot] ?? 0) - (decisionFlushed[slot] ?? 0);
      if (delta > 0) {
        decisionChildren[slot]?.inc(delta);
        decisionFlushed[slot] = decisionCounts[slot] ?? 0;
      }
    }
  };

  const reloads = new Counter({
    name: 'pdp_policy_reloads_total',
    help: 'Policy file (re)loads, by project and outcome (ok, invalid, error).',
    labelNames: ['project', 'outcome'] as const,
    registers: [registry],
  });
  const writes = new Counter({
    name: 'pdp_policy_writes_total',
    help: 'Policy writes through the API, by outcome (ok or the error code answered).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });

  let projectCounts: ProjectCounts = { total: 0, invalid: 0 };
  let projectCountsProvider: (() => ProjectCounts) | undefined;
  const refreshProjectCounts = (): void => {
    if (projectCountsProvider === undefined) return;
    try {
      projectCounts = projectCountsProvider();
    } catch {
      // A failing provider must not break the scrape; the last known numbers are exported.
    }
  };
  new Gauge({
    name: 'pdp_projects',
    help: 'Projects served.',
    registers: [registry],
    collect() {
      refreshProjectCounts();
      this.set(projectCounts.total);
    },
  });
  new Gauge({
    name: 'pdp_projects_invalid',
    help: 'Projects whose policy file is invalid (every decision denied with policy_invalid).',
    registers: [registry],
    collect() {
      refreshProjectCounts();
      this.set(projectCounts.invalid);
    },
  });

  const logCounter = (name: string, help: string, read: () => number): void => {
    let exported = 0;
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const now = read();
        if (now > exported) this.inc(now - exported);
        exported = now;
      },
    });
  };
  logCounter('pdp_log_lines_dropped_total', 'Log lines dropped because stdout could not keep up (queue over 8 MiB).', droppedLogLines);
  logCounter('pdp_log_write_errors_total', 'Failed writes to stdout (the lines stay queued and are tried again).', logWriteErrors);

  const httpLatency = new FastHistogram(
    'pdp_http_request_duration_seconds',
    'HTTP request duration in seconds, by method and route pattern.',
    HTTP_BUCKETS,
  );
  registry.registerMetric(httpLatency as unknown as Metric);
  // route -> method -> status -> cell; route and method -> latency cell. Nested maps avoid
  // building a key string per request.
  const httpCells = new Map<string, Map<string, Map<number, HttpCell>>>();
  const httpLatencyCells = new Map<string, Map<string, HistogramCell>>();
  const allHttpCells: HttpCell[] = [];
  new Counter({
    name: 'pdp_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
    collect() {
      for (const cell of allHttpCells) {
        const delta = cell.count - cell.flushed;
        if (delta > 0) {
          this.inc(cell.labels, delta);
          cell.flushed = cell.count;
        }
      }
    },
  });

  const httpCell = (method: string, route: string, statusCode: number): HttpCell => {
    let byMethod = httpCells.get(route);
    if (byMethod === undefined) httpCells.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let cell = byStatus.get(statusCode);
    if (cell === undefined) {
      let latencyByMethod = httpLatencyCells.get(route);
      if (latencyByMethod === undefined) httpLatencyCells.set(route, (latencyByMethod = new Map()));
      let latency = latencyByMethod.get(method);
      if (latency === undefined) latencyByMethod.set(method, (latency = httpLatency.cell({ method, route })));
      cell = { labels: { method, route, status: String(statusCode) }, count: 0, flushed: 0, latency };
      byStatus.set(statusCode, cell);
      allHttpCells.push(cell);
    }
    return cell;
  };

  return {
    registry,
    recordDecision(allow, reason, seconds) {
      const slot = (allow ? 0 : reasons.length) + (reasonIndex.get(reason) ?? otherIndex);
      decisionCounts[slot] = (decisionCounts[slot] ?? 0) + 1;
      if (seconds !== undefined) decisionLatency.observe(decisionLatencyCell, seconds);
    },
    recordReload(project, outcome) {
      reloads.labels(project, outcome).inc();
    },
    forgetProject(project) {
      for (const outcome of ['ok', 'invalid', 'error'] as const) reloads.remove(project, outcome);
    },
    recordPolicyWrite(outcome) {
      writes.labels(outcome).inc();
    },
    setProjectCounts(counts) {
      projectCounts = { total: counts.total, invalid: counts.invalid };
    },
    setProjectCountsProvider(provider) {
      projectCountsProvider = provider;
    },
    recordHttpRequest(method, route, statusCode, seconds) {
      const cell = httpCell(method, route, statusCode);
      cell.count++;
      if (seconds !== undefined) httpLatency.observe(cell.latency, seconds);
    },
    httpRequestCounter(method, route, statusCode) {
      const cell = httpCell(method, route, statusCode);
      return () => {
        cell.count++;
      };
    },
    render: () => registry.metrics(),
  };
}

/** Options of {@link installMetrics} and {@link metricsPlugin}. */
export interface InstallMetricsOptions {
  /** Path of the exposition route (default `/metrics`). */
  path?: string;
  /** Record `pdp_http_requests_*` from an `onResponse` hook (default `true`). */
  httpMetrics?: boolean;
}

/** Any Fastify instance on the default Node server, whatever its type provider. */
type AnyFastify<Provider extends FastifyTypeProvider> = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  Provider
>;

/** Route option of the routes that count their own HTTP requests (the hot ones, see {@link installHttpMetrics}). */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** `'handler'`: the route's handler and the error handler count it; no `onResponse` hook. */
    httpMetrics?: 'handler';
  }
}

/**
 * Adds an `onResponse` hook recording `pdp_http_requests_*` to every route registered after this
 * call, with the route label fixed at registration. Per route rather than app-wide because any
 * `onResponse` hook on a route makes Fastify attach and remove response listeners on every request,
 * and the app-wide hook also had to build `request.routeOptions` per call: the routes declaring
 * `config.httpMetrics: 'handler'` (`/decide`) get no hook and count themselves (without a duration:
 * their time is `pdp_decision_duration_seconds`). Unmatched URLs are counted by the not-found
 * handler ({@link notFoundRecorder}).
 */
export function installHttpMetrics<Provider extends FastifyTypeProvider>(typedApp: AnyFastify<Provider>, metrics: PdpMetrics): void {
  const app = typedApp as unknown as FastifyInstance;
  app.addHook('onRoute', (route) => {
    if (route.config?.httpMetrics === 'handler') return;
    const label = route.url;
    const hook: onResponseHookHandler = (request, reply, done) => {
      metrics.recordHttpRequest(request.method, label, reply.statusCode, reply.elapsedTime / 1000);
      done();
    };
    const existing = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
    route.onResponse = [...existing, hook];
  });
}

/** What the not-found handler calls to count an unmatched request. */
export const notFoundRecorder =
  (metrics: PdpMetrics) =>
  (request: FastifyRequest): void =>
    metrics.recordHttpRequest(request.method, UNMATCHED_ROUTE, 404);

/**
 * {@link installHttpMetrics} (unless `httpMetrics: false`) and the `GET /metrics` route, on `app`
 * itself (not an encapsulated child), so app-wide hooks such as the Host check apply to `/metrics`
 * too. Call it before the other routes are registered so the hooks cover them.
 */
export function installMetrics<Provider extends FastifyTypeProvider>(
  typedApp: AnyFastify<Provider>,
  metrics: PdpMetrics,
  options: InstallMetricsOptions = {},
): void {
  if (options.httpMetrics !== false) installHttpMetrics(typedApp, metrics);
  addMetricsRoute(typedApp, metrics, options.path);
}

/** The `GET /metrics` route alone (Prometheus text format). */
export function addMetricsRoute<Provider extends FastifyTypeProvider>(
  typedApp: AnyFastify<Provider>,
  metrics: PdpMetrics,
  path?: string,
): void {
  // The route uses no typed schema, so the app's type provider is irrelevant here.
  const app = typedApp as unknown as FastifyInstance;
  app.get(
    path ?? '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics',
        description: 'Decisions by outcome and reason, decision latency, reloads, invalid projects, policy writes, HTTP requests.',
        tags: ['health'],
        response: { 200: { description: 'Prometheus text format 0.0.4.', content: { 'text/plain': { schema: Type.String() } } } },
      },
    },
    async (_request, reply) => {
      const body = await metrics.render();
      return reply.header('content-type', METRICS_CONTENT_TYPE).send(body);
    },
  );
}

/**
 * {@link installMetrics} as a Fastify plugin: `app.register(metricsPlugin, { metrics })`.
 * Marked `skip-override` (what `fastify-plugin` does) so the hook and route land on the parent
 * instance rather than in an encapsulated context.
 */
export const metricsPlugin: FastifyPluginAsync<InstallMetricsOptions & { metrics: PdpMetrics }> = Object.assign(
  async function pdpMetrics(app: FastifyInstance, options: InstallMetricsOptions & { metrics: PdpMetrics }) {
    installMetrics(app, options.metrics, options);
  },
  { [Symbol.for('skip-override')]: true, [Symbol.for('fastify.display-name')]: 'pdp-metrics' },
);
