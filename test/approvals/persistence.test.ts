/**
 * Grants and `once` answers survive a restart (docs/api.md#approvals-and-temporary-grants): one file under the state folder,
 * written atomically; whatever cannot be trusted in it grants nothing and is reported.
 */
import { execFileSync } from 'node:child_process';
import { chmod, chown, lstat, readdir, readFile, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApprovalsStateFile, CORRUPT_FILE_NAME, STATE_FILE_NAME } from '../../server/approvals/state-file.js';
import { tempFolder } from '../support/temp-folder.js';
import { open, TestClock } from '../support/clocked-approvals.js';
import { stringContaining, stringMatching } from '../support/typed.js';

const HOUR = 3_600_000;
const grantLine = (overrides: Record<string, unknown>, clock: TestClock) => ({
  project: 'demo',
  id: 'g1',
  requester: 'QA',
  tools: ['idea_memory_write'],
  createdAt: new Date(clock.now).toISOString(),
  expiresAt: new Date(clock.now + HOUR).toISOString(),
  ...overrides,
});
const stateText = (grants: unknown[], onces: unknown[] = []) => `${JSON.stringify({ version: 1, grants, onces })}\n`;

/** A state folder holding `text` as its state file, mode 0600 like the service writes it. */
async function folderWith(text: string): Promise<string> {
  const folder = await tempFolder();
  await writeFile(path.join(folder, STATE_FILE_NAME), text, { mode: 0o600 });
  return folder;
}

