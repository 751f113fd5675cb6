/**
 * The service's parts, built once per app apart from its HTTP side (as fastify/demo keeps its
 * services apart from its routes): the project registry, everything that answers from it, and who
 * hears that a project changed (server/projects/project-changes.ts), subscribed here and only here
 * in the order they hear it. The app (http/service-plugin.ts) starts them once it is ready and closes them
 * with itself.
 */
import { DiscoveredTools } from './servers/discovered-tools.js';
import type { Logger } from 'pino';
import { ApprovalsService } from './approvals/approvals-service.js';
import type { ServiceClock } from './clock.js';
import { createAuditFile, type AuditFile } from './decisions/audit-file.js';
import { DecisionService } from './decisions/decision-service.js';
import { PreviewService } from './decisions/preview-service.js';
import { RecentDecisionsFile } from './decisions/recent-decisions-file.js';
import { LiveEvents } from './events/live-events.js';
import { UsageCounts } from './limits/usage-counts.js';
import { UsageCountsFile } from './limits/usage-counts-file.js';
import { createMetrics, type PdpMetrics } from './ops/metrics.js';
import { EphemeralPolicies } from './permissions/ephemeral.js';
import { PermissionsService } from './permissions/permissions-service.js';
import { ProjectRegistry } from './projects/registry.js';

export interface ServicesOptions {
  /** PDP_PROJECTS_ROOT: each direct sub-folder is a project named after it. */
  projectsRoot?: string | undefined;
  /** PDP_PROJECTS: explicit project id → absolute root folder. */
  projects?: Readonly<Record<string, string>> | undefined;
  /** PDP_APPROVER_PROJECTS: the only projects whose requests the approver token may answer (default: every project). */
  approverProjects?: readonly string[] | undefined;
  /** Safety-net rescan period of the files in ms (default 2000, 0 disables). */
  rescanMs?: number | undefined;
  /** PDP_AUDIT_FILE: append every decision about a known project as NDJSON to this file (rotated). */
  auditFile?: string | undefined;
  /** PDP_MAX_CONNECTIONS: connections open at once; a new one beyond is closed at once (default 1024; the app's server applies it). */
  maxConnections?: number | undefined;
  /** PDP_MAX_EVENT_STREAMS: `/events` streams open at once (default a quarter of maxConnections); below maxConnections. */
  maxEventStreams?: number | undefined;
  /** PDP_MAX_EVENT_STREAMS_PER_CLIENT: `/events` streams open at once from one client address (default 32). */
  maxEventStreamsPerClient?: number | undefined;
  /**
   * PDP_STATE_DIR: temporary grants and `once` approvals are kept in `approvals.json` there and
   * survive a restart; without it (tests) they live in memory only.
   */
  stateDir?: string | undefined;
  /** PDP_APPROVAL_TTL_SECONDS: how long an approval request stays pending (default 300). */
  approvalTtlSeconds?: number | undefined;
  /** The time of approvals and grants (default: the system's monotonic and wall clocks); tests move it. */
  clock?: ServiceClock | undefined;
}

export const DEFAULT_MAX_CONNECTIONS = 1024;

/** What the routes answer from, and the lifecycle the app runs them through. */
export interface Services {
  readonly registry: ProjectRegistry;
  readonly metrics: PdpMetrics;
  readonly permissions: PermissionsService;
  readonly events: LiveEvents;
  readonly approvals: ApprovalsService;
  readonly decisions: DecisionService;
  readonly preview: PreviewService;
  /** What other MCP servers listed that their project's catalog does not declare (never a permission). */
  readonly discovered: DiscoveredTools;
  /** Once the app is ready: the saved recent decisions, then every project, then what is kept of projects gone meanwhile goes. */
  start(): Promise<void>;
  /** Before the server stops accepting: open streams and long-polls end cleanly instead of holding the close. */
  closeStreams(): void;
  /** Once the server is closed: saves the recent decisions and stops the watcher, the sweeps and the audit file. */
  close(): Promise<void>;
}

