/**
 * The service process logs a promise rejection nobody handled (pino, `error`) instead of dying
 * silently or crashing: the real `server/main.ts`, with a rejection injected once it is ready.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, freePort } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { elapse, waitFor } from '../support/wait.js';

const INJECTED = `data:text/javascript,${encodeURIComponent("process.on('SIGUSR2', () => { Promise.reject(new Error('injected rejection')); });")}`;

describe('an unhandled rejection in the service', () => {
  it('is logged at error level, and the service goes on answering', async () => {
    const folder = await tempFolder();
    const port = await freePort();
    const env: NodeJS.ProcessEnv = {};
    for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PDP_')) env[key] = value;
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', INJECTED, 'server/main.ts'], {
      cwd: REPO_ROOT,
      env: {
        ...env,
        XDG_STATE_HOME: folder,
        PDP_PORT: String(port),
        PDP_PROJECTS_ROOT: folder,
        PDP_SOCKET: 'off',
        PDP_ADMIN_TOKEN: 'a'.repeat(20),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    let exited: number | null | undefined;
    child.once('exit', (code) => (exited = code));
    const ready = async (): Promise<boolean> => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200;
    try {
      await waitFor(ready, 'ready', 45_000, 25);
      child.kill('SIGUSR2');
      await waitFor(() => output.includes('injected rejection') || exited !== undefined, 'the rejection', 45_000, 25);
      // Without a handler Node exits with code 1 here.
      await elapse(200);
      expect(exited).toBeUndefined();
      expect(await ready()).toBe(true);
      const line = output
        .split('\n')
        .filter((text) => text.startsWith('{'))
        .map((text) => JSON.parse(text) as { level: number; msg: string; err?: { message?: string } })
        .find((entry) => entry.err?.message === 'injected rejection');
      expect(line).toMatchObject({ level: 50, msg: 'unhandled promise rejection' });
    } finally {
      child.kill('SIGTERM');
    }
  }, 60_000);
});
