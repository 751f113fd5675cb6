/**
 * `npm run build:standalone` as a team uses its file (docs/policy-as-code.md#one-file-no-registry): copied
 * alone into a folder with no node_modules above it and run with `node`, it answers check, test, decide,
 * preview (offline and against a served project) and fmt exactly as the command run from the sources:
 * same exit code, same stdout, same stderr.
 */
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, suiteScope } from '../support/app.js';
import { runProcess, runSourceCli, SOURCE_CLI_COMMAND, type CliRun } from '../support/cli.js';
import { bareEnv, buildStandalone, nodeModulesAbove, runStandalone } from '../support/standalone.js';
import { tempFolder } from '../support/temp-folder.js';

const suite = suiteScope();
let built: string;

beforeAll(async () => {
  built = await buildStandalone();
}, 300_000);

/** A folder `repo/` holding the file under tools/ and the projects of `files` (paths under repo/). */
async function teamRepository(files: Record<string, string>): Promise<{ repo: string; file: string }> {
  const repo = path.join(await tempFolder('pdp-standalone-'), 'repo');
  const file = path.join(repo, 'tools', 'idea-pdp-standalone.mjs');
  await mkdir(path.dirname(file), { recursive: true });
  await copyFile(built, file);
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(repo, name)), { recursive: true });
    await writeFile(path.join(repo, name), text);
  }
  return { repo, file };
}

const WEB_POLICY = `{
  "version": 1,
  "projectDefault": { "allowedTools": ["idea_ticket_read", "idea_memory_read", "idea_ticket_read"] },
  "agents": [
    { "agentId": "QA", "policy": { "allowedTools": ["idea_ticket_updte", "idea_ask_agent"],
      "conditions": { "idea_ask_agent": { "agentId": { "in": "QA" }, "agentID": { "In": ["x"] } } } } },
    { "agentId": "Devv", "policy": { "allowedTools": ["idea_memory_read"] } }
  ]
}
`;
const API_POLICY = `{"version":1,"projectDefault":{"allowedTools":["idea_memory_read","idea_ticket_read"],"askTools":["idea_ticket_create"]},
"agents":[{"agentId":"QA","policy":{"allowedTools":["idea_memory_write","idea_ask_agent","idea_memory_read"],
"conditions":{"idea_ask_agent":{"agentId":{"in":["Dev"]}}}}}]}
`;
const API_TESTS = JSON.stringify(
  {
    version: 1,
    cases: [
      { requester: 'QA', tool: 'idea_memory_write', expect: 'allow' },
      { requester: 'Dev', tool: 'idea_ticket_create', expect: 'ask' },
      { requester: 'QA', tool: 'idea_ask_agent', arguments: { agentId: 'Main' }, expect: 'allow', name: 'fails: QA asks Main' },
      { requester: 'Dev', tool: 'idea_memory_read', expect: 'alow' },
      { requester: 'Qa', tool: 'idea_memroy_read', expect: 'allow' },
    ],
  },
  null,
  2,
);
const AGENTS = '[{ "id": "QA" }, { "id": "Dev" }]\n';

/** A policy over 64 KiB, which the service and the command compile in a worker thread first. */
function bigPolicy(): string {
  const agents = Array.from({ length: 900 }, (_, index) => ({
    agentId: `agent${index}`,
    policy: { allowedTools: ['idea_memory_read', index === 450 ? 'idea_memroy_write' : 'idea_ticket_read'] },
  }));
  return JSON.stringify({ version: 1, agents }, null, 2);
}

const FIXTURES = {
  'apps/web/.ideai/mcp-tool-permissions.json': WEB_POLICY,
  'apps/web/.ideai/agents.json': AGENTS,
  'apps/web/.ideai/mcp-tools-permissions.json': '{}\n',
  'services/api/.ideai/mcp-tool-permissions.json': API_POLICY,
  'services/api/.ideai/agents.json': AGENTS,
  'services/api/.ideai/mcp-tool-permissions.test.json': API_TESTS,
  'old.json': '{ "version": 1, "projectDefault": { "allowedTools": ["idea_memory_read"] } }\n',
};

/** Runs `args` both ways in `cwd` (with `env` when given) and expects the same answer; resolves to the standalone file's. */
async function same(file: string, args: string[], cwd: string, stdin?: string, env?: NodeJS.ProcessEnv): Promise<CliRun> {
  const [one, source] = await Promise.all([
    runStandalone(file, args, cwd, stdin, env),
    env === undefined
      ? runSourceCli(args, cwd, stdin)
      : runProcess(process.execPath, [...SOURCE_CLI_COMMAND.slice(1), ...args], cwd, 60_000, env, stdin),
  ]);
  expect(one, `idea-pdp ${args.join(' ')}`).toEqual(source);
  return one;
}