export function buildServices(options: ServicesOptions, logger: Logger): Services {
  const { projectsRoot, projects, rescanMs, clock, stateDir, approvalTtlSeconds, approverProjects } = options;
  // Built in dependency order: each service is created after everything it calls.
  const registry = new ProjectRegistry({ projectsRoot, projects, rescanMs, logger });
  const metrics = createMetrics({ projects: registry });
  const ephemeral = new EphemeralPolicies({ projects: registry, clock });
  const usage = new UsageCounts({ clock, projects: registry });
  const permissions = new PermissionsService({ registry, ephemeral, logger, metrics, usage });
  const events = new LiveEvents({ ...eventStreamLimits(options), projects: registry, logger });
  const approvals = new ApprovalsService({
    projects: registry,
    always: permissions,
    events,
    logger,
    clock,
    stateDirectory: stateDir,
    approvalTtlSeconds,
    approverProjects,
  });
  const audit = auditFileOf(options.auditFile, logger);
  const decisions = new DecisionService({
    projects: registry,
    ephemeral: ephemeral.lookup,
    approvals: approvals.port,
    limits: usage,
    logger,
    metrics,
    audit,
  });
  const discovered = new DiscoveredTools();
  const preview = new PreviewService({
    projects: registry,
    discovered,
    recent: decisions,
    ephemeral: ephemeral.lookup,
    grants: approvals.port,
  });
  // Without a state folder (tests) the usage counts and the recent decisions live in memory only.
  const usageFile = stateDir === undefined ? undefined : new UsageCountsFile({ stateDir, counts: usage, logger, clock });
  const recentFile = stateDir === undefined ? undefined : new RecentDecisionsFile({ stateDir, recent: decisions.recent, logger });

  // The one place that orders a project change's subscribers (project-changes.ts): the `/events`
  // stream last, so that it never announces a change before what follows from it is done.
  for (const listener of [metrics, decisions, recentFile, approvals, usage, ephemeral, discovered, events]) {
    if (listener !== undefined) registry.changes.subscribe(listener);
  }
  for (const warning of approvals.warnings) logger.warn({ stateDir }, warning);

  const parts = { registry, metrics, permissions, events, approvals, decisions, preview, discovered };
  const kept = { ...parts, ephemeral, usage, usageFile, recentFile, audit };
  return {
    ...parts,
    start: () => startServices(kept),
    closeStreams: () => {
      events.close();
      approvals.close();
    },
    close: () => closeServices(kept),
  };
}

/** The `/events` stream limits: a quarter of the connections at most by default, so streams never starve `/decide` of a socket. */
function eventStreamLimits(options: ServicesOptions): { maxStreams: number; maxStreamsPerClient: number | undefined } {
  const maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
  const maxEventStreams = Math.min(options.maxEventStreams ?? Math.floor(maxConnections / 4), maxConnections - 1);
  return { maxStreams: Math.max(0, maxEventStreams), maxStreamsPerClient: options.maxEventStreamsPerClient };
}

/** The audit file when one is configured; its I/O errors are logged, never thrown into a decision. */
function auditFileOf(file: string | undefined, logger: Logger): AuditFile | undefined {
  if (file === undefined || file === '') return undefined;
  return createAuditFile(file, {
    onError: (error) => {
      logger.warn({ err: error }, 'audit file error');
    },
  });
}

/** What start and close act on: the services, and the files and stores behind them. */
interface ServiceParts {
  readonly registry: ProjectRegistry;
  readonly approvals: ApprovalsService;
  readonly decisions: DecisionService;
  readonly ephemeral: EphemeralPolicies;
  readonly usage: UsageCounts;
  readonly usageFile: UsageCountsFile | undefined;
  readonly recentFile: RecentDecisionsFile | undefined;
  readonly audit: AuditFile | undefined;
}

/** The saved recent decisions and usage counts, then every project, then what is kept of projects gone meanwhile goes. */
async function startServices(parts: ServiceParts): Promise<void> {
  const { registry, approvals, usage, decisions, recentFile } = parts;
  await recentFile?.start();
  // Before the projects load: each one loaded then keeps only the counts made for its folder.
  await parts.usageFile?.start();
  await registry.start();
  // A project that went away while the service was stopped leaves nothing behind; one in a
  // root that cannot be listed now has not gone, so this waits for the root's first listing.
  const forgetGone = async (): Promise<void> => {
    approvals.retainProjects((project) => registry.has(project));
    usage.retainProjects((project) => registry.has(project));
    for (const project of decisions.recent.projects()) {
      if (!registry.has(project)) {
        decisions.forgetProject(project);
        await recentFile?.forget(project);
      }
    }
  };
  if (registry.rootListed) await forgetGone();
  else registry.afterRootListed(() => void forgetGone());
}

/** Once the server is closed: saves the recent decisions and counts, stops the watcher, the sweeps and the audit file. */
async function closeServices(parts: ServiceParts): Promise<void> {
  await parts.recentFile?.close();
  await parts.usageFile?.close();
  parts.registry.close();
  parts.ephemeral.close();
  await parts.audit?.close();
}
