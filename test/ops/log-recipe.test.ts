/**
 * docs/operations.md's log recipe, run as written: its `npm start ... | tee pdp.log` line in bash
 * (the real npm, the panel's build at start, the service on a free port), a denied decision, then
 * its `jq` lines on the file. Every line the service put on stdout must be a JSON object.
 */
import { execFile, spawn } from 'node:child_process';
import { cp, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort, REPO_ROOT, START_DEADLINE_MS } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { waitFor } from '../support/wait.js';

const run = promisify(execFile);

/** The `sh` block of docs/operations.md that holds the `tee pdp.log` recipe, one command a line. */
async function recipe(): Promise<string[]> {
  const doc = await readFile(path.join(REPO_ROOT, 'docs', 'operations.md'), 'utf8');
  const block = [...doc.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '').find((text) => text.includes('tee pdp.log'));
  return (block ?? '').split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
}

/** The environment of the nested npm: no PDP_* or npm_* variable of this run. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('PDP_') && !key.toLowerCase().startsWith('npm_')) env[key] = value;
  }
  return { ...env, ...extra };
}

describe('docs/operations.md: npm start | tee pdp.log; jq … pdp.log', () => {
  it('puts JSON lines only on stdout, and the jq lines find the denied decision', async () => {
    const [start, ...queries] = await recipe();
    expect(start).toMatch(/^npm start .*\| tee pdp\.log$/);
    expect(queries.length).toBeGreaterThan(0);
    const folder = await tempFolder('log-recipe-');
    await cp(path.join(REPO_ROOT, 'examples', 'projects'), path.join(folder, 'projects'), { recursive: true });
    const log = path.join(folder, 'pdp.log');
    const port = await freePort();
    const child = spawn('bash', ['-c', (start ?? '').replaceAll('pdp.log', log)], {
      cwd: REPO_ROOT,
      env: childEnv({
        PDP_PORT: String(port),
        PDP_STATE_DIR: path.join(folder, 'state'),
        PDP_PROJECTS_ROOT: path.join(folder, 'projects'),
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: npm, tsx and tee are stopped together.
      detached: true,
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.resume();
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await waitFor(
        async () => (await readFile(log, 'utf8').catch(() => '')).includes('listening at'),
        'the service listening',
        START_DEADLINE_MS,
      );
      const answer = await fetch(`http://127.0.0.1:${String(port)}/decide`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' }),
      });
      const decision = (await answer.json()) as { decisionId: string; allow: boolean };
      expect(decision.allow).toBe(false);
      await waitFor(async () => (await readFile(log, 'utf8')).includes(decision.decisionId), 'the decision logged');
    } finally {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      await exited;
    }

    const lines = stdout.split('\n').filter((line) => line !== '');
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    expect(await readFile(log, 'utf8')).toBe(stdout);

    const outputs: string[] = [];
    for (const query of queries) {
      const { stdout: found } = await run('bash', ['-c', query.replaceAll('pdp.log', log)], { cwd: folder, timeout: 30_000 });
      outputs.push(found);
    }
    // The first query lists the denials: the one made above is there.
    expect(outputs[0]).toContain('"tool":"idea_memory_write"');
    expect(outputs[0]).toContain('"reason":"not_in_allowlist"');
  }, 120_000);
});
