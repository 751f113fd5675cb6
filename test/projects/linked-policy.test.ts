/**
 * docs/design.md#links: every layout of the policy file the service accepts hears a revocation
 * at once (the watcher, not the 2 s rescan: these registries have no rescan), and a layout whose
 * changes cannot all be heard is refused (`policy_invalid`, naming the link). Real files, real
 * links, the real watcher. How fast each layout is heard: `npm run bench -- --sections=links`.
 */
import { link, mkdir, open, readFile, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSourceCli } from '../support/cli.js';
import { POLICY_FILE, policyText, saveAtomically } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';
import { decideWith, policyPathOf, startRegistry, timeUntil } from '../support/folder-registry.js';

const GRANT = policyText(['idea_memory_write']);
const REVOKE = policyText([]);

/** Rewrites `file` in place (same inode): truncate, then write, as an editor without atomic saves does. */
async function editInPlace(file: string, text: string): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    await handle.truncate(0);
    await handle.write(text, 0);
  } finally {
    await handle.close();
  }
}

async function projectsWith(
  layout: (root: string, ideai: string) => Promise<void>,
): Promise<{ projects: string; root: string; ideai: string }> {
  const projects = path.join(await tempFolder(), 'projects');
  const root = path.join(projects, 'demo');
  const ideai = path.join(root, '.ideai');
  await mkdir(root, { recursive: true });
  await layout(root, ideai);
  return { projects, root, ideai };
}

const memoryWrite = (registry: Awaited<ReturnType<typeof startRegistry>>['registry']) =>
  decideWith(registry, 'demo', 'QA', 'idea_memory_write');

/** Starts the registry on the layout (no rescan: only the watcher can hear), checks the grant, revokes with `revoke`, and waits until decisions deny. */
async function revocationHeard(name: string, projects: string, revoke: () => Promise<void>): Promise<void> {
  const { registry } = await startRegistry({ projectsRoot: projects });
  expect(memoryWrite(registry)).toMatchObject({ allow: true });
  await revoke();
  await timeUntil(() => !memoryWrite(registry).allow, `${name}: revocation heard`, 5_000);
  expect(memoryWrite(registry).reason).toBe('not_in_allowlist');
}

