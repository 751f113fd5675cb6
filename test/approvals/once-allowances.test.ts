/**
 * `OnceAllowances` on its own (docs/api.md#approvals-and-temporary-grants): an armed `once` answer
 * allows exactly one call that matches its project, requester, tool and ticket, within its
 * lifetime, is saved before it is armed and saved as spent before its call is allowed, and comes
 * back from a real state file neither lost nor usable twice. once.test.ts checks the same answers
 * through the approval requests.
 */
import { describe, expect, it } from 'vitest';
import type { RestartBounds } from '../../server/clock.js';
import { OnceAllowances, type OnceAllowancesOptions } from '../../server/approvals/once-allowances.js';
import { ApprovalsStateFile, type PersistedOnce } from '../../server/approvals/state-file.js';
import { ApiError } from '../../server/errors.js';
import { elapse } from '../support/wait.js';
import { tempFolder } from '../support/temp-folder.js';
import { failureLogger, TestClock } from '../support/clocked-approvals.js';

const TOOL = 'idea_ticket_update';
const MINUTE = 60_000;

/** Allowances on a test clock, with every save recorded as the live allowances it would write. */
function allowances(options: OnceAllowancesOptions = {}, clock = new TestClock()) {
  const saves: PersistedOnce[][] = [];
  const onces: OnceAllowances = new OnceAllowances({
    clock,
    persist: () => saves.push(onces.persisted(clock.now)),
    ...options,
  });
  return { onces, clock, saves };
}

describe('OnceAllowances: one call, and only a matching one', () => {
  it('allows exactly one call, then none', () => {
    const { onces, clock } = allowances();
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now)).toBe(true);
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now)).toBe(false);
    expect(onces.persisted(clock.now)).toEqual([]);
  });

  it('is neither passed nor spent by a call of another project, requester, tool or ticket', () => {
    const { onces, clock } = allowances();
    onces.arm('demo', 'a1', 'QA', TOOL, '82', clock.now);
    const { now } = clock;
    expect(onces.consume('other', 'QA', TOOL, '82', now)).toBe(false);
    expect(onces.consume('demo', 'Git', TOOL, '82', now)).toBe(false);
    expect(onces.consume('demo', 'QA', 'idea_memory_write', '82', now)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, '83', now)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, undefined, now)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, '  #82 ', now)).toBe(true);
  });

  it('armed for no ticket, is not spent by a call that names one', () => {
    const { onces, clock } = allowances();
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    expect(onces.consume('demo', 'QA', TOOL, '#1', clock.now)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, '', clock.now)).toBe(true);
  });

  it('lasts its lifetime to the millisecond: 60 s when given, a day by default', () => {
    const short = allowances({ ttlSeconds: 60 });
    short.onces.arm('demo', 'a1', 'QA', TOOL, undefined, short.clock.now);
    short.onces.arm('demo', 'a2', 'Git', TOOL, undefined, short.clock.now);
    expect(short.onces.consume('demo', 'QA', TOOL, undefined, short.clock.now + MINUTE - 1)).toBe(true);
    expect(short.onces.consume('demo', 'Git', TOOL, undefined, short.clock.now + MINUTE)).toBe(false);

    const day = 86_400_000;
    const long = allowances();
    long.onces.arm('demo', 'a1', 'QA', TOOL, undefined, long.clock.now);
    long.onces.arm('demo', 'a2', 'Git', TOOL, undefined, long.clock.now);
    expect(long.onces.consume('demo', 'QA', TOOL, undefined, long.clock.now + day - 1)).toBe(true);
    expect(long.onces.consume('demo', 'Git', TOOL, undefined, long.clock.now + day)).toBe(false);
  });

  it('a second answer for the same pair replaces the unused one: its ticket and its lifetime', () => {
    const { onces, clock } = allowances({ ttlSeconds: 60 });
    const first = clock.now;
    onces.arm('demo', 'a1', 'QA', TOOL, '1', first);
    onces.arm('demo', 'a2', 'QA', TOOL, '2', clock.advance(30_000));
    expect(onces.persisted(clock.now)).toEqual([expect.objectContaining({ approvalId: 'a2', issueRef: '2' })]);
    expect(onces.consume('demo', 'QA', TOOL, '1', clock.now)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, '2', first + MINUTE)).toBe(true);
    expect(onces.consume('demo', 'QA', TOOL, '2', first + MINUTE)).toBe(false);
  });
});

