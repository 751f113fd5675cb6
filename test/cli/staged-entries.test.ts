/**
 * `--staged` judges what the service loads: an index entry on a policy path that is a symbolic link
 * (`git show` prints the link's text, the service reads its target) or a submodule, and a `.ideai`
 * that is a link in the index or in the working tree, are refused with `staged_link` and exit 1.
 * Real git repositories in temp folders, `idea-pdp` run from the sources.
 */
import { mkdir, rename, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runProcess, runSourceCli } from '../support/cli.js';
import { POLICY_FILE, policyText } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';

const TEST_FILE = 'mcp-tool-permissions.test.json';
/** The attack's link text: itself a valid policy that grants nothing beyond the defaults. */
const LINK_TEXT = '{"version":1}';
const GRANTS_STOP = policyText(['idea_ticket_read', 'idea_stop_agent']);
const CASES = `${JSON.stringify({ version: 1, cases: [{ requester: 'QA', tool: 'idea_stop_agent', expect: 'deny' }] })}\n`;

async function git(repo: string, ...args: string[]): Promise<string> {
  const run = await runProcess('git', args, repo, 60_000, cleanEnv());
  expect(run, `git ${args.join(' ')}`).toMatchObject({ code: 0 });
  return run.stdout;
}

/** A git repository whose files are written by `place`, then all staged. */
async function repoWith(place: (repo: string) => Promise<void>): Promise<string> {
  const repo = path.join(await tempFolder(), 'repo');
  await mkdir(repo);
  await git(repo, 'init', '-q');
  await place(repo);
  await git(repo, 'add', '-A');
  return repo;
}

/** `.ideai/mcp-tool-permissions.json` a link to a file of `.ideai` named like a harmless policy, which grants idea_stop_agent. */
async function linkedPolicy(repo: string): Promise<void> {
  await mkdir(path.join(repo, '.ideai'));
  await writeFile(path.join(repo, '.ideai', LINK_TEXT), GRANTS_STOP);
  await symlink(LINK_TEXT, path.join(repo, '.ideai', POLICY_FILE));
  await writeFile(path.join(repo, '.ideai', TEST_FILE), CASES);
}

const STOP = ['decide', '.', '--requester', 'QA', '--tool', 'idea_stop_agent', '--format', 'line'];