describe('a policy file with a second name (hard link)', () => {
  /** `demo` whose policy file is a second name of `<folder>/policy.json`, which grants. */
  async function hardLinked(): Promise<{ projects: string; root: string; other: string }> {
    const other = path.join(await tempFolder(), 'policy.json');
    await writeFile(other, GRANT);
    const { projects, root } = await projectsWith(async (_root, ideai) => {
      await mkdir(ideai);
      await link(other, path.join(ideai, POLICY_FILE));
    });
    return { projects, root, other };
  }

  const policyError = (registry: Awaited<ReturnType<typeof startRegistry>>['registry']): string => {
    const policy = registry.get('demo')?.state.policy;
    return policy?.status === 'invalid' ? policy.error.message : '';
  };

  it('is refused with policy_invalid saying why and how to fix it, and idea-pdp check agrees', async () => {
    const { projects, root } = await hardLinked();
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(memoryWrite(registry)).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_read')).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(policyError(registry)).toContain('hard link');
    expect(policyError(registry)).toContain('2 names');
    expect(policyError(registry)).toContain('replace the whole document');
    const check = await runSourceCli(['check', root], root);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('hard link');
  });

  it('made while the file is served, is refused at once (the watcher, no rescan)', async () => {
    const { projects, root } = await projectsWith(async (_project, ideai) => {
      await mkdir(ideai);
      await writeFile(path.join(ideai, POLICY_FILE), GRANT);
    });
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(memoryWrite(registry)).toMatchObject({ allow: true });
    await link(policyPathOf(root), path.join(await tempFolder(), 'second-name.json'));
    await timeUntil(() => !memoryWrite(registry).allow, 'the second name heard', 5_000);
    expect(memoryWrite(registry).reason).toBe('policy_invalid');
  });

  it('stays refused after a rename-style save through the other name drops the link count to 1, until the file itself is rewritten', async () => {
    const { projects, root, other } = await hardLinked();
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(memoryWrite(registry)).toMatchObject({ reason: 'policy_invalid' });
    // The editor saves the revocation through the other name: that name now holds another file.
    await writeFile(`${other}.new`, REVOKE);
    await rename(`${other}.new`, other);
    await timeUntil(() => policyError(registry).includes('not been rewritten'), 'the drop to one name heard', 5_000);
    expect(memoryWrite(registry)).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_read')).toMatchObject({ allow: false, reason: 'policy_invalid' });
    // The same bytes written again in place are still the refused content.
    await editInPlace(policyPathOf(root), GRANT);
    await registry.get('demo')?.reload();
    expect(memoryWrite(registry)).toMatchObject({ allow: false, reason: 'policy_invalid' });
    // New content in the file itself comes into force.
    await editInPlace(policyPathOf(root), REVOKE);
    await timeUntil(() => memoryWrite(registry).reason === 'not_in_allowlist', 'the rewrite heard', 5_000);
  });

  it('stays refused when its project leaves and comes back (folder moved away and back): the file was not rewritten', async () => {
    const { projects, root, other } = await hardLinked();
    const { registry } = await startRegistry({ projectsRoot: projects });
    await writeFile(`${other}.new`, REVOKE);
    await rename(`${other}.new`, other);
    await timeUntil(() => policyError(registry).includes('not been rewritten'), 'the drop to one name heard', 5_000);
    await rename(root, `${root}.away`);
    await timeUntil(() => registry.get('demo') === undefined, 'the project removed', 5_000);
    await rename(`${root}.away`, root);
    await timeUntil(() => registry.get('demo') !== undefined, 'the project back', 5_000);
    expect(memoryWrite(registry)).toMatchObject({ allow: false, reason: 'policy_invalid' });
  });

  it('stays refused until replaced: a file renamed over it comes into force', async () => {
    const { projects, root } = await hardLinked();
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(memoryWrite(registry)).toMatchObject({ reason: 'policy_invalid' });
    await saveAtomically(policyPathOf(root), GRANT);
    await timeUntil(() => memoryWrite(registry).allow, 'the replacement heard', 5_000);
  });

  it('is repaired by the whole-document write, which leaves the other name untouched; other writes refuse it', async () => {
    const { projects, other } = await hardLinked();
    const { registry } = await startRegistry({ projectsRoot: projects });
    const project = registry.get('demo');
    await expect(project?.write(() => ({ version: 1, projectDefault: { allowedTools: [] } }))).rejects.toMatchObject({
      code: 'policy_invalid',
    });
    await project?.write(() => ({ version: 1, projectDefault: { allowedTools: [] } }), { allowInvalid: true });
    expect(memoryWrite(registry)).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    expect(await readFile(other, 'utf8')).toBe(GRANT);
  });

  it("does not count a write's own leftover temp name in .ideai as a second name", async () => {
    const { projects, ideai } = await projectsWith(async (_project, folder) => {
      await mkdir(folder);
      await writeFile(path.join(folder, POLICY_FILE), GRANT);
      await link(path.join(folder, POLICY_FILE), path.join(folder, `.${POLICY_FILE}.4242.0123456789ab.tmp`));
    });
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(memoryWrite(registry)).toMatchObject({ allow: true });
    // Any other second name in .ideai counts.
    await link(path.join(ideai, POLICY_FILE), path.join(ideai, 'backup.json'));
    await timeUntil(() => !memoryWrite(registry).allow, 'the second name heard', 5_000);
  });
});

describe('a symlinked policy file', () => {
  it('to a file in .ideai itself is followed: edited in place, or the link swapped', async () => {
    const { projects, ideai } = await projectsWith(async (_root, folder) => {
      await mkdir(folder);
      await writeFile(path.join(folder, 'v1.json'), GRANT);
      await symlink('v1.json', path.join(folder, POLICY_FILE));
    });
    await revocationHeard('symlink to a file in .ideai, edited in place', projects, () => editInPlace(path.join(ideai, 'v1.json'), REVOKE));
  });

  it('to a file in .ideai itself, swapped to another one (ln -s && mv -T)', async () => {
    const { projects, ideai } = await projectsWith(async (_root, folder) => {
      await mkdir(folder);
      await writeFile(path.join(folder, 'v1.json'), GRANT);
      await writeFile(path.join(folder, 'v2.json'), REVOKE);
      await symlink('v1.json', path.join(folder, POLICY_FILE));
    });
    await revocationHeard('symlink in .ideai swapped', projects, async () => {
      await symlink('v2.json', path.join(ideai, 'next'));
      await rename(path.join(ideai, 'next'), path.join(ideai, POLICY_FILE));
    });
  });

  it.each([
    ['to a file elsewhere in the project', (root: string) => path.join(root, 'config', 'policy.json')],
    ['to a file outside the project', (root: string) => path.join(path.dirname(path.dirname(root)), 'outside', 'policy.json')],
  ])('%s is refused with policy_invalid naming the link', async (_name, targetOf) => {
    const { projects, root } = await projectsWith(async (project, ideai) => {
      await mkdir(ideai);
      const target = targetOf(project);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, GRANT);
      await symlink(target, path.join(ideai, POLICY_FILE));
    });
    const { registry } = await startRegistry({ projectsRoot: projects });
    const policy = registry.get('demo')?.state.policy;
    expect(policy?.status).toBe('invalid');
    if (policy?.status === 'invalid') {
      expect(policy.error.message).toContain('symbolic link');
      expect(policy.error.message).toContain(targetOf(root));
    }
    expect(memoryWrite(registry)).toMatchObject({ allow: false, reason: 'policy_invalid' });
    expect(decideWith(registry, 'demo', 'QA', 'idea_ticket_read')).toMatchObject({ allow: false, reason: 'policy_invalid' });
  });

  it('that a repair replaces with a regular file, the link’s target untouched', async () => {
    const { projects, root, ideai } = await projectsWith(async (project, folder) => {
      await mkdir(folder);
      await mkdir(path.join(project, 'config'));
      await writeFile(path.join(project, 'config', 'policy.json'), GRANT);
      await symlink(path.join(project, 'config', 'policy.json'), path.join(folder, POLICY_FILE));
    });
    const { registry } = await startRegistry({ projectsRoot: projects });
    await registry.get('demo')?.write(() => ({ version: 1, projectDefault: { allowedTools: [] } }), { allowInvalid: true });
    expect(registry.get('demo')?.state.policy.status).toBe('ok');
    const { lstat, readFile } = await import('node:fs/promises');
    expect((await lstat(path.join(ideai, POLICY_FILE))).isSymbolicLink()).toBe(false);
    expect(await readFile(path.join(root, 'config', 'policy.json'), 'utf8')).toBe(GRANT);
  });
});