describe('OnceAllowances: saved before it counts', () => {
  it('is armed only once saved, and the save already holds it', () => {
    const { onces, clock, saves } = allowances();
    onces.arm('demo', 'a1', 'QA', TOOL, '7', clock.now);
    expect(saves).toEqual([[expect.objectContaining({ project: 'demo', approvalId: 'a1', requester: 'QA', tool: TOOL, issueRef: '7' })]]);
  });

  it('a failed save arms nothing, and keeps the unused answer it would have replaced', () => {
    const clock = new TestClock();
    let failing = false;
    const onces = new OnceAllowances({
      clock,
      persist: () => {
        if (failing) throw new Error('disk full');
      },
    });
    onces.arm('demo', 'a1', 'QA', TOOL, '1', clock.now);
    failing = true;
    expect(() => {
      onces.arm('demo', 'a2', 'QA', TOOL, '2', clock.now);
    }).toThrow(expect.objectContaining({ code: 'write_failed', message: expect.stringContaining('disk full') as string }));
    expect(() => {
      onces.arm('demo', 'a3', 'Git', TOOL, undefined, clock.now);
    }).toThrow(ApiError);
    failing = false;
    expect(onces.consume('demo', 'Git', TOOL, undefined, clock.now)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, '2', clock.now)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, '1', clock.now)).toBe(true);
  });

  it('is saved as spent before the call it allows', () => {
    const { onces, clock, saves } = allowances();
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now)).toBe(true);
    expect(saves).toHaveLength(2);
    expect(saves[1]).toEqual([]);
  });

  it('refuses the call when the spend cannot be saved, reports it, and keeps the answer for the next call', () => {
    const clock = new TestClock();
    const failures: Error[] = [];
    let failing = false;
    const onces = new OnceAllowances({
      clock,
      persist: () => {
        if (failing) throw new Error('EIO');
      },
      logger: failureLogger(failures),
    });
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    failing = true;
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now)).toBe(false);
    expect(failures.map((error) => error.message)).toEqual(['EIO']);
    failing = false;
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now)).toBe(true);
  });
});

describe('OnceAllowances: spends at the same time', () => {
  it('of 100 calls racing for one answer, one is allowed', async () => {
    const { onces, clock } = allowances();
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    const results = await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        await elapse(i % 3);
        return onces.consume('demo', 'QA', TOOL, undefined, clock.now);
      }),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('a spend made while the first one is being saved finds nothing', () => {
    const clock = new TestClock();
    const inner: boolean[] = [];
    let reenter = false;
    const onces: OnceAllowances = new OnceAllowances({
      clock,
      persist: () => {
        if (reenter) inner.push(onces.consume('demo', 'QA', TOOL, undefined, clock.now));
      },
    });
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    reenter = true;
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now)).toBe(true);
    expect(inner).toEqual([false]);
  });
});

