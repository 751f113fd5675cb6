/**
 * docs/api.md#approvals-and-temporary-grants, invariants: expiry never comes back across a restart. A grant that ran out while
 * the service was stopped stays out when the service starts again with the wall clock an hour
 * behind (Debian's libfaketime, `FAKETIME=-1h`, on the real service process); the state file keeps
 * each end on the boot clock (/proc/uptime) with the boot id, and the latest wall time seen.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leftByBoot, type BootTime, type ServiceClock } from '../../server/clock.js';
import { STATE_FILE_NAME } from '../../server/approvals/state-file.js';
import type { Decision } from '../../schemas/index.js';
import { writeProject } from '../support/files.js';
import { START_DEADLINE_MS, startService, type ServiceProcess } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { READ_TOOLS } from '../support/tools.js';
import { open as openApprovals } from '../support/clocked-approvals.js';
import { askDoc } from '../support/approvals-app.js';

const LIBFAKETIME = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'].find(
  (file) => existsSync(file),
);
const ADMIN = 'restart-clock-back-admin-token-0001';
const WRITE = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' } as const;
// Long enough that a grant brought back for its whole lifetime still allows once a loaded machine has started the service again.
const GRANT_SECONDS = 15;

async function send(service: ServiceProcess, method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${service.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

describe('a restart with the wall clock set back', () => {
  // CI installs faketime (.ci/run); elsewhere the test runs where it is installed.
  it.runIf(LIBFAKETIME !== undefined || process.env.CI !== undefined)(
    'does not bring back a grant that ran out while the service was stopped (FAKETIME=-1h)',
    { timeout: 3 * START_DEADLINE_MS },
    async () => {
      expect(LIBFAKETIME, 'libfaketime (Debian package faketime) is not installed').toBeDefined();
      const outer = await tempFolder();
      const root = path.join(outer, 'projects');
      await mkdir(root);
      await writeProject(root, 'demo', { policy: askDoc({ allowedTools: [...READ_TOOLS] }) });
      const env = { PDP_PROJECTS_ROOT: root, PDP_STATE_DIR: path.join(outer, 'state'), PDP_ADMIN_TOKEN: ADMIN, PDP_SOCKET: 'off' };

      const first = await startService(env);
      try {
        const granted = await send(first, 'POST', '/projects/demo/grants', {
          requester: 'QA',
          tools: ['idea_memory_write'],
          ttlSeconds: GRANT_SECONDS,
        });
        expect(granted.status).toBe(200);
        expect((await (await send(first, 'POST', '/decide', WRITE)).json()) as Decision).toMatchObject({ allow: true, source: 'grant' });
      } finally {
        expect((await first.stop()).code).toBe(0);
      }
      const saved = JSON.parse(await readFile(path.join(outer, 'state', STATE_FILE_NAME), 'utf8')) as {
        bootId?: string;
        seenAt?: string;
        grants: { expiresAtBootMs?: number }[];
      };
      // Stopped until the grant has run out, then started an hour in the past.
      await new Promise((resolve) => setTimeout(resolve, GRANT_SECONDS * 1000 + 500));

      const second = await startService({ ...env, LD_PRELOAD: LIBFAKETIME ?? '', FAKETIME: '-1h', FAKETIME_NO_CACHE: '1' });
      try {
        const clock = (await (await send(second, 'POST', '/decide', WRITE)).json()) as Decision;
        expect(clock).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
        expect(await (await send(second, 'GET', '/projects/demo/grants')).json()).toEqual({ grants: [] });
        // The service does run an hour behind: a new grant says so.
        const fresh = (await (
          await send(second, 'POST', '/projects/demo/grants', { requester: 'Git', tools: ['idea_memory_write'], ttlSeconds: 60 })
        ).json()) as {
          createdAt: string;
        };
        expect(Date.now() - Date.parse(fresh.createdAt)).toBeGreaterThan(3_500_000);
      } finally {
        await second.stop();
      }
      // What the first run kept to judge by: the boot, the grant's end on its clock, the wall time seen.
      expect(saved.bootId).toMatch(/^[0-9a-f-]{36}$/);
      expect(Date.parse(saved.seenAt ?? '')).toBeGreaterThan(Date.now() - 5 * 60_000);
      expect(saved.grants[0]?.expiresAtBootMs).toBeGreaterThan(0);
    },
  );
});

describe('what bounds a kept grant or once at a restart', () => {
  const boot = { id: 'boot-a', uptimeMs: 100_000 };
  it('within the boot it was written in, its end on the boot clock, whatever the wall clock says', () => {
    expect(leftByBoot({ boot, savedBootId: 'boot-a', seenWallMs: undefined }, 9e12, 99_000)).toBe(-1000);
    expect(leftByBoot({ boot, savedBootId: 'boot-a', seenWallMs: 5e12 }, 9e12, 160_000)).toBe(60_000);
  });
  it('after a reboot, its wall end judged no earlier than the latest wall time seen', () => {
    expect(leftByBoot({ boot, savedBootId: 'boot-b', seenWallMs: 1_000_000 }, 1_060_000, 99_000)).toBe(60_000);
    expect(leftByBoot({ boot, savedBootId: 'boot-b', seenWallMs: 1_100_000 }, 1_060_000, 99_000)).toBe(-40_000);
    expect(leftByBoot({ boot: undefined, savedBootId: 'boot-a', seenWallMs: 1_100_000 }, 1_060_000, 99_000)).toBe(-40_000);
    // A file of an older version says neither: the wall clock alone judges, as before.
    expect(leftByBoot({ boot, savedBootId: undefined, seenWallMs: undefined }, 1_060_000, undefined)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('a once answer kept across a restart with the wall clock set back', () => {
  it('stays spent when it ran out while the service was stopped, and lasts what was left within one boot', async () => {
    const stateDirectory = await tempFolder();
    let wall = Date.parse('2026-06-01T12:00:00Z');
    let monotonic = 1_000;
    let boot: BootTime = { id: 'boot-a', uptimeMs: 500_000 };
    const clock: ServiceClock = { wall: () => wall, monotonic: () => monotonic, boot: () => boot };
    const open = () => openApprovals({ stateDirectory, clock, onceTtlSeconds: 2 });
    const pass = (ms: number, wallStep = 0): void => {
      wall += ms + wallStep;
      monotonic += ms;
      boot = { ...boot, uptimeMs: boot.uptimeMs + ms };
    };
    const first = open();
    first.onces.arm('demo', 'a1', 'QA', 'idea_memory_write', undefined, monotonic);
    first.onces.arm('demo', 'a2', 'Git', 'idea_memory_write', undefined, monotonic);
    first.close();
    // Stopped 3 s (past the 2 s), then started with the wall clock an hour behind: a new process, a new monotonic origin.
    pass(3_000, -3_600_000);
    monotonic = 7;
    const second = open();
    expect(second.onces.consume('demo', 'QA', 'idea_memory_write', undefined, monotonic)).toBe(false);
    second.close();

    const third = open();
    third.onces.arm('demo', 'a3', 'QA', 'idea_memory_write', undefined, monotonic);
    third.close();
    // 1 s later, the wall clock set back again: 1 s of the 2 s is left, no more.
    pass(1_000, -3_600_000);
    const fourth = open();
    expect(fourth.onces.consume('demo', 'Git', 'idea_memory_write', undefined, monotonic)).toBe(false);
    expect(fourth.onces.consume('demo', 'QA', 'idea_memory_write', undefined, monotonic + 900)).toBe(true);
    fourth.close();
    const fifth = open();
    fifth.onces.arm('demo', 'a4', 'QA', 'idea_memory_write', undefined, monotonic);
    fifth.close();
    pass(1_000, -3_600_000);
    expect(open().onces.consume('demo', 'QA', 'idea_memory_write', undefined, monotonic + 1_100)).toBe(false);
  });
});