describe('dist/idea-pdp-standalone.mjs, alone in a folder', () => {
  it('needs nothing but Node: one file of node: imports, a shebang, no node_modules to resolve from', async () => {
    const text = await readFile(built, 'utf8');
    expect(text.startsWith('#!/usr/bin/env node\n')).toBe(true);
    const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s*)"([^"]+)"/g)].map((match) => match[1] ?? '');
    expect(specifiers.length).toBeGreaterThan(3);
    expect(specifiers.filter((specifier) => !isBuiltin(specifier))).toEqual([]);
    expect(text).not.toMatch(/fastify|pino/i);

    const { repo, file } = await teamRepository({ 'p/.ideai/mcp-tool-permissions.json': API_POLICY });
    expect(await nodeModulesAbove(repo)).toEqual([]);
    // Run as a program too (the mode is kept by the copy), as a hook may call it.
    expect(await runProcess(file, ['check', 'p'], repo, 60_000, bareEnv())).toEqual({
      code: 0,
      stdout: 'valid: 0 errors, 0 warnings in 1 project\n',
      stderr: '',
    });
    expect(await runStandalone(file, ['serve'], repo)).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'idea-pdp: serve is not in the standalone file (check, test, decide, preview, fmt): run the service from the package\n' +
        'Run `idea-pdp --help` for usage.\n',
    });
  }, 60_000);

  it('compiles a policy over 64 KiB in its own worker thread, as the service does', async () => {
    // Not compared with the sources here: from them, the worker boots tsx, which can take longer than
    // the 10 s a worker is given on a loaded 2-core machine.
    const { repo, file } = await teamRepository({ 'big/.ideai/mcp-tool-permissions.json': bigPolicy() });
    const run = await runStandalone(file, ['check', '--strict', 'big'], repo);
    expect(run).toMatchObject({ code: 1, stderr: '' });
    expect(run.stdout.split('\n')).toEqual([
      'big/.ideai/mcp-tool-permissions.json:4059:11: error unknown_tool: unknown tool "idea_memroy_write" at /agents/450/policy/allowedTools/1: not in the IdeA MCP tool catalog, it grants nothing; did you mean idea_memory_write?',
      'invalid: 1 error, 0 warnings in 1 project',
      '',
    ]);
  }, 60_000);

  it('check, test, decide, preview, fmt --check, help and usage errors: the same exit codes and lines as from the sources', async () => {
    const { repo, file } = await teamRepository(FIXTURES);
    const check = await same(file, ['check', '.'], repo);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(
      'apps/web/.ideai/mcp-tool-permissions.json:5:53: warning unknown_tool: unknown tool "idea_ticket_updte"',
    );
    expect(check.stdout).toContain('did you mean idea_ticket_update?');

    const runs: [string[], string?][] = [
      [['check', '--strict', '--json', '.']],
      [['check', '--require', '--strict', 'services/api']],
      [['check', '--require', 'tools']],
      [['test', '.']],
      [['test', '--strict', '--format', 'tap', '.']],
      [['test', '--format', 'junit', '--coverage', 'services/api']],
      [['test', '--json', '-v', '--coverage', 'services/api']],
      [['test', '--coverage-min', '50', '--run', 'QA', 'services/api']],
      [['decide', 'services/api', '--requester', 'Qa', '--tool', 'idea_memroy_write', '--format', 'line']],
      [['decide', 'services/api', '--requester', 'QA', '--tool', 'idea_ask_agent', '--arguments', '{"agentId":"Main"}']],
      [['preview', 'old.json', 'services/api/.ideai/mcp-tool-permissions.json']],
      [['preview', '-', 'services/api/.ideai/mcp-tool-permissions.json', '--json'], FIXTURES['old.json']],
      [['preview', 'old.json', 'apps/web/.ideai/mcp-tool-permissions.json']],
      [['fmt', '--check', '.']],
      [['--help']],
      [['check', '--help']],
      [['--version']],
      [['check', 'no-such-folder']],
      [['check', '--nope']],
      [['decide', 'services/api', '--tool', 'idea_memory_read']],
      [['frobnicate']],
    ];
    const codes: number[] = [];
    for (const [args, stdin] of runs) codes.push((await same(file, args, repo, stdin)).code);
    // Not all alike: the comparisons above cover passes, failures and usage errors.
    expect(new Set(codes)).toEqual(new Set([0, 1, 2]));
  }, 600_000);

  it('fmt writes the same bytes', async () => {
    const one = await teamRepository({ 'api/.ideai/mcp-tool-permissions.json': API_POLICY });
    const source = await teamRepository({ 'api/.ideai/mcp-tool-permissions.json': API_POLICY });
    const [ran, reference] = await Promise.all([runStandalone(one.file, ['fmt', '.'], one.repo), runSourceCli(['fmt', '.'], source.repo)]);
    expect(ran).toEqual(reference);
    expect(ran.code).toBe(0);
    const written = await readFile(path.join(one.repo, 'api', '.ideai', 'mcp-tool-permissions.json'), 'utf8');
    expect(written).not.toBe(API_POLICY);
    expect(written).toBe(await readFile(path.join(source.repo, 'api', '.ideai', 'mcp-tool-permissions.json'), 'utf8'));
  }, 120_000);

  it('preview --server: the same summary and document from a served project with a recent decision', async () => {
    const server = await startTestServer(suite, { api: API_POLICY });
    const decided = await fetch(`${server.baseUrl}/decide`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ project: 'api', requester: 'Dev', tool: 'idea_memory_write' }),
    });
    expect(decided.status).toBe(200);
    const { repo, file } = await teamRepository({
      'proposed.json': '{ "version": 1, "projectDefault": { "allowedTools": ["idea_memory_read", "idea_memory_write"] } }\n',
    });
    const env = bareEnv();
    const summary = await same(file, ['preview', 'proposed.json', '--server', server.baseUrl, '--project', 'api'], repo, undefined, env);
    expect(summary.code).toBe(0);
    expect(summary.stdout).toContain('replay of 1 recent decision');
    const json = await same(
      file,
      ['preview', 'proposed.json', '--server', server.baseUrl, '--project', 'api', '--json'],
      repo,
      undefined,
      env,
    );
    expect(JSON.parse(json.stdout)).toMatchObject({ project: 'api', valid: true, replay: { decisions: 1, counts: { denyToAllow: 1 } } });
  }, 120_000);
});