describe('OnceAllowances: bounds and drops', () => {
  it('keeps at most 1,000 unused answers per project; a replacement, another project or an expiry makes room', () => {
    const { onces, clock } = allowances({ ttlSeconds: 60, persist: () => undefined });
    for (let i = 0; i < 1_000; i++) onces.arm('demo', `a${i}`, `Agent${i}`, TOOL, undefined, clock.now);
    expect(() => {
      onces.arm('demo', 'b', 'Other', TOOL, undefined, clock.now);
    }).toThrow(expect.objectContaining({ code: 'limit_exceeded' }));
    expect(onces.consume('demo', 'Other', TOOL, undefined, clock.now)).toBe(false);
    onces.arm('demo', 'c', 'Agent0', TOOL, '5', clock.now);
    onces.arm('other', 'd', 'Other', TOOL, undefined, clock.now);
    onces.arm('demo', 'e', 'Other', TOOL, undefined, clock.advance(MINUTE));
    expect(onces.persisted(clock.now)).toHaveLength(1);
  });

  it('sweep forgets expired answers without a save; persisted never lists one', () => {
    const { onces, clock, saves } = allowances({ ttlSeconds: 60 });
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    onces.arm('demo', 'a2', 'Git', TOOL, undefined, clock.advance(30_000));
    expect(onces.persisted(clock.advance(30_000)).map((once) => once.approvalId)).toEqual(['a2']);
    onces.sweep(clock.advance(30_000));
    expect(saves).toHaveLength(2);
    expect(onces.persisted(clock.now - 1)).toEqual([]);
  });

  it('retain drops the pairs no longer on ask with one save, and saves nothing when it drops nothing', () => {
    const { onces, clock, saves } = allowances();
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    onces.arm('demo', 'a2', 'QA', 'idea_memory_write', undefined, clock.now);
    onces.arm('demo', 'a3', 'Git', TOOL, undefined, clock.now);
    onces.retain('demo', () => true);
    expect(saves).toHaveLength(3);
    onces.retain('demo', (_requester, tool) => tool !== TOOL);
    expect(saves).toHaveLength(4);
    expect(saves[3]?.map((once) => once.approvalId)).toEqual(['a2']);
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now)).toBe(false);
    expect(onces.consume('demo', 'QA', 'idea_memory_write', undefined, clock.now)).toBe(true);
  });

  it('stamps each answer with its project folder, and dropWhere drops by it (unknown folder: "")', () => {
    const folders = new Map([
      ['demo', 'dev:1'],
      ['other', 'dev:2'],
    ]);
    const { onces, clock } = allowances({ projects: { folderOf: (project) => folders.get(project) } });
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    onces.arm('other', 'a2', 'QA', TOOL, undefined, clock.now);
    onces.arm('gone', 'a3', 'QA', TOOL, undefined, clock.now);
    expect(onces.persisted(clock.now).map((once) => [once.project, once.folder])).toEqual([
      ['demo', 'dev:1'],
      ['other', 'dev:2'],
      ['gone', ''],
    ]);
    const seen: string[] = [];
    onces.dropWhere((project, folder) => {
      seen.push(`${project}@${folder}`);
      return folder !== folders.get(project);
    });
    expect(seen.sort()).toEqual(['demo@dev:1', 'gone@', 'other@dev:2']);
    expect(onces.persisted(clock.now).map((once) => once.project)).toEqual(['demo', 'other']);
  });

  it('dropProject forgets a project with one save; a failed save of a drop is reported and the drop stands', () => {
    const clock = new TestClock();
    const failures: Error[] = [];
    let saves = 0;
    let failing = false;
    const onces = new OnceAllowances({
      clock,
      persist: () => {
        saves++;
        if (failing) throw new Error('read-only');
      },
      logger: failureLogger(failures),
    });
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    onces.arm('other', 'a2', 'QA', TOOL, undefined, clock.now);
    onces.dropProject('nothing-here');
    expect(saves).toBe(2);
    failing = true;
    onces.dropProject('demo');
    expect(saves).toBe(3);
    expect(failures.map((error) => error.message)).toEqual(['read-only']);
    failing = false;
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now)).toBe(false);
    expect(onces.consume('other', 'QA', TOOL, undefined, clock.now)).toBe(true);
  });
});

