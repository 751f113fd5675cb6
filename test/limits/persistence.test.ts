/**
 * docs/design.md#usage-limits: counts survive a restart, timed like grants: neither a restart nor a
 * wall clock stepped back or forward empties a window early; a project folder made again inherits
 * nothing. The real service process under Debian's libfaketime, and the file with injected clocks.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { BootTime, ServiceClock } from '../../server/clock.js';
import type { ToolLimit } from '../../server/domain/limits.js';
import { UsageCounts } from '../../server/limits/usage-counts.js';
import { UsageCountsFile, elapsedSinceWrite } from '../../server/limits/usage-counts-file.js';
import type { Decision } from '../../schemas/index.js';
import { writeProject } from '../support/files.js';
import { START_DEADLINE_MS, startService, type ServiceProcess } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { READ_TOOLS } from '../support/tools.js';

const LIBFAKETIME = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1', '/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1'].find(
  (file) => existsSync(file),
);
const ASK = { project: 'demo', requester: 'QA', tool: 'idea_ask_agent', arguments: { agentId: 'Git' } } as const;
const HOUR: ToolLimit = { max: 2, per: '1h', windowMs: 3_600_000 };

async function decideOn(service: ServiceProcess): Promise<Decision> {
  const response = await fetch(`${service.baseUrl}/decide`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ASK),
  });
  return (await response.json()) as Decision;
}

describe('a restart of the service with the wall clock stepped', () => {
  it.runIf(LIBFAKETIME !== undefined || process.env.CI !== undefined)(
    'keeps a full window full after a restart, with the clock set back an hour, then forward two hours (FAKETIME)',
    { timeout: 4 * START_DEADLINE_MS },
    async () => {
      expect(LIBFAKETIME, 'libfaketime (Debian package faketime) is not installed').toBeDefined();
      const outer = await tempFolder();
      const root = path.join(outer, 'projects');
      await mkdir(root);
      const policy = {
        version: 1,
        projectDefault: { allowedTools: [...READ_TOOLS, 'idea_ask_agent'], limits: { idea_ask_agent: { max: 2, per: '1h' } } },
      };
      await writeProject(root, 'demo', { policy: JSON.stringify(policy) });
      const env = {
        PDP_PROJECTS_ROOT: root,
        PDP_STATE_DIR: path.join(outer, 'state'),
        PDP_ADMIN_TOKEN: 'usage-limits-admin-token-000001',
        PDP_SOCKET: 'off',
      };

      const first = await startService(env);
      try {
        expect((await decideOn(first)).allow).toBe(true);
        expect((await decideOn(first)).allow).toBe(true);
        expect(await decideOn(first)).toMatchObject({ allow: false, reason: 'rate_limited' });
      } finally {
        expect((await first.stop()).code).toBe(0);
      }
      for (const offset of ['-1h', '+2h']) {
        const next = await startService({ ...env, LD_PRELOAD: LIBFAKETIME ?? '', FAKETIME: offset, FAKETIME_NO_CACHE: '1' });
        try {
          const decision = await decideOn(next);
          expect(decision, offset).toMatchObject({ allow: false, reason: 'rate_limited' });
          expect(decision.retryAfterSeconds, offset).toBeGreaterThan(3_000);
        } finally {
          expect((await next.stop()).code).toBe(0);
        }
      }
    },
  );
});

/** A clock and a boot the test moves by hand. */
function clocks() {
  const state = { wall: Date.parse('2026-06-01T12:00:00Z'), monotonic: 1_000, boot: { id: 'boot-a', uptimeMs: 500_000 } as BootTime };
  const clock: ServiceClock = { wall: () => state.wall, monotonic: () => state.monotonic, boot: () => state.boot };
  const pass = (ms: number, wallStep = 0): void => {
    state.wall += ms + wallStep;
    state.monotonic += ms;
    state.boot = { ...state.boot, uptimeMs: state.boot.uptimeMs + ms };
  };
  return { state, clock, pass };
}

describe('the usage counts file', () => {
  it('restores what is left of each window, judged on the boot clock within a boot and never less than 0 after a reboot', async () => {
    const stateDir = await tempFolder();
    const { state, clock, pass } = clocks();
    const logger = pino({ enabled: false });
    const open = () => {
      const counts = new UsageCounts({ clock, projects: { folderOf: () => 'folder-1' } });
      return { counts, file: new UsageCountsFile({ stateDir, counts, logger, clock }) };
    };
    const first = open();
    await first.file.start();
    first.counts.count('demo', 'QA', 'idea_ask_agent', HOUR);
    pass(10 * 60_000);
    first.counts.count('demo', 'QA', 'idea_ask_agent', HOUR);
    first.file.changed();
    await first.file.close();

    // 5 minutes later, a restart (a new monotonic origin) with the wall clock two hours ahead: still full, 45 min to wait.
    pass(5 * 60_000, 2 * 3_600_000);
    state.monotonic = 7;
    const second = open();
    await second.file.start();
    expect(second.counts.retryAfter('demo', 'QA', 'idea_ask_agent', HOUR)).toBe(45 * 60);
    await second.file.close();

    // After a reboot with the wall clock set back, no time is taken to have passed since the file was written
    // (the second run changed nothing, so the first run's file is read): 50 min, never less.
    state.boot = { id: 'boot-b', uptimeMs: 1_000 };
    pass(0, -3 * 3_600_000);
    const third = open();
    await third.file.start();
    expect(third.counts.retryAfter('demo', 'QA', 'idea_ask_agent', HOUR)).toBe(50 * 60);
    // The project's folder made again: it inherits nothing.
    third.counts.adoptFolder('demo', 'folder-2');
    expect(third.counts.retryAfter('demo', 'QA', 'idea_ask_agent', HOUR)).toBeUndefined();
    await third.file.close();
  });

  it('reads elapsed time on the boot clock within one boot, on the wall clock after a reboot, never below 0', () => {
    const saved = { bootId: 'a', uptimeMs: 1_000, writtenAt: 5_000_000 };
    expect(elapsedSinceWrite(saved, { id: 'a', uptimeMs: 61_000 }, 1)).toBe(60_000);
    expect(elapsedSinceWrite(saved, { id: 'b', uptimeMs: 10 }, 5_030_000)).toBe(30_000);
    expect(elapsedSinceWrite(saved, { id: 'b', uptimeMs: 10 }, 4_000_000)).toBe(0);
    expect(elapsedSinceWrite(saved, undefined, 4_000_000)).toBe(0);
  });
});
