/**
 * A `.ideai` that is a link leading outside the project folder makes the project
 * invalid (every call denied with policy_invalid), and no write follows it, even one that races a
 * swap of `.ideai` for such a link. A link within the project is followed as before.
 */
import fsSync from 'node:fs';
import { mkdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withAgentOverride } from '../../server/domain/edit.js';
import { POLICY_FILE, policyText } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, startRegistry, timeUntil } from '../support/folder-registry.js';
import { stringMatching } from '../support/typed.js';

afterEach(() => vi.restoreAllMocks());

const GRANT = policyText(undefined, { QA: ['idea_memory_write'] });

/** `<folder>/outside/` holding a policy file that grants QA a write tool, outside every project. */
async function outsideFolder(folder: string): Promise<{ dir: string; file: string }> {
  const dir = path.join(folder, 'outside');
  await mkdir(dir);
  await writeFile(path.join(dir, POLICY_FILE), GRANT);
  return { dir, file: path.join(dir, POLICY_FILE) };
}

describe('a .ideai link', () => {
  it('leading outside the project makes it invalid; no write follows it', async () => {
    const folder = await tempFolder();
    const projects = path.join(folder, 'projects');
    const root = await makeProject(projects, 'demo', null);
    const outside = await outsideFolder(folder);
    await rename(path.join(root, '.ideai'), path.join(root, '.ideai-old'));
    await symlink(outside.dir, path.join(root, '.ideai'));
    const before = await stat(outside.file);
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_write')).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_read')).toMatchObject({ allow: false, reason: 'policy_invalid' });
    const { policy } = registry.get('demo')?.state ?? {};
    expect(policy?.status === 'invalid' && policy.error.message).toMatch(/outside the project/);
    const project = registry.get('demo');
    if (project === undefined) throw new Error('no project');
    await expect(project.write((current) => withAgentOverride(current.document, 'QA', []))).rejects.toMatchObject({
      code: 'policy_invalid',
    });
    await expect(project.write(() => ({ version: 1, agents: [] }), { allowInvalid: true })).rejects.toMatchObject({
      code: 'write_failed',
      message: stringMatching(/outside the project/),
    });
    expect(await readFile(outside.file, 'utf8')).toBe(GRANT);
    expect((await stat(outside.file)).mtimeMs).toBe(before.mtimeMs);
  });

  it('swapped in at run time is seen by the watcher', async () => {
    const folder = await tempFolder();
    const projects = path.join(folder, 'projects');
    const root = await makeProject(projects, 'demo', policyText([], { QA: ['idea_ticket_read'] }));
    const outside = await outsideFolder(folder);
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_read').allow).toBe(true);
    await symlink(outside.dir, path.join(root, '.ideai-link'));
    await rename(path.join(root, '.ideai'), path.join(root, '.ideai-old'));
    await rename(path.join(root, '.ideai-link'), path.join(root, '.ideai'));
    await timeUntil(() => decideWith(registry, 'demo', 'QA', 'idea_ticket_read').reason === 'policy_invalid', 'invalid');
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_write').allow).toBe(false);
  });

  it('swapped in while a write is under way is not written through', async () => {
    const folder = await tempFolder();
    const projects = path.join(folder, 'projects');
    const root = await makeProject(projects, 'demo', policyText([], { QA: ['idea_ticket_read'] }));
    const outside = await outsideFolder(folder);
    const { registry } = await startRegistry({ projectsRoot: projects });
    const project = registry.get('demo');
    if (project === undefined) throw new Error('no project');
    // Right before the write moves the file aside (its compare-and-swap starts), .ideai becomes a link outside.
    const realRename = fsSync.renameSync.bind(fsSync);
    let swapped = false;
    vi.spyOn(fsSync, 'renameSync').mockImplementation((from, to) => {
      if (!swapped && String(from).endsWith(POLICY_FILE)) {
        swapped = true;
        fsSync.symlinkSync(outside.dir, path.join(root, '.ideai-link'));
        realRename(path.join(root, '.ideai'), path.join(root, '.ideai-old'));
        realRename(path.join(root, '.ideai-link'), path.join(root, '.ideai'));
      }
      realRename(from, to);
    });
    await expect(project.write((current) => withAgentOverride(current.document, 'QA', ['idea_ask_agent']))).rejects.toMatchObject({
      code: stringMatching(/^(write_failed|policy_invalid)$/),
    });
    expect(swapped).toBe(true);
    expect(await readFile(outside.file, 'utf8')).toBe(GRANT);
    expect(decideWith(registry, 'demo', 'QA', 'idea_ask_agent').allow).toBe(false);
  });

  it('within the project is followed, for reads and writes', async () => {
    const folder = await tempFolder();
    const projects = path.join(folder, 'projects');
    const root = path.join(projects, 'demo');
    // A folder directly in the project folder: deeper ones are refused (test/projects/linked-policy.test.ts).
    await mkdir(path.join(root, 'ideai-config'), { recursive: true });
    await writeFile(path.join(root, 'ideai-config', POLICY_FILE), GRANT);
    await symlink('ideai-config', path.join(root, '.ideai'));
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(decideWith(registry, 'demo', 'QA', 'idea_memory_write').allow).toBe(true);
    await registry.get('demo')?.write((current) => withAgentOverride(current.document, 'QA', ['idea_ask_agent']));
    expect(await readFile(path.join(root, 'ideai-config', POLICY_FILE), 'utf8')).toContain('idea_ask_agent');
    expect(decideWith(registry, 'demo', 'QA', 'idea_ask_agent').allow).toBe(true);
  });
});
