/**
 * `npm run bench`: measures the targets (docs/api.md#targets) as ratios against baselines run in the same
 * process tree and interleaved, prints a table, and writes bench/results/latest.{json,md}.
 * Flags (all optional): --quick, --duration=S, --rounds=N, --warmup=S, --connections=N,
 * --calls=N, --trials=N, --projects=N, --generator=wrk|autocannon, --sections=a,b (throughput,
 * latency, burst, revocation, links, events, approval, scale, preview, socket, conditions, limits, proxy, hostile-preview, servers), --tsx (service from sources, no build), --no-build (reuse dist/),
 * --profile[=ours,bare,node-http,cedar,cedar-text,scale] (one or more), --out=DIR,
 * --no-write, --app=PATH (measure another build's app module, e.g. an older checkout's dist).
 * See bench/README.md.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseFlags } from './lib/cli.js';
import type { BenchContext, SectionResult, Settings } from './lib/context.js';
import { SERVER_MODES, type ServerMode } from './lib/processes.js';
import { REPO_ROOT } from './lib/fixtures.js';
import { chooseGenerator, describeGenerator, type Generator } from './lib/load.js';
import { describeMachine, renderTable, writeReport, type ProfileDigest, type Report, type Row } from './lib/report.js';
import { approvalSection } from './sections/approval.js';
import { burstSection } from './sections/burst.js';
import { conditionsSection } from './sections/conditions.js';
import { limitsSection } from './sections/limits.js';
import { eventsSection } from './sections/events.js';
import { hostilePreviewSection } from './sections/hostile-preview.js';
import { latencySection } from './sections/latency.js';
import { linksSection } from './sections/links.js';
import { previewSection } from './sections/preview.js';
import { profileScale, profileSection } from './sections/profile.js';
import { revocationSection } from './sections/revocation.js';
import { scaleSection } from './sections/scale.js';
import { proxySection } from './sections/proxy.js';
import { socketSection } from './sections/socket.js';
import { serversSection } from './sections/servers.js';
import { throughputSection } from './sections/throughput.js';

const SECTIONS = {
  throughput: throughputSection,
  latency: latencySection,
  burst: burstSection,
  revocation: revocationSection,
  links: linksSection,
  events: eventsSection,
  approval: approvalSection,
  scale: scaleSection,
  preview: previewSection,
  socket: socketSection,
  conditions: conditionsSection,
  limits: limitsSection,
  proxy: proxySection,
  'hostile-preview': hostilePreviewSection,
  servers: serversSection,
} as const satisfies Record<string, (ctx: BenchContext) => Promise<SectionResult>>;
type SectionName = keyof typeof SECTIONS;

function settingsFrom(flags: Map<string, string>): Settings {
  const quick = flags.has('quick');
  const num = (name: string, fallback: number): number => {
    const value = flags.get(name);
    if (value === undefined) return fallback;
    const parsed = Number(value);
    if (!Number.isFinite(parsed) || parsed <= 0) throw new Error(`--${name} needs a positive number`);
    return parsed;
  };
  return {
    durationSec: num('duration', quick ? 2 : 3),
    rounds: num('rounds', quick ? 2 : 7),
    warmupSec: num('warmup', quick ? 1 : 2),
    rewarmSec: num('rewarm', quick ? 0 : 1),
    connections: num('connections', 32),
    latencyCalls: num('calls', quick ? 4_000 : 20_000),
    revocationTrials: num('trials', quick ? 20 : 100),
    scaleProjects: num('projects', quick ? 200 : 1_000),
  };
}

/** Builds dist/ unless told not to; answers which app module the children load. */
function chooseServiceBuild(flags: Map<string, string>, log: (line: string) => void, note: (line: string) => void) {
  const source = path.join(REPO_ROOT, 'server', 'http', 'app.ts');
  const dist = path.join(REPO_ROOT, 'dist', 'server', 'http', 'app.js');
  const other = flags.get('app');
  if (other !== undefined) {
    const appModule = path.resolve(other);
    if (!existsSync(appModule)) throw new Error(`--app: ${appModule} does not exist`);
    return { appModule, useDist: true, label: `${appModule} (--app; the entry point sections run this checkout's dist/)` };
  }
  if (flags.has('no-build') && !flags.has('tsx') && existsSync(dist)) {
    return { appModule: dist, useDist: true, label: 'compiled dist/ (tsc, existing build), node 20' };
  }
  if (!flags.has('tsx')) {
    log('building dist/ (npm run build)...');
    const build = spawnSync('npm', ['run', 'build'], { cwd: REPO_ROOT, encoding: 'utf8' });
    if (build.status === 0 && existsSync(dist)) {
      return { appModule: dist, useDist: true, label: 'compiled dist/ (tsc), node 20' };
    }
    note(`npm run build failed (exit ${String(build.status)}); the service ran from sources through tsx.`);
  }
  return { appModule: source, useDist: false, label: 'sources through tsx (node --import tsx)' };
}

