/**
 * Prometheus metrics of the service (`GET /metrics`, docs/api.md#health): decisions by outcome and
 * reason, decision latency, policy reloads and writes, projects served and invalid, dropped log
 * lines (HTTP requests: server/http/http-metrics.ts). Each {@link createMetrics} call has its own prom-client `Registry`, so several
 * apps in one test process never clash on metric names.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { DECISION_REASONS, type DecisionReason } from '../../schemas/api.js';
import { isToolName } from '../../schemas/catalog.js';
import { droppedLogLines, logWriteErrors } from './logger.js';
import { PlainHistogram } from './plain-histogram.js';
import type { Projects } from '../projects/projects.js';

/** Upper bounds (seconds) of the decision latency histogram: an in-memory decision takes microseconds. */
export const DECISION_BUCKETS = [
  0.000001, 0.0000025, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
];

/** What a reload of a project's policy file found. */
export type PolicyReloadOutcome = 'ok' | 'invalid';
const RELOAD_OUTCOMES: readonly PolicyReloadOutcome[] = ['ok', 'invalid'];
const REASON_INDEX = Object.fromEntries(DECISION_REASONS.map((reason, index) => [reason, index])) as Record<DecisionReason, number>;

/** Numbers exported by the `pdp_projects` and `pdp_projects_invalid` gauges. */
export interface ProjectCounts {
  readonly total: number;
  readonly invalid: number;
}

export interface CreateMetricsOptions {
  /** Also export the default Node process metrics, prefixed `pdp_` (default `true`). */
  readonly defaultMetrics?: boolean | undefined;
  /** Read at every scrape: the projects served with their status, and the folders that cannot be watched now. */
  readonly projects?: Pick<Projects, 'summaries' | 'unwatchedFolders'> | undefined;
}

/** The metrics of one app; every `record*` is cheap and never throws. */
export interface PdpMetrics {
  readonly registry: Registry;
  /** Counts one decision and observes how long it took to compute. */
  recordDecision(allow: boolean, reason: DecisionReason, seconds: number): void;
  /** Counts one call refused by a usage limit (docs/api.md#usage-limits); `tool` is a catalog name, so the label is bounded. */
  recordRateLimited(tool: string): void;
  recordReload(project: string, outcome: PolicyReloadOutcome): void;
  /** Drops the reload series of a project that disappeared (bounds the label's cardinality). */
  forgetProject(project: string): void;
  /** Told of every project change (server/projects/project-changes.ts): counts a reload, or forgets a removed project. */
  projectChanged(project: string, change: string): void;
  /** Counts one policy write through the API: `ok` or the error code answered. */
  recordPolicyWrite(outcome: string): void;
  /** The Prometheus text exposition of every metric. */
  render(): Promise<string>;
}

export function createMetrics(options: CreateMetricsOptions = {}): PdpMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'pdp_' });
  const registers = [registry];
  const countDecision = decisionsCounter(registers);
  const decisionSeconds = new PlainHistogram(
    'pdp_decision_duration_seconds',
    'Time to compute one decision in memory, in seconds.',
    DECISION_BUCKETS,
    registry,
  );
  // Labelled by tool: only catalog tools can be limited (25 names), never a name a caller makes up.
  const rateLimited = new Counter({
    name: 'pdp_rate_limited_total',
    help: 'Calls refused by a usage limit (reason rate_limited), by tool.',
    labelNames: ['tool'] as const,
    registers,
  });
  const reloads = new Counter({
    name: 'pdp_policy_reloads_total',
    help: 'Policy file (re)loads, by project and outcome (ok, invalid).',
    labelNames: ['project', 'outcome'] as const,
    registers,
  });
  const writes = new Counter({
    name: 'pdp_policy_writes_total',
    help: 'Policy writes through the API, by outcome (ok or the error code answered).',
    labelNames: ['outcome'] as const,
    registers,
  });
  projectGauges(registers, options);
  processCounter(
    registers,
    'pdp_log_lines_dropped_total',
    'Log lines dropped because stdout could not keep up (queue over 8 MiB).',
    droppedLogLines,
  );
  processCounter(
    registers,
    'pdp_log_write_errors_total',
    'Failed writes to stdout (the lines stay queued and are tried again).',
    logWriteErrors,
  );

  return {
    registry,
    recordDecision(allow, reason, seconds) {
      countDecision(allow, reason);
      decisionSeconds.observe(seconds);
    },
    recordRateLimited(tool) {
      if (isToolName(tool)) rateLimited.labels(tool).inc();
    },
    recordReload(project, outcome) {
      reloads.labels(project, outcome).inc();
    },
    forgetProject(project) {
      for (const outcome of RELOAD_OUTCOMES) reloads.remove(project, outcome);
    },
    projectChanged(project, change) {
      if (change === 'removed') this.forgetProject(project);
      else if (change === 'ok' || change === 'invalid') this.recordReload(project, change);
    },
    recordPolicyWrite(outcome) {
      writes.labels(outcome).inc();
    },
    render: () => registry.metrics(),
  };
}

