/**
 * The service's log destination: a flood of denial lines is written as it comes (nothing queued in
 * memory for as long as the flood lasts), and every line is out when the call that logged it
 * returns, even when the process exits right after.
 */
import { spawn } from 'node:child_process';
import { openSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, synchronousDestination } from '../../server/logger.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsx = path.join(repo, 'node_modules', '.bin', 'tsx');
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

/** A logger on a fresh file; `end()` closes the file. */
async function logToFile() {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'pdp-log-'));
  folders.push(folder);
  const file = path.join(folder, 'out.log');
  const destination = synchronousDestination(openSync(file, 'a')) as ReturnType<typeof synchronousDestination> & { end(): void };
  return { file, logger: createLogger({ level: 'info' }, destination), end: () => destination.end() };
}

const denial = (index: number) => ({ decisionId: `d-${index}`, project: 'demo', requester: 'agent-1', tool: 'idea_memory_write', reason: 'not_in_allowlist' });

describe('log destination', () => {
  it('writes a flood of lines while it happens, every line out when its call returns', async () => {
    const { file, logger, end } = await logToFile();
    const lines = 20_000;
    // One synchronous burst, no turn of the event loop: an asynchronous destination would still
    // hold nearly all of it in memory here.
    for (let index = 0; index < lines; index++) {
      logger.info(denial(index), 'decision denied');
      if (index === 0) expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ decisionId: 'd-0', msg: 'decision denied' });
    }
    const written = statSync(file).size;
    const all = readFileSync(file, 'utf8').trimEnd().split('\n');
    end();
    expect(all).toHaveLength(lines);
    expect(written).toBe(Buffer.byteLength(all.join('\n')) + 1);
    expect(JSON.parse(all[lines - 1]!)).toMatchObject({ decisionId: `d-${lines - 1}`, msg: 'decision denied' });
  });

  it('loses no line when the process exits right after logging', async () => {
    const script = [
      `import { createLogger } from ${JSON.stringify(path.join(repo, 'server', 'logger.ts'))};`,
      'const logger = createLogger({ level: "info" });',
      'for (let index = 0; index < 3; index++) logger.info({ decisionId: `d-${index}` }, "decision denied");',
      'process.exit(0);',
    ].join('\n');
    const child = spawn(tsx, ['--eval', script], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '' } });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    const ids = stdout.trimEnd().split('\n').map((line) => (JSON.parse(line) as { decisionId: string }).decisionId);
    expect(ids).toEqual(['d-0', 'd-1', 'd-2']);
  });
});