async function main(): Promise<void> {
  const flags = parseFlags(process.argv.slice(2));
  const settings = settingsFrom(flags);
  const log = (line: string): void => void process.stdout.write(`${line}\n`);
  const notes: string[] = [];
  const note = (line: string): void => {
    notes.push(line);
    log(`  note: ${line}`);
  };
  const sectionsFlag = flags.get('sections');
  const requested = sectionsFlag === 'none' ? [] : (sectionsFlag?.split(',') ?? Object.keys(SECTIONS));
  const unknown = requested.filter((name) => !(name in SECTIONS));
  if (unknown.length > 0) throw new Error(`unknown sections: ${unknown.join(', ')}`);

  const loadAtStart = os.loadavg()[0] ?? Number.NaN;
  if (loadAtStart > os.cpus().length) {
    note(
      `the machine was busy when the run started (1-min load average ${loadAtStart.toFixed(1)} on ${os.cpus().length} cores): figures are noisier than usual; the ratios are interleaved to compensate.`,
    );
  }
  const generator = chooseGenerator(flags.get('generator') as Generator | undefined, log);
  const build = chooseServiceBuild(flags, log, note);
  const outDir = path.resolve(REPO_ROOT, flags.get('out') ?? path.join('bench', 'results'));
  const ctx: BenchContext = { settings, generator, appModule: build.appModule, useDist: build.useDist, log, note };

  const rows: Row[] = [];
  const raw: Record<string, unknown> = {};
  const profiles: ProfileDigest[] = [];
  for (const name of requested as SectionName[]) {
    log(`\n== ${name}`);
    const started = performance.now();
    const result = await SECTIONS[name](ctx);
    rows.push(...result.rows);
    raw[name] = result.raw;
    log(`  (${((performance.now() - started) / 1000).toFixed(1)} s)`);
  }
  if (flags.has('profile')) {
    log('\n== profile (service under --cpu-prof, not a measured figure)');
    await mkdir(outDir, { recursive: true });
    const target = flags.get('profile');
    const modes = target === 'true' || target === undefined ? ['ours'] : target.split(',');
    const summaries = [];
    for (const mode of modes) {
      if (mode !== 'scale' && !(SERVER_MODES as readonly string[]).includes(mode)) throw new Error(`--profile=${mode}: not a server`);
      summaries.push(...(mode === 'scale' ? await profileScale(ctx, outDir) : await profileSection(ctx, outDir, mode as ServerMode)));
    }
    profiles.push(...summaries);
    for (const summary of summaries) {
      const perRequest = (ms: number): string =>
        summary.requests ? `  ${((ms * 1000) / summary.requests).toFixed(2).padStart(6)} µs/req` : '';
      log(
        `  ${summary.label}: ${summary.totalMs.toFixed(0)} ms busy${summary.requests ? ` for ${summary.requests} requests` : ''}, profile in ${path.relative(REPO_ROOT, summary.file)}`,
      );
      for (const entry of summary.byPackage.slice(0, 10))
        log(`  ${entry.percent.toFixed(1).padStart(5)}%${perRequest(entry.selfMs)}  ${entry.name}`);
      log('  top self time:');
      for (const entry of summary.topFunctions.slice(0, 15))
        log(`  ${entry.percent.toFixed(1).padStart(5)}%${perRequest(entry.selfMs)}  ${entry.name}  ${entry.where}`);
    }
  }

  const report: Report = {
    date: new Date().toISOString(),
    machine: describeMachine(loadAtStart),
    generator: describeGenerator(generator),
    serviceBuild: build.label,
    settings: { ...settings, sections: requested.join('+') },
    rows,
    notes,
    ...(profiles.length > 0 ? { profiles } : {}),
    raw,
  };
  log(`\n${renderTable(rows)}`);
  const failed = rows.filter((row) => row.pass === false).length;
  const passed = rows.filter((row) => row.pass === true).length;
  log(
    `\ntargets: ${passed} met, ${failed} not met · ${report.machine.cpuModel} ×${report.machine.cores} · node ${report.machine.node} · ${report.generator}`,
  );
  if (!flags.has('no-write')) {
    await writeReport(outDir, report);
    log(
      `written: ${path.relative(REPO_ROOT, path.join(outDir, 'latest.json'))}, ${path.relative(REPO_ROOT, path.join(outDir, 'latest.md'))}`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
