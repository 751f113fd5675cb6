/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`, every scenario:
 * `--suite all`) against a Streamable HTTP URL and reads each scenario's checks. The suite needs
 * Node >= 22 (`fs.globSync`): it runs on `CONFORMANCE_NODE` when set, else on the Node running vitest.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from '../support/service-process.js';

export const SUITE_CLI = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
export const NODE = process.env.CONFORMANCE_NODE ?? process.execPath;
export const SUITE_VERSION = (
  JSON.parse(
    execFileSync(NODE, [
      '-p',
      `JSON.stringify(require(${JSON.stringify(path.join(path.dirname(SUITE_CLI), '..', 'package.json'))}))`,
    ]).toString(),
  ) as { version: string }
).version;

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}
export type Results = Map<string, Check[]>;

/** Runs the whole suite against `url`; answers each scenario's checks (from the suite's own `checks.json`). */
export async function runSuite(url: string): Promise<Results> {
  const output = await mkdtemp(path.join(os.tmpdir(), 'conformance-'));
  try {
    return await readResults(url, output);
  } finally {
    await rm(output, { recursive: true, force: true });
  }
}

async function readResults(url: string, output: string): Promise<Results> {
  const child = spawn(NODE, [SUITE_CLI, 'server', '--suite', 'all', '--url', url, '-o', output], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  await new Promise((resolve) => child.once('exit', resolve));
  const results: Results = new Map();
  for (const folder of await readdir(output)) {
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(folder)?.[1];
    if (scenario === undefined) continue;
    const checks = JSON.parse(await readFile(path.join(output, folder, 'checks.json'), 'utf8')) as Check[];
    results.set(scenario, checks);
  }
  if (results.size === 0) throw new Error(`the conformance suite produced no results:\n${log}`);
  return results;
}

export const summary = (results: Results) =>
  [...results].flatMap(([scenario, checks]) => checks.map((check) => `${scenario} ${check.id} ${check.status}`)).sort();
export const failedScenarios = (results: Results) =>
  [...results]
    .filter(([, checks]) => checks.some((check) => check.status === 'FAILURE'))
    .map(([scenario]) => scenario)
    .sort();

/** Throws unless the suite's Node is 22 or later. */
export function requireSuiteNode(): void {
  const major = Number(/^v(\d+)/.exec(execFileSync(NODE, ['--version']).toString())?.[1]);
  if (major < 22) throw new Error(`the conformance suite needs Node >= 22: set CONFORMANCE_NODE to such a binary (this one is ${NODE})`);
}
