/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`) against a
 * Streamable HTTP URL with `--requirements <revision>`: exactly the scenarios that revision
 * requires, at its wire, plus those it runs without scoring. Reads each scenario's checks. The
 * suite needs Node >= 22: it runs on `CONFORMANCE_NODE` when set, else on the Node running vitest.
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

/** The revisions the suite has a frozen requirement set for, each run at its own wire. */
export const REVISIONS = ['2025-11-25', '2026-07-28'] as const;
export type Revision = (typeof REVISIONS)[number];

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}
/**
 * Each scenario's checks. A scenario that wrote no `checks.json` (the 2026-07-28 extension
 * scenarios skip themselves without one) is there with no checks: ran, judged nothing.
 */
export type Results = Map<string, Check[]>;

/** Runs the suite's requirement set of `revision` against `url`. */
export async function runSuite(url: string, revision: Revision): Promise<Results> {
  const output = await mkdtemp(path.join(os.tmpdir(), 'conformance-'));
  try {
    return await readResults(url, revision, output);
  } finally {
    await rm(output, { recursive: true, force: true });
  }
}

async function readResults(url: string, revision: Revision, output: string): Promise<Results> {
  const args = [SUITE_CLI, 'server', '--requirements', revision, '--url', url, '-o', output];
  const child = spawn(NODE, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (log += chunk.toString('utf8')));
  await new Promise((resolve) => child.once('exit', resolve));
  const results: Results = new Map();
  for (const folder of await readdir(output)) {
    const scenario = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(folder)?.[1];
    if (scenario === undefined) continue;
    const files = await readdir(path.join(output, folder));
    const checks = files.includes('checks.json')
      ? (JSON.parse(await readFile(path.join(output, folder, 'checks.json'), 'utf8')) as Check[])
      : [];
    results.set(scenario, checks);
  }
  if (results.size === 0) throw new Error(`the conformance suite produced no results:\n${log}`);
  return results;
}

/** One line per check: `scenario check STATUS`, sorted. */
export const summary = (results: Results) =>
  [...results].flatMap(([scenario, checks]) => checks.map((check) => `${scenario} ${check.id} ${check.status}`)).sort();

/** The checks that failed, with the suite's message: what a failed test prints. */
export const failures = (results: Results) =>
  [...results]
    .flatMap(([scenario, checks]) =>
      checks.filter((check) => check.status === 'FAILURE').map((check) => `${scenario} ${check.id}: ${check.errorMessage ?? ''}`),
    )
    .sort();

/** Throws unless the suite's Node is 22 or later. */
export function requireSuiteNode(): void {
  const major = Number(/^v(\d+)/.exec(execFileSync(NODE, ['--version']).toString())?.[1]);
  if (major < 22) throw new Error(`the conformance suite needs Node >= 22: set CONFORMANCE_NODE to such a binary (this one is ${NODE})`);
}
