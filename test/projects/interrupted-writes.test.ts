/**
 * docs/design.md#writes-a-compare-and-swap-on-the-file: what a write killed half-way leaves in `.ideai` never changes a
 * decision, and is cleaned up. A write killed inside its compare-and-swap leaves the policy file
 * under an aside name and no file at its path: it is put back, the built-in defaults never apply.
 * Temp files of dead writes are removed once old enough; nobody else's files are touched.
 */
import { readdir, rename, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Project } from '../../server/projects/project.js';
import { STALE_TEMP_MS, removeStaleTemps } from '../../server/projects/recovery.js';
import { POLICY_FILE, policyText, readText } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, makeProject, policyPathOf, startRegistry, timeUntil } from '../support/folder-registry.js';

// Nothing for anyone: the built-in read-only set would allow idea_ticket_read.
const LOCKED = policyText([]);
/** The name a compare-and-swap of process 4242 gives the file it moves aside. */
const ASIDE = `.${POLICY_FILE}.4242.0123456789ab.aside`;

describe('a write killed inside its compare-and-swap', () => {
  it('has its file moved aside put back when the project is opened', async () => {
    const root = await makeProject(await tempFolder(), 'demo', LOCKED);
    const file = policyPathOf(root);
    await rename(file, path.join(path.dirname(file), ASIDE));
    const project = await Project.open('demo', root);
    expect(project.state.policy).toMatchObject({ status: 'ok', fileExists: true });
    expect(await readText(file)).toBe(LOCKED);
    expect(await readdir(path.dirname(file))).toEqual([POLICY_FILE]);
  });

  it('has it put back when the watcher hears it, and decisions never fall back to the built-in set', async () => {
    const folder = await tempFolder();
    const root = await makeProject(path.join(folder, 'projects'), 'demo', LOCKED);
    const file = policyPathOf(root);
    const { registry } = await startRegistry({ projectsRoot: path.join(folder, 'projects') });
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_read').allow).toBe(false);
    // Another process's write, killed right after moving the file aside.
    await rename(file, path.join(path.dirname(file), ASIDE));
    let allowed = 0;
    await timeUntil(async () => {
      if (decideWith(registry, 'demo', 'QA', 'idea_ticket_read').allow) allowed++;
      return (await readText(file)) === LOCKED && (await readdir(path.dirname(file))).length === 1;
    }, 'the file put back');
    for (let sample = 0; sample < 200; sample++) {
      if (decideWith(registry, 'demo', 'QA', 'idea_ticket_read').allow) allowed++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(allowed).toBe(0);
    expect(registry.get('demo')?.state.policy).toMatchObject({ status: 'ok', fileExists: true });
  });
});

describe('leftover temp files', () => {
  it('removes only this service’s own names, and only once old enough', async () => {
    const root = await makeProject(await tempFolder(), 'demo', LOCKED);
    const ideai = path.dirname(policyPathOf(root));
    const own = {
      old: `.${POLICY_FILE}.4242.aaaaaaaaaaaa.tmp`,
      young: `.${POLICY_FILE}.4242.bbbbbbbbbbbb.tmp`,
      aside: `.${POLICY_FILE}.4242.cccccccccccc.aside`,
    };
    const others = [
      `.${POLICY_FILE}.swp`,
      `${POLICY_FILE}~`,
      `.${POLICY_FILE}.4242.tmp`,
      `.${POLICY_FILE}.x.aaaaaaaaaaaa.tmp`,
      '.agents.json.4242.aaaaaaaaaaaa.tmp',
      '.editor-1.tmp',
    ];
    for (const name of [...Object.values(own), ...others]) await writeFile(path.join(ideai, name), 'leftover');
    const longAgo = new Date(Date.now() - STALE_TEMP_MS - 60_000);
    for (const name of [own.old, ...others]) await utimes(path.join(ideai, name), longAgo, longAgo);

    const first = await removeStaleTemps(ideai, POLICY_FILE);
    expect(first.removed.map((file) => path.basename(file))).toEqual([own.old]);
    // The young temp file and the aside file (its rename just now) are checked again later.
    expect(first.nextCheckMs).toBeGreaterThan(0);
    expect(first.nextCheckMs).toBeLessThanOrEqual(STALE_TEMP_MS + 10);

    const later = await removeStaleTemps(ideai, POLICY_FILE, Date.now() + STALE_TEMP_MS + 1_000);
    expect(later.removed.map((file) => path.basename(file)).sort()).toEqual([own.aside, own.young].sort());
    expect(later.nextCheckMs).toBeUndefined();
    expect((await readdir(ideai)).sort()).toEqual([POLICY_FILE, ...others].sort());
  });

  it('are removed when a project is opened, and the file is untouched', async () => {
    const root = await makeProject(await tempFolder(), 'demo', LOCKED);
    const ideai = path.dirname(policyPathOf(root));
    const stale = `.${POLICY_FILE}.4242.dddddddddddd.tmp`;
    await writeFile(path.join(ideai, stale), policyText(['idea_memory_write']));
    const longAgo = new Date(Date.now() - STALE_TEMP_MS - 60_000);
    await utimes(path.join(ideai, stale), longAgo, longAgo);
    const project = await Project.open('demo', root);
    expect(await readdir(ideai)).toEqual([POLICY_FILE]);
    expect(project.state.policy).toMatchObject({ status: 'ok' });
    expect(await readText(policyPathOf(root))).toBe(LOCKED);
  });
});
