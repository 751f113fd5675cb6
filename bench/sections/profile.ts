/**
 * Optional (`--profile`): runs the service child under `node --cpu-prof` through one load run and
 * summarizes the profile's self time by function and by package. Not part of the measured figures:
 * the profiler itself costs throughput.
 */
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, demoQueryMix, makeDemoRoot } from '../lib/fixtures.js';
import type { BenchContext } from '../lib/context.js';
import { runLoad } from '../lib/load.js';
import { startServer } from '../lib/processes.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  file: string;
  totalMs: number;
  topFunctions: { name: string; where: string; selfMs: number; percent: number }[];
  byPackage: { name: string; selfMs: number; percent: number }[];
}

function packageOf(url: string): string {
  if (url === '') return '(native / VM)';
  if (url.startsWith('node:')) return 'node core';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1]!;
  const local = url.replace(/^file:\/\//, '');
  return local.startsWith(REPO_ROOT) ? path.relative(REPO_ROOT, local).split(path.sep).slice(0, 2).join('/') : local;
}

/** Self time per function and per package of a `.cpuprofile`. */
export function summarizeProfile(profile: CpuProfile, file: string, top = 20): ProfileSummary {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, index) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0)));
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

/** Profiles the service under the demo mix for `durationSec * 2` seconds. */
export async function profileSection(ctx: BenchContext, outDir: string): Promise<ProfileSummary> {
  const root = await makeDemoRoot();
  const profDir = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-prof-'));
  const server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule, cpuProfDir: profDir });
  try {
    const options = { origin: server.origin, bodies: demoQueryMix(), connections: ctx.settings.connections };
    await runLoad(ctx.generator, { ...options, durationSec: ctx.settings.warmupSec });
    await runLoad(ctx.generator, { ...options, durationSec: ctx.settings.durationSec * 2 });
  } finally {
    await server.stop();
  }
  const [name] = (await readdir(profDir)).filter((file) => file.endsWith('.cpuprofile'));
  if (!name) throw new Error('the service child wrote no CPU profile');
  const text = await readFile(path.join(profDir, name), 'utf8');
  const kept = path.join(outDir, 'service.cpuprofile');
  await writeFile(kept, text);
  await rm(profDir, { recursive: true, force: true });
  await rm(root, { recursive: true, force: true });
  return summarizeProfile(JSON.parse(text) as CpuProfile, kept);
}