describe('a symlinked .ideai folder', () => {
  it('to a folder directly in the project is followed: edited in place, or saved atomically', async () => {
    const { projects, root } = await projectsWith(async (project) => {
      await mkdir(path.join(project, 'ideai-config'));
      await writeFile(path.join(project, 'ideai-config', POLICY_FILE), GRANT);
      await symlink('ideai-config', path.join(project, '.ideai'));
    });
    const file = path.join(root, 'ideai-config', POLICY_FILE);
    await revocationHeard('symlinked .ideai, edited in place', projects, () => editInPlace(file, REVOKE));
  });

  it('to a folder directly in the project, that folder replaced whole', async () => {
    const { projects, root } = await projectsWith(async (project) => {
      await mkdir(path.join(project, 'ideai-config'));
      await writeFile(path.join(project, 'ideai-config', POLICY_FILE), GRANT);
      await symlink('ideai-config', path.join(project, '.ideai'));
    });
    await revocationHeard('symlinked .ideai, its folder replaced', projects, async () => {
      await mkdir(path.join(root, 'next'));
      await writeFile(path.join(root, 'next', POLICY_FILE), REVOKE);
      await rename(path.join(root, 'ideai-config'), path.join(root, 'old'));
      await rename(path.join(root, 'next'), path.join(root, 'ideai-config'));
    });
  });

  it('to a folder directly in the project, that folder replaced again and again: each replacement heard', async () => {
    const { projects, root } = await projectsWith(async (project) => {
      await mkdir(path.join(project, 'ideai-config'));
      await writeFile(path.join(project, 'ideai-config', POLICY_FILE), GRANT);
      await symlink('ideai-config', path.join(project, '.ideai'));
    });
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(memoryWrite(registry)).toMatchObject({ allow: true });
    for (let trial = 0; trial < 16; trial++) {
      const granted = trial % 2 === 1;
      const next = path.join(root, `next-${String(trial)}`);
      await mkdir(next);
      await writeFile(path.join(next, POLICY_FILE), granted ? GRANT : REVOKE);
      await rename(path.join(root, 'ideai-config'), path.join(root, `old-${String(trial)}`));
      await rename(next, path.join(root, 'ideai-config'));
      await timeUntil(() => memoryWrite(registry).allow === granted, `replacement ${String(trial)} heard`, 2_000);
    }
  });

  it('to a folder deeper in the project is refused (its parents are not watched)', async () => {
    const { projects } = await projectsWith(async (project) => {
      await mkdir(path.join(project, 'config', 'ideai'), { recursive: true });
      await writeFile(path.join(project, 'config', 'ideai', POLICY_FILE), GRANT);
      await symlink(path.join('config', 'ideai'), path.join(project, '.ideai'));
    });
    const { registry } = await startRegistry({ projectsRoot: projects });
    expect(memoryWrite(registry)).toMatchObject({ allow: false, reason: 'policy_invalid' });
    const policy = registry.get('demo')?.state.policy;
    if (policy?.status === 'invalid') expect(policy.error.message).toContain('config/ideai');
  });
});
