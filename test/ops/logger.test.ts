/**
 * The service's log destination: every line is out when the call that logged it returns (a flood
 * is written as it comes, nothing queues in memory), a destination that keeps failing neither
 * throws at the caller nor holds more than its bound, and no line is lost when the process exits.
 */
import { spawn } from 'node:child_process';
import { openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, droppedLogLines, logWriteErrors, synchronousDestination } from '../../server/ops/logger.js';
import { defined } from '../support/typed.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsx = path.join(repo, 'node_modules', '.bin', 'tsx');
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

async function tempFile(): Promise<string> {
  const folder = await mkdtemp(path.join(os.tmpdir(), 'pdp-log-'));
  folders.push(folder);
  const file = path.join(folder, 'out.log');
  writeFileSync(file, '');
  return file;
}

type Destination = ReturnType<typeof synchronousDestination> & { end(): void };
const denial = (index: number) => ({
  decisionId: `d-${index}`,
  project: 'demo',
  requester: 'agent-1',
  tool: 'idea_memory_write',
  reason: 'not_in_allowlist',
});

describe('log destination', () => {
  it('writes a flood of lines as it comes: each line is in the file when its call returns', async () => {
    const file = await tempFile();
    const destination = synchronousDestination(openSync(file, 'a')) as Destination;
    const logger = createLogger({ level: 'info' }, destination);
    let expectedBytes = 0;
    for (let index = 0; index < 20_000; index++) {
      logger.info(denial(index), 'decision denied');
      if (index % 997 === 0) {
        const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
        expect(lines).toHaveLength(index + 1);
        expect(JSON.parse(defined(lines[index], `line ${index}`))).toMatchObject({ decisionId: `d-${index}`, msg: 'decision denied' });
        expectedBytes = statSync(file).size;
      }
    }
    destination.end();
    expect(statSync(file).size).toBeGreaterThan(expectedBytes);
    expect(readFileSync(file, 'utf8').trimEnd().split('\n')).toHaveLength(20_000);
  });

  it('never throws at the caller when writing fails, and keeps at most its bound of lines', async () => {
    const file = await tempFile();
    // Opened read-only: every write fails (EBADF), as a full disk or a revoked descriptor would.
    const destination = synchronousDestination(openSync(file, 'r'), 64 * 1024) as Destination;
    const logger = createLogger({ level: 'info' }, destination);
    const errors = logWriteErrors();
    const dropped = droppedLogLines();
    for (let index = 0; index < 5_000; index++)
      expect(() => {
        logger.info(denial(index), 'decision denied');
      }).not.toThrow();
    expect(logWriteErrors()).toBeGreaterThan(errors);
    // ~150 bytes a line: at most ~430 of them fit in 64 KiB, the rest were dropped and counted.
    expect(droppedLogLines() - dropped).toBeGreaterThan(5_000 - (64 * 1024) / 100);
    expect(statSync(file).size).toBe(0);
  });

  it('loses no line when the process exits right after logging', async () => {
    const script = [
      `import { createLogger } from ${JSON.stringify(path.join(repo, 'server', 'ops', 'logger.ts'))};`,
      'const logger = createLogger({ level: "info" });',
      'for (let index = 0; index < 3; index++) logger.info({ decisionId: `d-${index}` }, "decision denied");',
      'process.exit(0);',
    ].join('\n');
    const child = spawn(tsx, ['--eval', script], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '' },
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(0);
    const ids = stdout
      .trimEnd()
      .split('\n')
      .map((line) => (JSON.parse(line) as { decisionId: string }).decisionId);
    expect(ids).toEqual(['d-0', 'd-1', 'd-2']);
  });
});
