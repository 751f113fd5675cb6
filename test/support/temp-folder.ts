/** Temp folders that live as long as the test that made them. */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { onTestFinished } from 'vitest';

/**
 * A fresh folder under the system temp folder, removed once the test has finished (after its
 * `afterEach` hooks, so whatever they close no longer uses it). Call it inside a test.
 */
export async function tempFolder(prefix = 'pdp-test-'): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), prefix));
  onTestFinished(() => rm(folder, { recursive: true, force: true }));
  return folder;
}
