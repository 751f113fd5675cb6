/**
 * `idea-mcp-proxy` and a server started through a launcher (as `npx` or `uv run` start one): the
 * proxy's SIGTERM reaches the launcher and the server it started, its own process group, both
 * when the host closes stdin and the server keeps running, and when the proxy itself is told to
 * stop. The grandchild never outlives the proxy, nor crashes on a closed pipe.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { INITIALIZE, PYTHON_SERVER, spawnProxyFor } from '../support/proxy-process.js';

const suite = suiteScope();
let pdp: RealPdp;
let launcher: string;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
  const folder = await mkdtemp(path.join(tmpdir(), 'proxy-group-'));
  suite.onTestFinished(() => rm(folder, { recursive: true, force: true }));
  // A launcher as npx is one: it starts the server as its own child and dies of SIGTERM without passing it on.
  launcher = path.join(folder, 'launcher.mjs');
  await writeFile(
    launcher,
    [
      "import { spawn } from 'node:child_process';",
      'const server = spawn(process.argv[2], process.argv.slice(3), { stdio: "inherit" });',
      'process.stderr.write(`grandchild ${server.pid}\\n`);',
      'server.on("exit", (code) => process.exit(code ?? 1));',
    ].join('\n'),
  );
});

/** Whether `pid` runs: a zombie left for a parent that does not reap counts as ended. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}

describe.skipIf(process.platform === 'win32')('idea-mcp-proxy and a server behind a launcher', () => {
  it.each([
    ['the host closes stdin', 'stdin'],
    ['the proxy gets SIGTERM', 'sigterm'],
  ])('ends the launcher and the server it started when %s', { timeout: 60_000 }, async (_what, how) => {
    const proxy = spawnProxyFor(suite, pdp, 'QA', [], { FIXTURE_IGNORE_EOF: '1' }, [process.execPath, launcher, 'python3', PYTHON_SERVER]);
    proxy.send(INITIALIZE);
    await proxy.answerTo(1);
    const pid = Number(/grandchild (\d+)/u.exec(proxy.stderr())?.[1]);
    expect(pid).toBeGreaterThan(0);
    suite.onTestFinished(() => {
      if (running(pid)) process.kill(pid, 'SIGKILL');
      return Promise.resolve();
    });
    expect(running(pid)).toBe(true);
    if (how === 'stdin') proxy.child.stdin.end();
    else proxy.child.kill('SIGTERM');
    const exited = await proxy.exited;
    // The server's own end, as the proxy reports it: killed by SIGTERM.
    expect(exited).toEqual({ code: 128 + 15, signal: null });
    await waitFor(() => !running(pid), 'the grandchild to end', 10_000);
    expect(proxy.stderr()).not.toMatch(/EPIPE|Traceback/u);
  });
});
