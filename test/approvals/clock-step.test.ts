/**
 * Expiry never comes back (docs/api.md#approvals-and-temporary-grants): the service times grants on a clock that never steps
 * back, so a wall clock set back (NTP, a VM resumed, a hand-set date) revives nothing, in memory
 * or through the state file at the next start.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { STATE_FILE_NAME } from '../../server/approvals/state-file.js';
import { waitFor } from '../support/wait.js';
import { tempFolder } from '../support/temp-folder.js';
import { askDoc, buildApprovalsApp } from '../support/approvals-app.js';

afterEach(() => {
  vi.restoreAllMocks();
});

const HOUR = 3_600_000;
const projects = { demo: { policy: askDoc({ allowedTools: ['idea_ticket_read'] }) } };
const query = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };

/**
 * The process's wall clock, which a test sets back: Date.now is what a wall clock step changes,
 * and it is replaced before the service starts so that whatever the service kept of it is replaced too.
 */
function steppableWallClock(): { stepBack: (ms: number) => void } {
  const realNow = Date.now.bind(Date);
  let offset = 0;
  vi.spyOn(Date, 'now').mockImplementation(() => realNow() - offset);
  return {
    stepBack: (ms) => {
      offset += ms;
    },
  };
}

describe('a wall clock stepped back', () => {
  it('does not revive an expired grant: /decide still denies and GET grants does not list it', async (t) => {
    const wallClock = steppableWallClock();
    const service = await buildApprovalsApp(t, projects);
    const grant = await service.grant('demo', 'QA', ['idea_memory_write'], 1);
    expect((await service.decide(query)).source).toBe('grant');
    await waitFor(async () => !(await service.decide(query)).allow, 'the grant to expire', 5_000);
    wallClock.stepBack(HOUR);
    const decision = await service.decide(query);
    expect(decision).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    const listed = await service.call('GET', '/projects/demo/grants');
    expect(listed.json<{ grants: { id: string }[] }>().grants.map((entry) => entry.id)).not.toContain(grant.id);
  });

  it('does not revive it at the next start either: the expired grant left the state file without any list, create or revoke', async (t) => {
    const wallClock = steppableWallClock();
    const stateDir = await tempFolder();
    const first = await buildApprovalsApp(t, projects, { stateDir });
    const grant = await first.grant('demo', 'QA', ['idea_memory_write'], 1);
    const stateFile = path.join(stateDir, STATE_FILE_NAME);
    expect(await readFile(stateFile, 'utf8')).toContain(grant.id);
    await waitFor(async () => !(await readFile(stateFile, 'utf8')).includes(grant.id), 'the expired grant to leave the file', 5_000);
    await first.app.close();
    wallClock.stepBack(HOUR);
    const second = await buildApprovalsApp(t, {}, { stateDir, projects: first });
    expect(await second.decide(query)).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
  });

  it('keeps a live grant live until its own end', async (t) => {
    const wallClock = steppableWallClock();
    const service = await buildApprovalsApp(t, projects);
    const grant = await service.grant('demo', 'QA', ['idea_memory_write'], 3600);
    wallClock.stepBack(HOUR);
    expect((await service.decide(query)).source).toBe('grant');
    const listed = (await service.call('GET', '/projects/demo/grants')).json<{ grants: { id: string; expiresAt: string }[] }>().grants;
    expect(listed).toEqual([expect.objectContaining({ id: grant.id, expiresAt: grant.expiresAt })]);
  });
});
