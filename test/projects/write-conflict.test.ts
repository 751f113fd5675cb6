/**
 * docs/design.md#writes-a-compare-and-swap-on-the-file: an API write never replaces content it did not read. An editor that saves
 * atomically while a write is under way (after the write read the file, before its rename) keeps
 * its save: the write re-reads and applies its edit again, or is refused (`revision_mismatch`
 * with If-Match, `write_conflict` when the file keeps changing). Real files, real renames.
 */
import fsSync, { writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { withAgentOverride } from '../../server/domain/edit.js';
import { Project } from '../../server/projects/project.js';
import { POLICY_FILE, policyText, saveAtomically, saveAtomicallyOnThisThread } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { makeProject, policyPathOf } from '../support/folder-registry.js';
import { elapse } from '../support/wait.js';

afterEach(() => vi.restoreAllMocks());

const GRANT_EVIL = policyText(undefined, { Evil: ['idea_run_in_background'] });
const REVOKED = '{"version":1,"agents":[]}';

async function agentsIn(file: string): Promise<string[]> {
  return (JSON.parse(await readFile(file, 'utf8')) as { agents?: { agentId: string }[] }).agents?.map((agent) => agent.agentId) ?? [];
}

const errorCode = (error: unknown): string => (error as { code?: string }).code ?? String(error);

let editorSaves = 0;

/** An editor's atomic save, done synchronously so that it can run inside a write's own synchronous steps. */
function saveNow(file: string, content: string): void {
  const temp = `${file}.editor-${editorSaves++}`;
  writeFileSync(temp, content);
  realRenameSync(temp, file);
}

const realRenameSync = fsSync.renameSync.bind(fsSync);
const realLinkSync = fsSync.linkSync.bind(fsSync);

/** Makes the editor save `content` each time the write is about to move the file aside (its compare-and-swap starts). */
function editorSavesBeforeRename(file: string, content: string, times: number): { saved: () => number } {
  let saved = 0;
  vi.spyOn(fsSync, 'renameSync').mockImplementation((from, to) => {
    if (from === file && saved < times) {
      saved++;
      saveNow(file, content);
    }
    realRenameSync(from, to);
  });
  return { saved: () => saved };
}

/** Makes the editor save `content` while the write has the name empty: after the move aside, before the link of the new file. */
function editorSavesDuringSwap(file: string, content: string, times: number): { saved: () => number } {
  let saved = 0;
  vi.spyOn(fsSync, 'linkSync').mockImplementation((existing, created) => {
    if (created === file && String(existing).endsWith('.tmp') && saved < times) {
      saved++;
      saveNow(file, content);
    }
    realLinkSync(existing, created);
  });
  return { saved: () => saved };
}

describe('a write racing an editor', () => {
  it('applies its edit again to a revocation saved right before its rename (the revocation stays)', async () => {
    const root = await makeProject(await tempFolder(), 'demo', GRANT_EVIL);
    const file = policyPathOf(root);
    const project = await Project.open('demo', root);
    const editor = editorSavesBeforeRename(file, REVOKED, 1);
    const state = await project.write((policy) => withAgentOverride(policy.document, 'Other', ['idea_ticket_read']));
    expect(editor.saved()).toBe(1);
    expect(await agentsIn(file)).toEqual(['Other']);
    expect(state.policy.status === 'ok' && state.policy.overrides.has('Evil')).toBe(false);
  });

  it('answers revision_mismatch with If-Match, and keeps the editor’s file', async () => {
    const root = await makeProject(await tempFolder(), 'demo', GRANT_EVIL);
    const file = policyPathOf(root);
    const project = await Project.open('demo', root);
    const read = project.state.policy.revision;
    editorSavesBeforeRename(file, REVOKED, 1);
    const write = project.write((policy) => withAgentOverride(policy.document, 'Other', ['idea_ticket_read']), { ifMatch: [read] });
    await expect(write).rejects.toMatchObject({ code: 'revision_mismatch' });
    expect(await readFile(file, 'utf8')).toBe(REVOKED);
    expect(project.state.policy.status === 'ok' && project.state.policy.overrides.has('Evil')).toBe(false);
  });

  it('keeps a revocation saved while the write has moved the file aside, and applies its edit to it', async () => {
    const root = await makeProject(await tempFolder(), 'demo', GRANT_EVIL);
    const file = policyPathOf(root);
    const project = await Project.open('demo', root);
    const editor = editorSavesDuringSwap(file, REVOKED, 1);
    const state = await project.write((policy) => withAgentOverride(policy.document, 'Other', ['idea_ticket_read']));
    expect(editor.saved()).toBe(1);
    expect(await agentsIn(file)).toEqual(['Other']);
    expect(state.policy.status === 'ok' && state.policy.overrides.has('Evil')).toBe(false);
    expect((await readdir(path.dirname(file))).sort()).toEqual([POLICY_FILE]);
  });

  it('answers revision_mismatch with If-Match to a save in the swap, and keeps the editor’s file', async () => {
    const root = await makeProject(await tempFolder(), 'demo', GRANT_EVIL);
    const file = policyPathOf(root);
    const project = await Project.open('demo', root);
    const read = project.state.policy.revision;
    editorSavesDuringSwap(file, REVOKED, 1);
    const write = project.write((policy) => withAgentOverride(policy.document, 'Other', ['idea_ticket_read']), { ifMatch: [read] });
    await expect(write).rejects.toMatchObject({ code: 'revision_mismatch' });
    expect(await readFile(file, 'utf8')).toBe(REVOKED);
    expect((await readdir(path.dirname(file))).sort()).toEqual([POLICY_FILE]);
  });

  it('is refused with write_conflict when the file changes before every attempt', async () => {
    const root = await makeProject(await tempFolder(), 'demo', GRANT_EVIL);
    const file = policyPathOf(root);
    const project = await Project.open('demo', root);
    const editor = editorSavesBeforeRename(file, REVOKED, 100);
    const write = project.write((policy) => withAgentOverride(policy.document, 'Other', ['idea_ticket_read']));
    await expect(write).rejects.toMatchObject({ code: 'write_conflict' });
    expect(editor.saved()).toBeGreaterThan(1);
    expect(await readFile(file, 'utf8')).toBe(REVOKED);
  });

  for (const withIfMatch of [false, true]) {
    it(`never undoes a revocation saved (i % 8) ms into PUT agents/Other<i>, 16 rounds${withIfMatch ? ', with If-Match' : ''}`, async () => {
      const root = await makeProject(await tempFolder(), 'demo', null);
      const file = policyPathOf(root);
      const project = await Project.open('demo', root);
      const outcomes: string[] = [];
      for (let round = 0; round < 16; round++) {
        await saveAtomically(file, GRANT_EVIL);
        await project.reload();
        const options = withIfMatch ? { ifMatch: [project.state.policy.revision] } : {};
        const write = project
          .write((policy) => withAgentOverride(policy.document, `Other${round}`, ['idea_ticket_read']), options)
          .then(() => 'written', errorCode);
        await elapse(round % 8); // the editor's save lands (round % 8) ms into the write (the scenario)
        await saveAtomicallyOnThisThread(file, REVOKED);
        outcomes.push(await write);
        expect(await agentsIn(file), `round ${round}`).not.toContain('Evil');
        await project.reload();
        const { policy } = project.state;
        expect(policy.status === 'ok' && policy.overrides.has('Evil'), `round ${round}`).toBe(false);
      }
      expect(
        outcomes.every((outcome) => ['written', 'revision_mismatch', 'write_conflict'].includes(outcome)),
        outcomes.join(),
      ).toBe(true);
    });
  }
});
