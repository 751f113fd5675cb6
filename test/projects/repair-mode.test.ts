/**
 * A repair (the whole-document write) over a file the service cannot read
 * (mode 000) leaves a file it can read: the written file keeps the old mode plus owner read and
 * write, so the repaired project stays valid.
 */
import { chmod, stat } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import type { PolicyDocument } from '../../schemas/index.js';
import { Project } from '../../server/projects/project.js';
import { policyText } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { makeProject, policyPathOf } from '../support/folder-registry.js';

const REPAIRED: PolicyDocument = { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_ticket_read'] } }] };
const isRoot = process.getuid?.() === 0;

describe('a repair over an unreadable policy file', () => {
  it('leaves a file of mode 0600 the service reads back as valid', async () => {
    const root = await makeProject(await tempFolder(), 'demo', policyText(undefined, { QA: ['idea_memory_write'] }));
    const file = policyPathOf(root);
    await chmod(file, 0o000);
    const project = await Project.open('demo', root);
    // root reads any file whatever its mode: the project is invalid only for other users.
    if (!isRoot) expect(project.state.policy.status).toBe('invalid');
    const state = await project.write(() => REPAIRED, { allowInvalid: true });
    expect(state.policy.status).toBe('ok');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    await project.reload();
    expect(project.state.policy.status).toBe('ok');
  });

  it('keeps a readable mode as it is (0640 stays 0640, 0444 gains owner write)', async () => {
    const root = await makeProject(await tempFolder(), 'demo', policyText(undefined, {}));
    const file = policyPathOf(root);
    const project = await Project.open('demo', root);
    await chmod(file, 0o640);
    await project.write(() => REPAIRED, { allowInvalid: true });
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    await chmod(file, 0o444);
    await project.write(() => REPAIRED, { allowInvalid: true });
    expect((await stat(file)).mode & 0o777).toBe(0o644);
  });
});