describe('idea-pdp --staged refuses index entries the service would not load as they read', () => {
  it('a policy file staged as a link whose text is a valid policy: check and test fail, naming the link', async () => {
    const repo = await repoWith(linkedPolicy);
    expect(await git(repo, 'ls-files', '-s', `.ideai/${POLICY_FILE}`)).toMatch(/^120000 /);
    // What the service loads (the working tree, through the link): idea_stop_agent allowed.
    expect((await runSourceCli(STOP, repo)).stdout).toBe('allow allowed project-default\n');

    const check = await runSourceCli(['check', '--strict', '--require', '--staged'], repo);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`.ideai/${POLICY_FILE}:1:1: error staged_link: staged as a symbolic link (git mode 120000)`);
    expect(check.stdout).toContain('invalid: 1 error');

    const tested = await runSourceCli(['test', '--staged'], repo);
    expect(tested.code).toBe(1);
    expect(tested.stdout).toContain('error staged_link');
    expect(tested.stdout).toContain('0 passed, 1 failed');
    const json = JSON.parse((await runSourceCli(['check', '--staged', '--json'], repo)).stdout) as { valid: boolean; errors: number };
    expect(json).toMatchObject({ valid: false, errors: 1 });
  }, 120_000);

  it.each([
    ['a link to a sibling folder', 'config'],
    ['a link to a folder, with a slash', 'config/'],
  ])(
    '.ideai staged as %s: refused, never the canonical defaults',
    async (_name, target) => {
      const repo = await repoWith(async (root) => {
        await mkdir(path.join(root, 'config'));
        await writeFile(path.join(root, 'config', POLICY_FILE), GRANTS_STOP);
        await writeFile(path.join(root, 'config', TEST_FILE), CASES);
        await symlink(target, path.join(root, '.ideai'));
      });
      expect(await git(repo, 'ls-files', '-s', '.ideai')).toMatch(/^120000 .*\t\.ideai\n$/);
      for (const args of [
        ['check', '--staged'],
        ['check', '--strict', '--require', '--staged'],
        ['test', '--staged'],
      ]) {
        const run = await runSourceCli(args, repo);
        expect({ args, code: run.code }).toEqual({ args, code: 1 });
        expect(run.stdout).toContain('error staged_link: .ideai is staged as a symbolic link (git mode 120000)');
        expect(run.stderr).not.toContain('canonical');
      }
    },
    60_000,
  );

  it('the service reads a `.ideai` linked to `config/` as invalid: every call denied', async () => {
    const repo = await repoWith(async (root) => {
      await mkdir(path.join(root, 'config'));
      await writeFile(path.join(root, 'config', POLICY_FILE), GRANTS_STOP);
      await symlink('config/', path.join(root, '.ideai'));
    });
    // `decide` reads the folder with the service's reader (server/projects/file-read.ts).
    expect((await runSourceCli(STOP, repo)).stdout).toBe('deny policy_invalid none\n');
    const check = await runSourceCli(['check'], repo);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('error unreadable: a symbolic link: .ideai → "config/"');
  }, 120_000);

  it('.ideai a link in the working tree while the index holds a folder: refused', async () => {
    const repo = await repoWith(async (root) => {
      await mkdir(path.join(root, '.ideai'));
      await writeFile(path.join(root, '.ideai', POLICY_FILE), policyText(['idea_ticket_read']));
    });
    await rename(path.join(repo, '.ideai'), path.join(repo, 'config'));
    await symlink('config', path.join(repo, '.ideai'));
    // The index still holds .ideai/mcp-tool-permissions.json; the service reads config/ through the link.
    expect(await git(repo, 'ls-files', '.ideai')).toBe(`.ideai/${POLICY_FILE}\n`);
    const check = await runSourceCli(['check', '--staged'], repo);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('error staged_link: .ideai is a symbolic link in the working tree');
  }, 120_000);

  it('submodules (gitlinks) on the policy path or as .ideai: refused', async () => {
    const repo = await repoWith(async (root) => {
      await mkdir(path.join(root, '.ideai'));
      await writeFile(path.join(root, '.ideai', TEST_FILE), CASES);
    });
    const commit = 'a'.repeat(40);
    await git(repo, 'update-index', '--add', '--cacheinfo', `160000,${commit},.ideai/${POLICY_FILE}`);
    const check = await runSourceCli(['check', '--staged'], repo);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`.ideai/${POLICY_FILE}:1:1: error staged_link: staged as a submodule (git mode 160000)`);
    expect((await runSourceCli(['test', '--staged'], repo)).code).toBe(1);

    await git(repo, 'rm', '-q', '-r', '--cached', '.ideai');
    await git(repo, 'update-index', '--add', '--cacheinfo', `160000,${commit},.ideai`);
    const whole = await runSourceCli(['check', '--staged'], repo);
    expect(whole.code).toBe(1);
    expect(whole.stdout).toContain('error staged_link: .ideai is staged as a submodule (git mode 160000)');
  }, 120_000);

  it('the agents file and the test file staged as links: errors, exit 1', async () => {
    const repo = await repoWith(async (root) => {
      await mkdir(path.join(root, '.ideai'));
      await writeFile(path.join(root, '.ideai', POLICY_FILE), policyText(['idea_ticket_read']));
      await writeFile(path.join(root, 'agents.json'), '[{ "id": "QA" }]');
      await symlink('../agents.json', path.join(root, '.ideai', 'agents.json'));
      await writeFile(path.join(root, 'cases.json'), CASES);
      await symlink('../cases.json', path.join(root, '.ideai', TEST_FILE));
    });
    const check = await runSourceCli(['check', '--staged'], repo);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('.ideai/agents.json:1:1: error staged_link: staged as a symbolic link');
    const tested = await runSourceCli(['test', '--staged'], repo);
    expect(tested.code).toBe(1);
    expect(tested.stdout).toContain(`.ideai/${TEST_FILE}:1:1: error staged_link: staged as a symbolic link`);
    expect(tested.stdout).toContain('0 passed, 1 failed');
  }, 120_000);

  it('a policy path staged as a folder reads as the service reads it: unreadable', async () => {
    const repo = await repoWith(async (root) => {
      await mkdir(path.join(root, '.ideai', POLICY_FILE), { recursive: true });
      await writeFile(path.join(root, '.ideai', POLICY_FILE, 'x.json'), '{}');
    });
    const check = await runSourceCli(['check', '--staged'], repo);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`.ideai/${POLICY_FILE}:1:1: error unreadable: staged as a folder, not a file`);
  }, 120_000);

  it('regular files are judged as before', async () => {
    const repo = await repoWith(async (root) => {
      await mkdir(path.join(root, '.ideai'));
      await writeFile(path.join(root, '.ideai', POLICY_FILE), policyText(['idea_ticket_read']));
      await writeFile(path.join(root, '.ideai', TEST_FILE), CASES);
    });
    expect(await runSourceCli(['check', '--strict', '--require', '--staged'], repo)).toMatchObject({ code: 0 });
    expect(await runSourceCli(['test', '--strict', '--require', '--staged'], repo)).toMatchObject({ code: 0 });
  }, 120_000);
});