describe('OnceAllowances: across a restart', () => {
  it('writes wall times (the monotonic time plus the clock offset), the ticket only when there is one, and the boot deadline', () => {
    const clock = new TestClock();
    clock.wallBehind = 3_600_000;
    const onces = new OnceAllowances({ clock, ttlSeconds: 60 });
    onces.arm('demo', 'a1', 'QA', TOOL, undefined, clock.now);
    onces.arm('demo', 'a2', 'Git', TOOL, '9', clock.now);
    const wallNow = clock.wall();
    const [plain, ticketed] = onces.persisted(clock.now, (expiresAt) => expiresAt - clock.now + 5_000);
    expect(plain).toStrictEqual({
      project: 'demo',
      approvalId: 'a1',
      requester: 'QA',
      tool: TOOL,
      armedAt: new Date(wallNow).toISOString(),
      expiresAt: new Date(wallNow + MINUTE).toISOString(),
      folder: '',
      expiresAtBootMs: 5_000 + MINUTE,
    });
    expect(ticketed).toMatchObject({ approvalId: 'a2', issueRef: '9' });
  });

  it('comes back from the real state file unused, still bound and timed, and a spent one does not', async () => {
    const file = new ApprovalsStateFile(await tempFolder());
    const clock = new TestClock();
    /** Options whose saves write the live allowances of `self()` to the file, as the service does. */
    const savingTo = (self: () => OnceAllowances): OnceAllowancesOptions => ({
      clock,
      ttlSeconds: 60,
      persist: () => {
        file.write({ grants: [], onces: self().persisted(clock.now) });
      },
    });
    const first: OnceAllowances = new OnceAllowances(savingTo(() => first));
    first.arm('demo', 'a1', 'QA', TOOL, '82', clock.now);
    first.arm('demo', 'a2', 'Git', TOOL, undefined, clock.now);
    expect(first.consume('demo', 'Git', TOOL, undefined, clock.now)).toBe(true);

    const restartedAt = clock.advance(20_000);
    const loaded = file.load();
    expect(loaded.warning).toBeUndefined();
    const second: OnceAllowances = new OnceAllowances(savingTo(() => second));
    expect(second.restore(loaded.onces, restartedAt)).toEqual([]);
    expect(second.consume('demo', 'Git', TOOL, undefined, restartedAt)).toBe(false);
    expect(second.consume('demo', 'QA', TOOL, '83', restartedAt)).toBe(false);
    expect(second.consume('demo', 'QA', TOOL, '#82', restartedAt + 40_000)).toBe(false);
    expect(second.consume('demo', 'QA', TOOL, '#82', restartedAt + 40_000 - 1)).toBe(true);

    const third = new OnceAllowances({ clock });
    third.restore(file.load().onces, clock.now);
    expect(third.consume('demo', 'QA', TOOL, '82', clock.now)).toBe(false);
  });

  it('drops from a file what arm could not have made, says how many, and drops an expired one silently', () => {
    const clock = new TestClock();
    const wall = (ms: number) => new Date(clock.now + ms).toISOString();
    const good: PersistedOnce = {
      project: 'demo',
      approvalId: 'a1',
      requester: 'QA',
      tool: TOOL,
      armedAt: wall(0),
      expiresAt: wall(MINUTE),
    };
    const bad: PersistedOnce[] = [
      { ...good, project: '../etc' },
      { ...good, requester: 'mcp' },
      { ...good, tool: 'rm_rf' },
      { ...good, approvalId: 'x'.repeat(65) },
      { ...good, issueRef: '1'.repeat(81) },
      { ...good, armedAt: 'yesterday' },
      { ...good, expiresAt: wall(86_400_001) },
    ];
    const onces = new OnceAllowances({ clock });
    const warnings = onces.restore([...bad, { ...good, requester: 'Git', expiresAt: wall(0) }, good], clock.now);
    expect(warnings).toEqual([expect.stringContaining('7 saved "once" approvals were dropped')]);
    expect(onces.persisted(clock.now).map((once) => once.requester)).toEqual(['QA']);
  });

  it('a wall clock set back since the file was written lengthens no answer past the lifetime it was given', () => {
    const clock = new TestClock();
    const entry: PersistedOnce = {
      project: 'demo',
      approvalId: 'a1',
      requester: 'QA',
      tool: TOOL,
      armedAt: new Date(clock.now).toISOString(),
      expiresAt: new Date(clock.now + MINUTE).toISOString(),
    };
    clock.wallBehind = 3_600_000;
    const onces = new OnceAllowances({ clock });
    onces.restore([entry], clock.now);
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now + MINUTE)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now + MINUTE - 1)).toBe(true);
  });

  it('within the same boot, ends at its boot-clock deadline even when the wall clock says later', () => {
    const clock = new TestClock();
    const entry: PersistedOnce = {
      project: 'demo',
      approvalId: 'a1',
      requester: 'QA',
      tool: TOOL,
      armedAt: new Date(clock.now).toISOString(),
      expiresAt: new Date(clock.now + MINUTE).toISOString(),
      expiresAtBootMs: 100_000,
    };
    const bounds: RestartBounds = { boot: { id: 'boot-1', uptimeMs: 90_000 }, savedBootId: 'boot-1', seenWallMs: undefined };
    const onces = new OnceAllowances({ clock });
    onces.restore([entry], clock.now, bounds);
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now + 10_000)).toBe(false);
    expect(onces.consume('demo', 'QA', TOOL, undefined, clock.now + 10_000 - 1)).toBe(true);
  });
});
