/**
 * `idea-pdp test` reads its test file as the service reads a policy file: a regular file of at most
 * 4 MiB, opened non-blocking, so a link to a device or a pipe fails at once instead of hanging CI.
 */
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../support/cli.js';
import { REPO_ROOT } from '../support/service-process.js';
import { POLICY_FILE, makeFifo } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';

const TEST_FILE = 'mcp-tool-permissions.test.json';
const CASES = `${JSON.stringify({ version: 1, cases: [{ requester: 'QA', tool: 'idea_ticket_read', expect: 'allow' }] })}\n`;

/** A project folder with a policy; its test file is made by `place`. */
async function projectWith(place: (testFile: string, folder: string) => Promise<void>): Promise<string> {
  const folder = await tempFolder();
  const ideai = path.join(folder, 'p', '.ideai');
  await mkdir(ideai, { recursive: true });
  await writeFile(path.join(ideai, POLICY_FILE), '{ "version": 1 }\n');
  await place(path.join(ideai, TEST_FILE), folder);
  return path.join(folder, 'p');
}

/** `idea-pdp test DIR` from the sources, its stdin a pipe that stays open (what `/dev/stdin` then reads). */
async function runTest(dir: string): Promise<{ code: number; stderr: string; ms: number }> {
  const started = performance.now();
  const run = await runProcess(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'server', 'cli', 'idea-pdp.ts'), 'test', dir],
    REPO_ROOT,
    30_000,
  );
  return { code: run.code, stderr: run.stderr, ms: performance.now() - started };
}

describe('idea-pdp test reads its test file', () => {
  it.each([
    ['a link to /dev/zero', (file: string) => symlink('/dev/zero', file), 'not a regular file'],
    ['a link to /dev/stdin (the socket Node gives a child)', (file: string) => symlink('/dev/stdin', file), 'not a regular file'],
    ['a FIFO no one writes to', (file: string) => makeFifo(file), 'not a regular file'],
    ['a folder', (file: string) => mkdir(file), 'not a regular file'],
    ['a regular file over 4 MiB', (file: string) => writeFile(file, ' '.repeat(4 * 1024 * 1024 + 1)), 'larger than 4 MiB'],
  ])('refuses %s: exit 1 at once with a clear message', async (_name, place, message) => {
    const run = await runTest(await projectWith(place));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    expect(run.stderr).toContain(TEST_FILE);
    // Far below the 30 s the child is given: it never read the device or waited on the pipe.
    expect(run.ms).toBeLessThan(20_000);
  });

  it('follows a link to a regular file', async () => {
    const dir = await projectWith(async (file, folder) => {
      await writeFile(path.join(folder, 'cases.json'), CASES);
      await symlink(path.join(folder, 'cases.json'), file);
    });
    expect(await runTest(dir)).toMatchObject({ code: 0 });
  });
});
