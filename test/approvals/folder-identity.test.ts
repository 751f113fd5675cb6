/**
 * docs/api.md#approvals-and-temporary-grants, invariants: a grant or `once` belongs to the project folder it was made for, not
 * only to the project id. A folder deleted and created again under the same id inherits nothing,
 * whether the service ran meanwhile or was restarted.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { replaceProjectFolder, writeProject } from '../support/files.js';
import { waitFor } from '../support/wait.js';
import { tempFolder } from '../support/temp-folder.js';
import { approvalOf, askDoc, buildApprovalsApp } from '../support/approvals-app.js';

const policy = askDoc({ allowedTools: ['idea_ticket_read'], askTools: ['idea_ask_agent'] });
const projects = { demo: { policy }, other: { policy } };
const memory = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };
const ask = { project: 'demo', requester: 'QA', tool: 'idea_ask_agent' };

describe('a project folder deleted and made again', () => {
  it('while the service was stopped: the new folder inherits no grant and no once', async (t) => {
    const stateDir = await tempFolder();
    const first = await buildApprovalsApp(t, projects, { stateDir });
    await first.grant('demo', 'QA', ['idea_memory_write'], 3600);
    await first.grant('other', 'QA', ['idea_memory_write'], 3600);
    await first.answer('demo', approvalOf(await first.decide(ask)), { answer: 'once' });
    await first.app.close();
    await replaceProjectFolder(first.root, 'demo', { policy });

    const second = await buildApprovalsApp(t, {}, { stateDir, projects: first });
    expect(await second.decide(memory)).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    expect(await second.decide(ask)).toMatchObject({ allow: false, reason: 'approval_required' });
    expect((await second.call('GET', '/projects/demo/grants')).json()).toEqual({ grants: [] });
    // The folder that was not replaced keeps its grant.
    expect(await second.decide({ ...memory, project: 'other' })).toMatchObject({ allow: true, source: 'grant' });
  });

  it('while the service runs, faster than a removal is confirmed: the new folder inherits nothing', async (t) => {
    const service = await buildApprovalsApp(t, projects);
    await service.grant('demo', 'QA', ['idea_memory_write'], 3600);
    await service.answer('demo', approvalOf(await service.decide(ask)), { answer: 'once' });
    expect(await service.decide(memory)).toMatchObject({ allow: true, source: 'grant' });
    await replaceProjectFolder(service.root, 'demo', { policy });
    // Until the new folder's policy is served (its tool on ask asks), and then for good.
    await waitFor(
      async () => (await service.decide(ask)).reason === 'approval_required' && !(await service.decide(memory)).allow,
      'the new folder served without the grant of the old one',
      5_000,
    );
    expect((await service.call('GET', '/projects/demo/grants')).json()).toEqual({ grants: [] });
    expect(await service.decide(memory)).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    // A grant made for the new folder works.
    await service.grant('demo', 'QA', ['idea_memory_write'], 3600);
    expect(await service.decide(memory)).toMatchObject({ allow: true, source: 'grant' });
  });

  it('a project gone while the service was stopped leaves nothing in the state file', async (t) => {
    const stateDir = await tempFolder();
    const first = await buildApprovalsApp(t, projects, { stateDir });
    await first.grant('demo', 'QA', ['idea_memory_write'], 3600);
    await first.app.close();
    await rm(path.join(first.root, 'demo'), { recursive: true, force: true });
    const second = await buildApprovalsApp(t, {}, { stateDir, projects: first });
    await second.app.close();
    await writeProject(first.root, 'demo', { policy });
    const third = await buildApprovalsApp(t, {}, { stateDir, projects: first });
    expect(await third.decide(memory)).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
  });
});
