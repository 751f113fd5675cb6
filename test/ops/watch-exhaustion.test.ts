/**
 * docs/operations.md#health-and-metrics, "Out of inotify watches": when the kernel has no inotify watch left (fs.watch throws
 * ENOSPC), a project's changes are heard by the rescan only. /readyz says so (503 degraded) and
 * `pdp_unwatched_folders{code="ENOSPC"}` counts the folders, until watches are available again.
 * The failure is injected where the watcher calls fs.watch; everything else is real.
 */
import fs from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { POLICY_FILE, policyText } from '../support/files.js';
import { buildTestApp, call, decide } from '../support/app.js';
import { waitFor } from '../support/wait.js';

afterEach(() => vi.restoreAllMocks());

/** The folders fs.watch refuses, as the kernel does once fs.inotify.max_user_watches is reached. */
function noWatchesLeftFor(part: string): void {
  const realWatch = fs.watch.bind(fs) as (...args: unknown[]) => fs.FSWatcher;
  vi.spyOn(fs, 'watch').mockImplementation((...args: unknown[]) => {
    if (String(args[0]).includes(part))
      throw Object.assign(new Error(`ENOSPC: System limit for number of file watchers reached, watch '${String(args[0])}'`), {
        code: 'ENOSPC',
        errno: -28,
        syscall: 'watch',
      });
    return realWatch(...args);
  });
}

const unwatchedMetric = (text: string): number => Number(/^pdp_unwatched_folders\{code="ENOSPC"\} (\d+)$/m.exec(text)?.[1] ?? NaN);

describe('running out of inotify watches', () => {
  it('answers /readyz 503 degraded and counts the folders in a metric, until watches are back', async (t) => {
    const server = await buildTestApp(t, { demo: { policy: policyText([]) } }, { rescanMs: 100 });
    const ready = await call(server.app, 'GET', '/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', projects: 1 });
    expect(unwatchedMetric((await call(server.app, 'GET', '/metrics')).body)).toBe(0);

    noWatchesLeftFor(`${path.sep}late`);
    const late = path.join(server.root, 'late');
    // Prepared aside and moved in whole: the policy file exists when the project is added, so its
    // watch fails too (written in place, it may or may not exist yet when the watches start).
    const staged = path.join(path.dirname(server.root), `${path.basename(server.root)}-staged`);
    await mkdir(path.join(staged, '.ideai'), { recursive: true });
    await writeFile(path.join(staged, '.ideai', POLICY_FILE), policyText(['idea_memory_write']));
    await rename(staged, late);
    // The project folder, its .ideai and its policy file: all unwatched once the project is added.
    await waitFor(async () => (await call(server.app, 'GET', '/readyz')).json<{ projects: number }>().projects === 2, 'project added');
    const degraded = await call(server.app, 'GET', '/readyz');
    expect(degraded.json()).toMatchObject({ status: 'degraded', projects: 2, unwatchedFolders: 3 });
    expect(degraded.json<{ message: string }>().message).toMatch(/max_user_watches/);
    expect(unwatchedMetric((await call(server.app, 'GET', '/metrics')).body)).toBe(3);

    // Still served, from the rescan: a revocation is heard, only later than with a watch.
    expect((await decide(server.app, { project: 'late', requester: 'QA', tool: 'idea_memory_write' })).allow).toBe(true);
    await writeFile(path.join(late, '.ideai', POLICY_FILE), policyText([]));
    await waitFor(
      async () => !(await decide(server.app, { project: 'late', requester: 'QA', tool: 'idea_memory_write' })).allow,
      'revocation heard by the rescan',
    );

    vi.restoreAllMocks();
    await waitFor(async () => (await call(server.app, 'GET', '/readyz')).statusCode === 200, '/readyz ready again');
    expect((await call(server.app, 'GET', '/readyz')).json()).toEqual({ status: 'ready', projects: 2 });
    expect(unwatchedMetric((await call(server.app, 'GET', '/metrics')).body)).toBe(0);
  });
});

describe('/docs', () => {
  it('may not be framed by another site, as /ui', async (t) => {
    const server = await buildTestApp(t, {});
    for (const url of ['/docs', '/docs/', '/docs/json']) {
      const response = await call(server.app, 'GET', url);
      expect(response.statusCode, url).toBeLessThan(400);
      expect(response.headers['x-frame-options'], url).toBe('DENY');
      expect(response.headers['content-security-policy'], url).toContain("frame-ancestors 'none'");
    }
  });
});
