/**
 * A revocation heard through each linked layout of the policy file the service accepts
 * (docs/design.md#links; a hard-linked file is refused, so it has no row): a symlink to a file in
 * `.ideai` (the file edited in place, or the link swapped), a symlinked `.ideai` (its file edited in
 * place, or the folder replaced). Each layout gets its own service; grants and revocations
 * alternate, 150-300 ms apart, and the clock runs from just before the edit to the first `/decide`
 * answer that reflects it. The default 2 s rescan would show as figures near a second: what is heard
 * at once is heard by the watcher.
 */
import { mkdir, mkdtemp, open, rename, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DecideQuery } from '../../schemas/index.js';
import { POLICY_FILE } from '../lib/fixtures.js';
import { postDecide, singleConnectionPool, waitFor, type BenchContext, type SectionResult } from '../lib/context.js';
import { startServer } from '../lib/processes.js';
import { fmt, quantile } from '../lib/stats.js';
import type { Row } from '../lib/report.js';

const QUERY: DecideQuery = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };
const TRIAL_TIMEOUT_MS = 2_000;
const TARGET_MS = 100;
const FILE_NAME = path.basename(POLICY_FILE);

const policy = (granted: boolean): string =>
  `${JSON.stringify({ version: 1, projectDefault: { allowedTools: granted ? [QUERY.tool] : [] } }, null, 2)}\n`;

/** Rewrites `file` in place (same inode): truncate, then write, as an editor without atomic saves does. */
async function editInPlace(file: string, text: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.truncate(0);
    await handle.write(text, 0);
  } finally {
    await handle.close();
  }
}

interface Layout {
  readonly name: string;
  /** Makes `<project>/...` with the grant in force (`outside`: a folder beside the projects root). */
  setUp(project: string, outside: string): Promise<void>;
  /** Changes the policy to `granted` the layout's way. */
  edit(project: string, outside: string, granted: boolean, trial: number): Promise<void>;
}

const LAYOUTS: readonly Layout[] = [
  {
    name: 'symlink to a file in .ideai, edited in place',
    setUp: async (project) => {
      await mkdir(path.join(project, '.ideai'));
      await writeFile(path.join(project, '.ideai', 'v1.json'), policy(true));
      await symlink('v1.json', path.join(project, '.ideai', FILE_NAME));
    },
    edit: (project, _outside, granted) => editInPlace(path.join(project, '.ideai', 'v1.json'), policy(granted)),
  },
  {
    name: 'symlink in .ideai swapped (ln -s && mv -T)',
    setUp: async (project) => {
      await mkdir(path.join(project, '.ideai'));
      await writeFile(path.join(project, '.ideai', 'grant.json'), policy(true));
      await writeFile(path.join(project, '.ideai', 'revoke.json'), policy(false));
      await symlink('grant.json', path.join(project, '.ideai', FILE_NAME));
    },
    edit: async (project, _outside, granted) => {
      const next = path.join(project, '.ideai', 'next');
      await symlink(granted ? 'grant.json' : 'revoke.json', next);
      await rename(next, path.join(project, '.ideai', FILE_NAME));
    },
  },
  {
    name: 'symlinked .ideai, edited in place',
    setUp: async (project) => {
      await mkdir(path.join(project, 'ideai-config'));
      await writeFile(path.join(project, 'ideai-config', FILE_NAME), policy(true));
      await symlink('ideai-config', path.join(project, '.ideai'));
    },
    edit: (project, _outside, granted) => editInPlace(path.join(project, 'ideai-config', FILE_NAME), policy(granted)),
  },
  {
    name: 'symlinked .ideai, its folder replaced',
    setUp: async (project) => {
      await mkdir(path.join(project, 'ideai-config'));
      await writeFile(path.join(project, 'ideai-config', FILE_NAME), policy(true));
      await symlink('ideai-config', path.join(project, '.ideai'));
    },
    edit: async (project, _outside, granted, trial) => {
      const next = path.join(project, `next-${trial}`);
      await mkdir(next);
      await writeFile(path.join(next, FILE_NAME), policy(granted));
      await rename(path.join(project, 'ideai-config'), path.join(project, `old-${trial}`));
      await rename(next, path.join(project, 'ideai-config'));
    },
  },
];

interface Series {
  latencies: number[];
  /** Edits not reflected within TRIAL_TIMEOUT_MS. */
  misses: number;
}

async function measure(ctx: BenchContext, layout: Layout, trials: number): Promise<Series> {
  const top = await mkdtemp(path.join(os.tmpdir(), 'pdp-bench-links-'));
  const root = path.join(top, 'projects');
  const project = path.join(root, 'demo');
  const outside = path.join(top, 'outside');
  await mkdir(project, { recursive: true });
  await mkdir(outside);
  await layout.setUp(project, outside);
  const server = await startServer('ours', { projectsRoot: root, appModule: ctx.appModule });
  const pool = singleConnectionPool(server.origin);
  const series: Series = { latencies: [], misses: 0 };
  try {
    await waitFor(async () => (await postDecide(pool, QUERY)).allow, 10_000);
    for (let trial = 0; trial < trials; trial += 1) {
      const granted = trial % 2 === 1;
      // 150-300 ms between edits: an editor's saves, not a flood.
      await new Promise((resolve) => setTimeout(resolve, 150 + Math.random() * 150));
      const start = performance.now();
      await layout.edit(project, outside, granted, trial);
      let seen = false;
      while (performance.now() - start < TRIAL_TIMEOUT_MS) {
        if ((await postDecide(pool, QUERY)).allow === granted) {
          seen = true;
          break;
        }
      }
      series.latencies.push(performance.now() - start);
      if (!seen) {
        series.misses += 1;
        await waitFor(async () => (await postDecide(pool, QUERY)).allow === granted, 10_000).catch(() => undefined);
      }
    }
    return series;
  } finally {
    await pool.close();
    await server.stop();
    await rm(top, { recursive: true, force: true });
  }
}

export async function linksSection(ctx: BenchContext): Promise<SectionResult> {
  const trials = Math.max(10, Math.round(ctx.settings.revocationTrials / 5));
  const rows: Row[] = [];
  const raw: Record<string, Series> = {};
  for (const layout of LAYOUTS) {
    const series = await measure(ctx, layout, trials);
    raw[layout.name] = series;
    const p50 = quantile(series.latencies, 0.5);
    const max = quantile(series.latencies, 1);
    ctx.log(`  ${layout.name}: p50 ${fmt(p50, 'ms')} max ${fmt(max, 'ms')}; ${series.misses} of ${trials} over ${TRIAL_TIMEOUT_MS} ms`);
    rows.push({
      section: 'links',
      figure: `${layout.name}: edit → decision p50 / max (${trials} edits)`,
      value: `${fmt(p50, 'ms')} / ${fmt(max, 'ms')}`,
      target: `max ≤ ${TARGET_MS} ms`,
      pass: max <= TARGET_MS && series.misses === 0,
    });
  }
  return { rows, raw };
}
