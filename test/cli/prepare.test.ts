/**
 * scripts/prepare.mjs (docs/policy-as-code.md#install): npm runs `prepare` after `npm ci` in a clone and
 * when the package is installed from git or a folder; it builds only in the second case, told apart by
 * INIT_CWD, and says what is missing rather than failing on a clone without its devDependencies.
 */
import { copyFile, mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, runProcess } from '../support/cli.js';
import { REPO_ROOT } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';

/** A package folder holding only package.json and scripts/prepare.mjs: no node_modules, nothing built. */
async function bareClone(): Promise<string> {
  const clone = path.join(await tempFolder('pdp-prepare-'), 'clone');
  await mkdir(path.join(clone, 'scripts'), { recursive: true });
  await copyFile(path.join(REPO_ROOT, 'scripts', 'prepare.mjs'), path.join(clone, 'scripts', 'prepare.mjs'));
  await writeFile(path.join(clone, 'package.json'), '{ "name": "idea-mcp-tool-permissions", "type": "module" }\n');
  return clone;
}

const prepare = (clone: string, initCwd: string) =>
  runProcess(process.execPath, ['scripts/prepare.mjs'], clone, 60_000, { ...cleanEnv(), INIT_CWD: initCwd });

describe('prepare', () => {
  it("does nothing when npm was started in the package's own folder (npm ci, npm pack in a clone)", async () => {
    const clone = await bareClone();
    expect(await prepare(clone, clone)).toEqual({ code: 0, stdout: '', stderr: '' });
    // The same folder through a link (npm's INIT_CWD is the shell's path, the script's the real one).
    const link = path.join(path.dirname(clone), 'linked');
    await symlink(clone, link);
    expect(await prepare(clone, link)).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('builds when npm was started elsewhere (an install from git or a folder), and says what a clone lacks', async () => {
    const clone = await bareClone();
    const installing = await tempFolder('pdp-team-');
    const run = await prepare(clone, installing);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      `idea-mcp-tool-permissions: building ${clone} needs its devDependencies: run \`npm ci\` there first, then install it again\n`,
    );
  });
});
