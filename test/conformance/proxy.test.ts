/**
 * The official MCP conformance suite through `idea-mcp-proxy`: the reference server of this folder
 * over stdio, reached through a Streamable HTTP bridge (the suite speaks HTTP only), once directly
 * and once with the proxy in between, deciding with a service that allows everything. The proxy
 * must change nothing the suite sees: the same checks with the same results, every tool call decided.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/service-process.js';
import { startAllowAllPdp, type AllowAllPdp } from './allow-all-pdp.js';
import { EVERYTHING_TOOLS } from './everything-tools.js';
import { startStdioBridge, type StdioCommand } from './stdio-bridge.js';
import { requireSuiteNode, runSuite, summary, SUITE_VERSION } from './suite-runner.js';

/**
 * The server and the proxy bundled once into plain JavaScript: the suite opens a session (two
 * processes with the proxy) per scenario and more, and tsx's start-up per process made the run
 * outlast five minutes here.
 */
async function bundle(entry: string, folder: string): Promise<string> {
  const outfile = path.join(folder, `${path.basename(entry, '.ts')}.mjs`);
  await build({
    entryPoints: [path.join(REPO_ROOT, entry)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    logLevel: 'error',
    // The SDK's CommonJS dependencies call require().
    banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  });
  return outfile;
}

function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('PDP_')) env[key] = value;
  return env;
}

async function runThroughBridge(stdio: StdioCommand) {
  const bridge = await startStdioBridge(stdio);
  try {
    return await runSuite(bridge.url);
  } finally {
    await bridge.close();
  }
}

describe(`MCP conformance suite ${SUITE_VERSION} through idea-mcp-proxy (stdio reference server, allow-all service)`, () => {
  let pdp: AllowAllPdp;
  let folder: string;
  let server: string;
  let proxy: string;
  beforeAll(async () => {
    requireSuiteNode();
    pdp = await startAllowAllPdp();
    folder = await mkdtemp(path.join(os.tmpdir(), 'conformance-proxy-'));
    server = await bundle('test/conformance/everything-stdio.ts', folder);
    proxy = await bundle('client/proxy/cli.ts', folder);
  });
  afterAll(async () => {
    await pdp.close();
    await rm(folder, { recursive: true, force: true });
  });

  // Two full runs of the suite: about 65 s directly and 190 s through the proxy on this loaded 2-core machine.
  it('passes exactly the checks the same server passes without the proxy, and decides every tool call', { timeout: 900_000 }, async () => {
    const direct = await runThroughBridge({ command: process.execPath, args: [server], env: cleanEnv(), cwd: folder });
    const proxied = await runThroughBridge({
      command: process.execPath,
      args: [proxy, '--pdp', pdp.url, '--project', 'demo', '--agent', 'Conformance', '--', process.execPath, server],
      env: cleanEnv(),
      cwd: folder,
    });
    expect(direct.size).toBeGreaterThanOrEqual(30);
    expect(summary(proxied)).toEqual(summary(direct));
    // Every tool the suite calls went through the proxy's decision (it only lists json_schema_2020_12_tool).
    expect([...new Set(pdp.decided)].sort()).toEqual(
      EVERYTHING_TOOLS.map((tool) => tool.name)
        .filter((name) => name !== 'json_schema_2020_12_tool')
        .sort(),
    );
  });
});
