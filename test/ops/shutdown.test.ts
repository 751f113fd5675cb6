/**
 * Graceful shutdown through the real entry point: on SIGTERM the service stops accepting, lets an
 * in-flight request finish (here a /decide whose body is still being sent), closes the watcher and
 * exits 0.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const tsx = path.join(repo, 'node_modules', '.bin', 'tsx');
const folders: string[] = [];
afterEach(async () => {
  await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
});

async function until<T>(probe: () => T | undefined, what: string, deadlineMs = 20_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('graceful shutdown', () => {
  it('finishes an in-flight request after SIGTERM, refuses new connections, and exits 0', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'pdp-shutdown-'));
    folders.push(root);
    await mkdir(path.join(root, 'demo'));
    const child = spawn(tsx, [path.join(repo, 'server', 'main.ts')], {
      cwd: repo,
      env: {
        PATH: process.env['PATH'] ?? '',
        PDP_PORT: '0',
        PDP_PROJECTS_ROOT: root,
        PDP_ADMIN_TOKEN: 'shutdown-admin',
        PDP_STATE_DIR: root,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const port = Number(await until(() => /listening at http:\/\/127\.0\.0\.1:(\d+)/.exec(output)?.[1], 'the service to listen'));

      const body = JSON.stringify({ project: 'demo', requester: 'QA', tool: 'idea_ticket_read' });
      const socket = net.connect(port, '127.0.0.1');
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      let answer = '';
      socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
      // Headers and half of the body: the request is in flight when SIGTERM arrives.
      socket.write(
        `POST /decide HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      );
      socket.write(body.slice(0, 10));
      child.kill('SIGTERM');
      await until(() => (output.includes('shutting down') ? true : undefined), 'the shutdown to start');

      const refused = await new Promise<boolean>((resolve) => {
        const probe = net.connect(port, '127.0.0.1');
        probe.once('connect', () => {
          probe.destroy();
          resolve(false);
        });
        probe.once('error', () => resolve(true));
      });
      expect(refused).toBe(true);

      socket.write(body.slice(10));
      await until(() => (answer.includes('"allow"') ? true : undefined), 'the in-flight answer');
      expect(answer).toMatch(/^HTTP\/1\.1 200/);
      expect(answer).toContain('"allow":true');
      expect(await exited).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