describe('state file', () => {
  it('removes at start the temp files of writes that died (their process gone, or a minute old), and nothing else', async () => {
    const folder = await folderWith(stateText([]));
    const temp = (pid: number, hex = '0123456789ab') => `.${STATE_FILE_NAME}.${String(pid)}.${hex}.tmp`;
    // 4194304 is above Linux's largest pid: that process is gone.
    const dead = temp(4_194_304);
    const oldOfLive = temp(process.ppid, 'aaaaaaaaaaaa');
    const youngOfLive = temp(process.ppid, 'bbbbbbbbbbbb');
    const others = ['.approvals.json.notes.tmp', 'approvals.json.bak'];
    for (const name of [dead, oldOfLive, youngOfLive, ...others]) await writeFile(path.join(folder, name), '{}', { mode: 0o600 });
    const minutesAgo = new Date(Date.now() - 120_000);
    await utimes(path.join(folder, oldOfLive), minutesAgo, minutesAgo);
    open({ stateDirectory: folder });
    expect((await readdir(folder)).sort()).toEqual([STATE_FILE_NAME, youngOfLive, ...others].sort());
  });

  it('keeps grants across a restart (same id, tools and expiry); an expired or revoked one does not come back', async () => {
    const folder = await tempFolder();
    const clock = new TestClock();
    const first = open({ stateDirectory: folder }, clock);
    const kept = first.grants.create('demo', 'QA', ['idea_memory_write', 'idea_ask_agent'], 3600, clock.now);
    const revoked = first.grants.create('demo', 'Git', ['idea_memory_write'], 3600, clock.now);
    const short = first.grants.create('other', 'QA', ['idea_ticket_create'], 60, clock.now);
    first.grants.revoke('demo', revoked.id, clock.now);
    first.close();
    clock.advance(60_000);
    const second = open({ stateDirectory: folder }, clock);
    expect(second.warnings).toEqual([]);
    expect(second.grants.list('demo', clock.now)).toEqual([kept]);
    expect(second.grants.has('demo', 'QA', 'idea_ask_agent', clock.now)).toBe(true);
    expect(second.grants.has('demo', 'Git', 'idea_memory_write', clock.now)).toBe(false);
    expect(second.grants.has('other', 'QA', short.tools[0] as string, clock.now)).toBe(false);
    expect(second.grants.list('other', clock.now)).toEqual([]);
  });

  it('forgets the grants and once answers of a dropped project across a restart', async () => {
    const folder = await tempFolder();
    const clock = new TestClock();
    const first = open({ stateDirectory: folder }, clock);
    first.grants.create('demo', 'QA', ['idea_memory_write'], 3600, clock.now);
    const outcome = first.requests.request('demo', 'QA', 'idea_ask_agent', undefined, clock.now);
    if (outcome.kind !== 'pending') throw new Error('expected a pending request');
    await first.requests.answer('demo', outcome.approval.id, 'once', undefined, clock.now);
    first.grants.dropProject('demo');
    first.requests.dropProject('demo');
    const second = open({ stateDirectory: folder }, clock);
    expect(second.grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
    expect(second.requests.consumeOnce('demo', 'QA', 'idea_ask_agent', undefined, clock.now)).toBe(false);
  });

  it('writes a 0600 file of this user in a 0700 folder it creates, and leaves no temporary file', async () => {
    const folder = path.join(await tempFolder(), 'state');
    const harness = open({ stateDirectory: folder });
    harness.grants.create('demo', 'QA', ['idea_memory_write'], 60, harness.clock.now);
    harness.grants.create('demo', 'Git', ['idea_memory_write'], 60, harness.clock.now);
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(folder, STATE_FILE_NAME))).mode & 0o777).toBe(0o600);
    expect(await readdir(folder)).toEqual([STATE_FILE_NAME]);
    const saved = JSON.parse(await readFile(path.join(folder, STATE_FILE_NAME), 'utf8')) as { version: number; grants: unknown[] };
    expect(saved.version).toBe(1);
    expect(saved.grants).toHaveLength(2);
  });

  it('replaces a symbolic link at the state file instead of writing through it, and never reads through it', async () => {
    const folder = await tempFolder();
    const elsewhere = path.join(await tempFolder(), 'target.json');
    const clock = new TestClock();
    await writeFile(elsewhere, stateText([grantLine({}, clock)]));
    await symlink(elsewhere, path.join(folder, STATE_FILE_NAME));
    const harness = open({ stateDirectory: folder }, clock);
    expect(harness.warnings).toEqual([stringContaining('cannot be read')]);
    expect(harness.grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
    harness.grants.create('demo', 'Git', ['idea_ask_agent'], 60, clock.now);
    expect(await readFile(elsewhere, 'utf8')).toBe(stateText([grantLine({}, clock)]));
    expect((await lstat(path.join(folder, STATE_FILE_NAME))).isFile()).toBe(true);
  });

  it('a corrupt file grants nothing, is reported and moved aside, and the service goes on', async () => {
    const clock = new TestClock();
    const valid = stateText([grantLine({}, clock)]);
    for (const text of [
      valid.slice(0, 40),
      '',
      'null',
      stateText([grantLine({ tools: 'idea_memory_write' }, clock)]),
      valid.replace('"version":1', '"version":2'),
    ]) {
      const folder = await folderWith(text);
      const harness = open({ stateDirectory: folder }, clock);
      expect(harness.warnings).toEqual([
        stringMatching(/^Approvals state file .*approvals\.json .*no grant or approval from it is active; it was moved to /),
      ]);
      expect(harness.grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
      expect(harness.grants.list('demo', clock.now)).toEqual([]);
      expect(await readFile(path.join(folder, CORRUPT_FILE_NAME), 'utf8')).toBe(text);
      harness.grants.create('demo', 'Git', ['idea_ask_agent'], 60, clock.now);
      expect(harness.grants.has('demo', 'Git', 'idea_ask_agent', clock.now)).toBe(true);
      harness.close();
    }
  });

  it('a wall clock set back before a restart lengthens no grant past the time it was given', async () => {
    const folder = await tempFolder();
    const clock = new TestClock();
    const first = open({ stateDirectory: folder }, clock);
    first.grants.create('demo', 'QA', ['idea_memory_write'], 60, clock.now);
    first.close();
    clock.wallBehind = HOUR;
    const second = open({ stateDirectory: folder }, clock);
    expect(second.grants.has('demo', 'QA', 'idea_memory_write', clock.advance(59_000))).toBe(true);
    expect(second.grants.has('demo', 'QA', 'idea_memory_write', clock.advance(1_000))).toBe(false);
  });

  it('refuses a file with a key given twice: JSON.parse would keep the last value, a reader sees the first', async () => {
    const clock = new TestClock();
    const expired = new Date(clock.now - HOUR).toISOString();
    const live = new Date(clock.now + HOUR).toISOString();
    // The first expiresAt is what a person reading the file sees: the grant is over.
    const text = stateText([grantLine({ expiresAt: expired }, clock)]).replace(
      `"expiresAt":"${expired}"`,
      `"expiresAt":"${expired}","expiresAt":"${live}"`,
    );
    const folder = await folderWith(text);
    const harness = open({ stateDirectory: folder }, clock);
    expect(harness.warnings).toEqual([
      stringMatching(/duplicate key "expiresAt" at line 1, column \d+.*no grant or approval from it is active/),
    ]);
    expect(harness.grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
    expect(await readFile(path.join(folder, CORRUPT_FILE_NAME), 'utf8')).toBe(text);
  });

  it('never grants a name outside the catalog, an anonymous requester, a bad project or an impossible expiry from the file', async () => {
    const clock = new TestClock();
    const folder = await folderWith(
      stateText(
        [
          grantLine({ id: 'mixed', tools: ['idea_memory_write', 'rm_rf', '__proto__'] }, clock),
          grantLine({ id: 'unknown', requester: 'Git', tools: ['rm_rf'] }, clock),
          grantLine({ id: 'anonymous', requester: 'mcp' }, clock),
          grantLine({ id: 'assistant', requester: 'ticket-assistant:demo:1' }, clock),
          grantLine({ id: 'path', project: '../demo' }, clock),
          grantLine({ id: 'forever', requester: 'Forever', expiresAt: new Date(clock.now + 10 * 86_400_000).toISOString() }, clock),
          grantLine({ id: 'garbled', requester: 'Garbled', expiresAt: 'tomorrow' }, clock),
          grantLine({ id: 'old', requester: 'Old', expiresAt: new Date(clock.now - 1).toISOString() }, clock),
        ],
        [
          {
            project: 'demo',
            approvalId: 'a1',
            requester: 'QA',
            tool: 'rm_rf',
            armedAt: new Date(clock.now).toISOString(),
            expiresAt: new Date(clock.now + HOUR).toISOString(),
          },
          {
            project: 'demo',
            approvalId: 'a2',
            requester: 'QA',
            tool: 'idea_ask_agent',
            armedAt: new Date(clock.now).toISOString(),
            expiresAt: new Date(clock.now + HOUR).toISOString(),
          },
        ],
      ),
    );
    const harness = open({ stateDirectory: folder }, clock);
    expect(harness.grants.list('demo', clock.now)).toEqual([expect.objectContaining({ id: 'mixed', tools: ['idea_memory_write'] })]);
    for (const requester of ['Git', 'mcp', 'ticket-assistant:demo:1', 'Forever', 'Garbled', 'Old']) {
      expect(harness.grants.has('demo', requester, 'idea_memory_write', clock.now)).toBe(false);
    }
    expect(harness.grants.has('demo', 'QA', 'rm_rf', clock.now)).toBe(false);
    expect(harness.grants.has('../demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
    expect(harness.requests.consumeOnce('demo', 'QA', 'rm_rf', undefined, clock.now)).toBe(false);
    expect(harness.requests.consumeOnce('demo', 'QA', 'idea_ask_agent', undefined, clock.now)).toBe(true);
    expect(harness.warnings).toEqual([
      stringContaining('"mixed": names outside the catalog ignored: rm_rf, __proto__'),
      stringContaining('"unknown" dropped: none of its tools is in the catalog'),
      stringContaining('"anonymous" dropped: its requester is not an agent'),
      stringContaining('"assistant" dropped: its requester is not an agent'),
      stringContaining('"path" dropped: invalid project id'),
      stringContaining('"forever" dropped: it expires later than a grant can last'),
      stringContaining('"garbled" dropped: invalid times'),
      stringContaining('1 saved "once" approvals were dropped'),
    ]);
  });

  it('trusts no file or folder that others may write, and then grants nothing and saves nothing', async () => {
    const clock = new TestClock();
    const text = stateText([grantLine({}, clock)]);
    const groupWritableFile = await folderWith(text);
    await chmod(path.join(groupWritableFile, STATE_FILE_NAME), 0o620);
    const openFolder = await folderWith(text);
    await chmod(openFolder, 0o777);
    const linkedFolder = path.join(await tempFolder(), 'linked');
    await symlink(await folderWith(text), linkedFolder);
    for (const [folder, problem] of [
      [groupWritableFile, 'writable by group or others'],
      [openFolder, 'writable by group or others'],
      [linkedFolder, 'symbolic link'],
    ] as const) {
      const harness = open({ stateDirectory: folder }, clock);
      expect(harness.warnings).toEqual([stringContaining(problem)]);
      expect(harness.grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
      if (folder !== groupWritableFile) {
        expect(() => harness.grants.create('demo', 'QA', ['idea_memory_write'], 60, clock.now)).toThrow(
          expect.objectContaining({ code: 'write_failed' }),
        );
        expect(harness.grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
      }
    }
  });

  it.runIf(process.getuid?.() === 0)('does not trust a file that belongs to another user', async () => {
    const clock = new TestClock();
    const folder = await folderWith(stateText([grantLine({}, clock)]));
    await chown(path.join(folder, STATE_FILE_NAME), 4242, 4242);
    const harness = open({ stateDirectory: folder }, clock);
    expect(harness.warnings).toEqual([stringContaining('another user')]);
    expect(harness.grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
  });

  it('does not hang on a FIFO in place of the state file', async () => {
    const folder = await tempFolder();
    execFileSync('mkfifo', ['-m', '600', path.join(folder, STATE_FILE_NAME)]);
    const loaded = new ApprovalsStateFile(folder).load();
    expect(loaded).toEqual({ grants: [], onces: [], warning: stringContaining('not a regular file') });
  });

  it('a grant that cannot be saved is not granted; a revocation that cannot be saved still takes effect and says so', async () => {
    const folder = await tempFolder();
    const clock = new TestClock();
    const harness = open({ stateDirectory: folder }, clock);
    const revoked = harness.grants.create('demo', 'Git', ['idea_ask_agent'], 3600, clock.now);
    const moved = `${folder}-moved`;
    await rename(folder, moved);
    await writeFile(folder, 'not a folder');
    expect(() => harness.grants.create('demo', 'QA', ['idea_memory_write'], 60, clock.now)).toThrow(
      expect.objectContaining({ code: 'write_failed', message: stringContaining('nothing was granted') }),
    );
    expect(harness.grants.has('demo', 'QA', 'idea_memory_write', clock.now)).toBe(false);
    expect(harness.grants.list('demo', clock.now).map((grant) => grant.id)).toEqual([revoked.id]);
    expect(() => harness.grants.revoke('demo', revoked.id, clock.now)).toThrow(
      expect.objectContaining({ code: 'write_failed', message: stringContaining('after a restart') }),
    );
    expect(harness.grants.has('demo', 'Git', 'idea_ask_agent', clock.now)).toBe(false);
    await rm(folder);
    await rename(moved, folder);
  });
});
