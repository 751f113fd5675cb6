/**
 * Optional (`--profile`): records a CPU profile of the service child (V8's sampling profiler, the
 * same `.cpuprofile` as `node --cpu-prof`, started over IPC after a warm-up so start-up does not
 * drown the load) and summarizes self time by function and by package. Percentages are of busy
 * time (idle samples left out). Not a measured figure: the profiler costs throughput.
 */
import { copyFile, mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { REPO_ROOT, demoQueryMix, makeDemoRoot, makeScaleRoot, scaleQueryMix } from '../lib/fixtures.js';
import { waitFor, type BenchContext } from '../lib/context.js';
import { runLoad } from '../lib/load.js';
import { startMain, startServer, type ServerMode } from '../lib/processes.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Which part of the run the samples cover. */
  label: string;
  file: string;
  totalMs: number;
  /** Requests answered while the samples were taken (per-request figures), when known. */
  requests?: number;
  topFunctions: { name: string; where: string; selfMs: number; percent: number }[];
  byPackage: { name: string; selfMs: number; percent: number }[];
}

/** Ids of every node under (and including) the nodes named `functionName`. */
function subtreeOf(profile: CpuProfile, functionName: string): Set<number> {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const found = new Set<number>();
  const stack = profile.nodes.filter((node) => node.callFrame.functionName === functionName).map((node) => node.id);
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (found.has(id)) continue;
    found.add(id);
    stack.push(...(byId.get(id)?.children ?? []));
  }
  return found;
}

function packageOf(url: string): string {
  if (url === '') return '(native / VM)';
  if (url.startsWith('node:')) return 'node core';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  const local = url.replace(/^file:\/\//, '');
  return local.startsWith(REPO_ROOT) ? path.relative(REPO_ROOT, local).split(path.sep).slice(0, 2).join('/') : local;
}

/**
 * Self time per function and per package of a `.cpuprofile`, over the samples taken between
 * `window.fromMs` and `window.toMs` after the profile started (default: all of them).
 */
export function summarizeProfile(
  profile: CpuProfile,
  file: string,
  label: string,
  window: { fromMs?: number; toMs?: number } = {},
  top = 20,
): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  const fromUs = (window.fromMs ?? 0) * 1000;
  const toUs = (window.toMs ?? Number.POSITIVE_INFINITY) * 1000;
  let elapsedUs = 0;
  profile.samples.forEach((id, index) => {
    const delta = profile.timeDeltas[index] ?? 0;
    elapsedUs += delta;
    if (elapsedUs >= fromUs && elapsedUs < toUs) selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const isIdle = (id: number): boolean => byId.get(id)?.callFrame.functionName === '(idle)';
  for (const id of [...selfUs.keys()]) if (isIdle(id)) selfUs.delete(id);
  // The profiler's own stop command (IPC-driven profiles) is not the service's work.
  for (const id of subtreeOf(profile, 'onProfileCommand')) selfUs.delete(id);
  const total = [...selfUs.values()].reduce((sum, us) => sum + us, 0);
  const functions = new Map<string, { name: string; where: string; us: number }>();
  const packages = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)?.callFrame;
    if (!frame) continue;
    const name = frame.functionName || '(anonymous)';
    const where = frame.url ? `${frame.url.replace(`file://${REPO_ROOT}/`, '')}:${frame.lineNumber + 1}` : '';
    const key = `${name}@${where}`;
    const entry = functions.get(key) ?? { name, where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
    const pkg = packageOf(frame.url);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  }
  const percent = (us: number): number => Math.round((1000 * us) / total) / 10;
  return {
    label,
    file,
    totalMs: total / 1000,
    topFunctions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((entry) => ({ name: entry.name, where: entry.where, selfMs: entry.us / 1000, percent: percent(entry.us) })),
    byPackage: [...packages.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, percent: percent(us) })),
  };
}

/** Profiles the service under the demo mix for `durationSec * 2` seconds, after a warm-up. */
export async function profileSection(ctx: BenchContext, outDir: string, mode: ServerMode = 'ours'): Promise<ProfileSummary[]> {
  const root = await makeDemoRoot();
  const server = await startServer(mode, { projectsRoot: root, appModule: ctx.appModule });
  const kept = path.join(outDir, `${mode === 'ours' ? 'service' : mode}.cpuprofile`);
  let requests = 0;
  try {
    const options = { origin: server.origin, bodies: demoQueryMix(), connections: ctx.settings.connections };
    await runLoad(ctx.generator, { ...options, durationSec: ctx.settings.warmupSec });
    await server.startProfile();
    requests = (await runLoad(ctx.generator, { ...options, durationSec: ctx.settings.durationSec * 2 })).requests;
    await server.stopProfile(kept);
  } finally {
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
  const summary = summarizeProfile(JSON.parse(await readFile(kept, 'utf8')) as CpuProfile, kept, `${mode} under load`);
  return [{ ...summary, requests }];
}

/**
 * `--profile=scale`: the real entry point with the scale tree under `node --cpu-prof`, from spawn
 * through ready and one load run; the profile shows both start-up and the per-request cost.
 */
export async function profileScale(ctx: BenchContext, outDir: string): Promise<ProfileSummary[]> {
  const scale = await makeScaleRoot(ctx.settings.scaleProjects);
  const profDir = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-prof-'));
  const service = await startMain(scale.root, ctx.useDist, profDir);
  let readyMs = 0;
  try {
    await waitFor(
      async () => {
        const response = await request(`${service.origin}/readyz`);
        await response.body.text();
        return response.statusCode === 200;
      },
      60_000,
      5,
    );
    readyMs = performance.now() - service.spawnedAt;
    ctx.log(`  ready after ${readyMs.toFixed(0)} ms (under the profiler)`);
    await runLoad(ctx.generator, {
      origin: service.origin,
      bodies: scaleQueryMix(scale.ids),
      connections: ctx.settings.connections,
      durationSec: ctx.settings.durationSec * 2,
    });
  } finally {
    await service.stop();
    await rm(scale.root, { recursive: true, force: true });
  }
  const [name] = (await readdir(profDir)).filter((file) => file.endsWith('.cpuprofile'));
  if (!name) throw new Error('the service wrote no CPU profile');
  const kept = path.join(outDir, 'scale.cpuprofile');
  await copyFile(path.join(profDir, name), kept);
  await rm(profDir, { recursive: true, force: true });
  const profile = JSON.parse(await readFile(kept, 'utf8')) as CpuProfile;
  // The profile starts a few ms after spawn(): splitting at readyMs is close enough to tell start-up from load.
  return [
    summarizeProfile(profile, kept, `scale: start-up (spawn → ready, ${readyMs.toFixed(0)} ms)`, { toMs: readyMs }),
    summarizeProfile(profile, kept, 'scale: after ready (load)', { fromMs: readyMs }),
  ];
}