/** `pdp_decisions_total`, and the function that counts one decision into it. */
function decisionsCounter(registers: Registry[]): (allow: boolean, reason: DecisionReason) => void {
  // Counted in plain numbers, handed to prom-client when scraped: prom-client's `labels().inc()` hashes
  // the labels on every call (bench/README.md#metrics-on-the-hot-path).
  const decided = new Float64Array(2 * DECISION_REASONS.length);
  const decisions = new Counter({
    name: 'pdp_decisions_total',
    help: 'Decisions answered, by outcome and reason.',
    labelNames: ['allow', 'reason'] as const,
    registers,
    collect() {
      decided.forEach((count, slot) => {
        if (count === 0) return;
        const allow = slot < DECISION_REASONS.length;
        this.labels(allow ? 'true' : 'false', DECISION_REASONS[slot % DECISION_REASONS.length] ?? '').inc(count);
        decided[slot] = 0;
      });
    },
  });
  // The series that can happen exist from the start at 0, so rate() works from the first scrape.
  decisions.labels('true', 'allowed').inc(0);
  for (const reason of DECISION_REASONS) if (reason !== 'allowed') decisions.labels('false', reason).inc(0);
  return (allow, reason) => {
    const slot = (allow ? 0 : DECISION_REASONS.length) + REASON_INDEX[reason];
    decided[slot] = (decided[slot] ?? 0) + 1;
  };
}

/** The gauges read from the registry at each scrape: projects served, invalid, and unwatched folders. */
function projectGauges(registers: Registry[], options: CreateMetricsOptions): void {
  let counts: ProjectCounts = { total: 0, invalid: 0 };
  const refreshCounts = (): void => {
    try {
      const summaries = options.projects?.summaries();
      if (summaries !== undefined)
        counts = { total: summaries.length, invalid: summaries.filter(({ status }) => status === 'invalid').length };
    } catch {
      // A failing provider must not break the scrape: the last known numbers are exported.
    }
  };
  new Gauge({
    name: 'pdp_projects',
    help: 'Projects served.',
    registers,
    collect() {
      refreshCounts();
      this.set(counts.total);
    },
  });
  new Gauge({
    name: 'pdp_projects_invalid',
    help: 'Projects whose policy file is invalid (every decision denied with policy_invalid).',
    registers,
    collect() {
      refreshCounts();
      this.set(counts.invalid);
    },
  });
  // Every code seen so far is exported (0 once recovered), so a dashboard sees the series go back down.
  const unwatchedCodes = new Set<string>(['ENOSPC']);
  new Gauge({
    name: 'pdp_unwatched_folders',
    help: 'Folders that cannot be watched now, by errno code (ENOSPC: no inotify watch left); their changes wait for the 2 s rescan.',
    labelNames: ['code'],
    registers,
    collect() {
      let unwatched: ReadonlyMap<string, number> = new Map<string, number>();
      try {
        unwatched = options.projects?.unwatchedFolders() ?? unwatched;
      } catch {
        // A failing provider must not break the scrape.
      }
      for (const code of unwatched.keys()) unwatchedCodes.add(code);
      for (const code of unwatchedCodes) this.labels(code).set(unwatched.get(code) ?? 0);
    },
  });
}

/** A counter that exports the growth of a process-wide number read at each scrape. */
function processCounter(registers: Registry[], name: string, help: string, read: () => number): void {
  let exported = 0;
  new Counter({
    name,
    help,
    registers,
    collect() {
      const now = read();
      if (now > exported) this.inc(now - exported);
      exported = now;
    },
  });
}
