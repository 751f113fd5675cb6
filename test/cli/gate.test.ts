/**
 * `idea-pdp` as a team's gate uses it (docs/policy-as-code.md#in-ci-and-before-each-commit), through the
 * command installed from the packed tarball: every problem at once with what was expected and what
 * was found, suggestions, unknown agents, misnamed files, --strict and --require, an invalid policy
 * running no case, --staged under a real pre-commit hook, TAP/JUnit/JSON, -v, --run, --coverage,
 * preview offline and against a served project, decide's exit codes and line format, serve without
 * projects, and the package's license and examples.
 */
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { suiteScope } from '../support/app.js';
import { cleanEnv, installPackage, runProcess, type InstalledPackage } from '../support/cli.js';
import { REPO_ROOT, freePort } from '../support/service-process.js';
import { waitFor } from '../support/wait.js';

const suite = suiteScope();
let work: string;
let installed: InstalledPackage;

beforeAll(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'pdp-gate-'));
  suite.onTestFinished(() => rm(work, { recursive: true, force: true }));
  installed = await installPackage(work);
}, 900_000);

const idea = (args: string[], cwd?: string, env?: NodeJS.ProcessEnv) => installed.idea(args, cwd, env);

async function project(name: string, files: Record<string, string | object>): Promise<string> {
  const dir = path.join(installed.app, name);
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    await writeFile(path.join(dir, '.ideai', file), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return dir;
}

const POLICY = 'mcp-tool-permissions.json';
const TESTS = 'mcp-tool-permissions.test.json';
const VALID = `{
  "version": 1,
  "projectDefault": { "allowedTools": ["idea_memory_read"], "askTools": ["idea_ticket_create"] },
  "agents": [{ "agentId": "QA", "policy": { "allowedTools": ["idea_memory_read", "idea_memory_write"] } }]
}
`;

describe('idea-pdp as a gate, installed from the tarball', () => {
  it('check: every problem of every file in one run, in file order, said as expected vs found', async () => {
    await project('many', {
      [POLICY]: `{
  "version": 1,
  "projectDefault": { "allowTools": ["idea_memory_read"] },
  "agents": [
    { "agentId": "QA", "policy": { "allowedTools": ["idea_memroy_write"] } },
    { "agentId": "Devv", "policy": { "allowedTools": ["idea_memory_read"], "askTools": ["idea_memory_read"] } }
  ]
}
`,
      'agents.json': [{ id: 'QA' }, { id: 'Dev' }],
      'mcp-tools-permissions.json': '{}',
    });
    const run = await idea(['check', 'many']);
    expect(run.code).toBe(1);
    expect(run.stdout.split('\n')).toEqual([
      'many/.ideai/mcp-tool-permissions.json:3:23: error invalid_shape: unknown property "allowTools" at /projectDefault (did you mean "allowedTools"?)',
      'many/.ideai/mcp-tool-permissions.json:5:53: warning unknown_tool: unknown tool "idea_memroy_write" at /agents/0/policy/allowedTools/0: not in the IdeA MCP tool catalog, it grants nothing; did you mean idea_memory_write?',
      'many/.ideai/mcp-tool-permissions.json:6:7: warning unknown_agent: override for agent Devv, which .ideai/agents.json does not declare; did you mean Dev?',
      'many/.ideai/mcp-tool-permissions.json:6:76: error ask_conflict: "idea_memory_read" in both allowedTools and askTools at /agents/1/policy',
      'many/.ideai/mcp-tools-permissions.json:1:1: warning misnamed_file: not a file the service reads: did you mean mcp-tool-permissions.json?',
      'invalid: 2 errors, 3 warnings in 1 project; --strict would make them 3 errors',
      '',
    ]);
    // A missing allowedTools is not reported beside its misspelling.
    expect(run.stdout).not.toContain('missing property');

    // A valid file whose only problems are warnings passes, unless --strict.
    await project('typo', { [POLICY]: '{ "version": 1, "projectDefault": { "allowedTools": ["idea_memroy_write"] } }\n' });
    const warned = await idea(['check', 'typo']);
    expect(warned.code).toBe(0);
    expect(warned.stdout).toContain('did you mean idea_memory_write?');
    expect(warned.stdout).toContain('valid: 0 errors, 1 warning in 1 project; --strict would make it an error');
    expect((await idea(['check', '--strict', 'typo'])).code).toBe(1);
    // An unknown option is named plainly (Node's own text ends on an unbalanced quote).
    expect(await idea(['check', '--nope'])).toMatchObject({
      code: 2,
      stderr: 'idea-pdp: unknown option --nope\nRun `idea-pdp --help` for usage.\n',
    });
  }, 60_000);

  it('--require: a folder without a policy file or a test file fails; without it, a note says what applies', async () => {
    const empty = path.join(installed.app, 'empty');
    await mkdir(empty, { recursive: true });
    const lax = await idea(['check', 'empty']);
    expect(lax.code).toBe(0);
    expect(lax.stderr).toContain('no empty/.ideai/mcp-tool-permissions.json: the canonical read-only defaults apply');
    const required = await idea(['check', '--require', 'empty']);
    expect(required.code).toBe(1);
    expect(required.stdout).toContain('empty/.ideai/mcp-tool-permissions.json:1:1: error missing_file: no policy file (--require)');
    expect((await idea(['test', 'empty'])).code).toBe(0);
    const noTests = await idea(['test', '--require', 'empty']);
    expect(noTests.code).toBe(1);
    expect(noTests.stdout).toContain('error missing_file: no test file (--require)');
    expect(noTests.stdout).toContain('0 passed, 1 failed');
  }, 60_000);

  it('test: schema messages, unknown agents and tools in cases; an invalid policy prints its errors once and runs no case', async () => {
    await project('cases', {
      [POLICY]: VALID,
      'agents.json': [{ id: 'QA' }, { id: 'Dev' }],
      [TESTS]: {
        version: 1,
        cases: [
          { requester: 'QA', tool: 'idea_memroy_write', expect: 'deny' },
          { requester: 'Devv', tool: 'idea_memory_read', expect: 'alow' },
        ],
      },
    });
    const run = await idea(['test', 'cases']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('expected one of allow, deny, ask, got "alow" at /cases/1/expect');
    expect(run.stdout).toContain('warning unknown_tool: unknown tool "idea_memroy_write" at /cases/0/tool');
    expect(run.stdout).toContain('did you mean idea_memory_write?');
    expect(run.stdout).toContain(
      'warning unknown_agent: case for agent "Devv", which .ideai/agents.json does not declare; did you mean Dev?',
    );

    const cases = [
      { requester: 'QA', tool: 'idea_memory_write', expect: 'allow' },
      { requester: 'Dev', tool: 'idea_memory_write', expect: 'deny' },
      { requester: '', tool: 'idea_memory_read', expect: 'allow' },
    ];
    await project('invalid', {
      [POLICY]: '{ "version": 1, "projectDefault": { "allowedTools": [1, 2] } }\n',
      [TESTS]: { version: 1, cases },
    });
    const invalid = await idea(['test', 'invalid']);
    expect(invalid.code).toBe(1);
    const lines = invalid.stdout.split('\n');
    expect(lines.filter((line) => line.includes('error invalid_shape'))).toHaveLength(2);
    expect(lines.filter((line) => / NOT RUN requester "(QA|Dev|)" tool idea_memory_(read|write): policy_invalid /.test(line))).toHaveLength(
      3,
    );
    expect(invalid.stdout).not.toMatch(/expected \w+, got/);
    expect(lines.slice(-3)).toEqual(['0 passed, 3 failed', 'no case was run: the policy file is invalid', '']);
  }, 60_000);

  it('test: --format tap|junit|json, -v, --run, --coverage', async () => {
    const cases = [
      { name: 'QA writes memory', requester: 'QA', tool: 'idea_memory_write', expect: 'allow' },
      { requester: 'Dev', tool: 'idea_memory_write', expect: 'allow' },
      { requester: 'Dev', tool: 'idea_ticket_create', expect: 'ask' },
    ];
    const dir = await project('formats', { [POLICY]: VALID, 'agents.json': [{ id: 'QA' }, { id: 'Dev' }], [TESTS]: { version: 1, cases } });

    const tap = await idea(['test', '--format', 'tap', 'formats']);
    expect(tap.code).toBe(1);
    expect(tap.stdout.split('\n').slice(0, 3)).toEqual([
      'TAP version 13',
      '1..3',
      'ok 1 - "QA writes memory" requester "QA" tool idea_memory_write',
    ]);
    expect(tap.stdout).toContain('not ok 2 - requester "Dev" tool idea_memory_write');

    const junit = await idea(['test', '--format', 'junit', 'formats']);
    expect(junit.code).toBe(1);
    await writeFile(path.join(dir, 'junit.xml'), junit.stdout);
    const xml = await readFile(path.join(dir, 'junit.xml'), 'utf8');
    const report = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '' }).parse(xml) as {
      testsuites: {
        tests: string;
        failures: string;
        testsuite: { name: string; tests: string; failures: string; testcase: { name: string; failure?: { message: string } }[] };
      };
    };
    expect(report.testsuites).toMatchObject({ tests: '3', failures: '1' });
    expect(report.testsuites.testsuite).toMatchObject({ name: 'formats/.ideai/mcp-tool-permissions.test.json', tests: '3', failures: '1' });
    const failing = report.testsuites.testsuite.testcase.filter((one) => one.failure !== undefined);
    expect(failing.map((one) => [one.name, one.failure?.message])).toEqual([
      ['requester "Dev" tool idea_memory_write', 'expected allow, got deny'],
    ]);

    const json = JSON.parse((await idea(['test', '--format', 'json', 'formats'])).stdout) as { passed: number; failed: number };
    expect(json).toMatchObject({ passed: 2, failed: 1 });

    const verbose = await idea(['test', '-v', 'formats']);
    expect(verbose.stdout.split('\n').filter((line) => / (PASS|FAIL) /.test(line))).toHaveLength(3);
    const subset = await idea(['test', '-v', '--run', 'ticket', 'formats']);
    expect(subset).toMatchObject({ code: 0 });
    expect(subset.stdout.split('\n').filter((line) => line.includes(' PASS '))).toEqual([
      expect.stringContaining('tool idea_ticket_create: ask'),
    ]);
    expect(subset.stdout).toContain('1 passed, 0 failed');

    const coverage = await idea(['test', '--coverage', '--run', 'QA', 'formats']);
    // All cases count, whatever --run selects: QA and Dev × idea_memory_write, Dev × idea_ticket_create.
    expect(coverage.stdout).toContain('coverage formats: 3 of 32 agent × write tool pairs exercised');
    expect(coverage.stdout).toMatch(/not exercised: QA × idea_ask_agent, .*idea_create_skill\n/);
    expect(coverage.stdout).not.toMatch(/not exercised: QA × .*idea_memory_write/);
  }, 60_000);

  it('--staged: a real pre-commit hook judges what is committed, not the working tree', async () => {
    const repo = await project('repo', { [POLICY]: VALID });
    const env = {
      ...cleanEnv(),
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    };
    const git = (...args: string[]) => runProcess('git', args, repo, 60_000, env);
    expect(await git('init', '-q')).toMatchObject({ code: 0 });
    const bin = path.join(installed.app, 'node_modules', '.bin', 'idea-pdp');
    await writeFile(
      path.join(repo, '.git', 'hooks', 'pre-commit'),
      `#!/bin/sh\n# Refuses a commit whose staged policy or expectations fail.\n"${bin}" check --strict --staged && "${bin}" test --strict --staged\n`,
    );
    await chmod(path.join(repo, '.git', 'hooks', 'pre-commit'), 0o755);
    await git('add', '-A');
    expect(await git('commit', '-q', '-m', 'valid')).toMatchObject({ code: 0 });

    // Invalid JSON staged, the working copy then put back: the hook must refuse.
    const file = path.join(repo, '.ideai', POLICY);
    await writeFile(file, '{ "version": 1,');
    await git('add', '-A');
    await writeFile(file, VALID);
    const refused = await git('commit', '-q', '-m', 'broken');
    expect(refused.code).not.toBe(0);
    expect(refused.stdout + refused.stderr).toContain('error invalid_json');
    expect((await idea(['check'], repo)).code).toBe(0);

    // The other way round: the working copy is broken, what is staged is valid (and differs from HEAD).
    await writeFile(file, VALID.replace('"idea_memory_read"]', '"idea_memory_read", "idea_ticket_read"]'));
    await git('add', '-A');
    await writeFile(file, '{ "version": 1,');
    expect(await git('commit', '-q', '-m', 'valid again')).toMatchObject({ code: 0 });
  }, 120_000);

  it('decide: --fail-on-deny, --format line, --arguments that is not a JSON object is a usage error, any depth is taken', async () => {
    await project('decided', { [POLICY]: VALID });
    const denied = await idea([
      'decide',
      'decided',
      '--requester',
      'Dev',
      '--tool',
      'idea_memory_write',
      '--format',
      'line',
      '--fail-on-deny',
    ]);
    expect(denied).toMatchObject({ code: 1, stdout: 'deny not_in_allowlist project-default\n' });
    const allowed = await idea([
      'decide',
      'decided',
      '--requester',
      'QA',
      '--tool',
      'idea_memory_write',
      '--format',
      'line',
      '--fail-on-deny',
    ]);
    expect(allowed).toMatchObject({ code: 0, stdout: 'allow allowed agent-override\n' });
    expect((await idea(['decide', 'decided', '--requester', 'Dev', '--tool', 'idea_ticket_create', '--format', 'line'])).stdout).toBe(
      'ask approval_required project-default\n',
    );
    const notObject = await idea(['decide', 'decided', '--requester', 'QA', '--tool', 'idea_memory_write', '--arguments', '["a"]']);
    expect(notObject.code).toBe(2);
    expect(notObject.stderr).toContain('--arguments must be a JSON object');
    // Real tools take nested arguments: /decide takes any JSON object, and so does decide.
    const nested = ['--arguments', '{"a":{"b":{"c":[1,{"d":2}]}}}'];
    expect((await idea(['decide', 'decided', '--requester', 'QA', '--tool', 'idea_memory_write', ...nested])).code).toBe(0);
  }, 60_000);

  it('preview: OLD NEW offline, and NEW against a served project with its recent decisions', async () => {
    const dir = await project('previewed', { [POLICY]: VALID });
    const proposed = path.join(dir, 'proposed.json');
    await writeFile(proposed, '{ "version": 1, "projectDefault": { "allowedTools": ["idea_memory_read", "idea_memory_write"] } }\n');
    const offline = await idea(['preview', path.join(dir, '.ideai', POLICY), proposed, '--json']);
    expect(offline.code).toBe(0);
    const changes = JSON.parse(offline.stdout) as { valid: boolean; agents: { agentId: string; added: string[]; removed: string[] }[] };
    expect(changes.valid).toBe(true);
    // QA's override does not change: only the project default is listed.
    expect(changes.agents.map((agent) => [agent.agentId, agent.added, agent.removed])).toEqual([['*default', ['idea_memory_write'], []]]);

    const port = await freePort();
    const child = spawn(path.join(installed.app, 'node_modules', '.bin', 'idea-pdp'), ['serve'], {
      cwd: installed.app,
      env: {
        ...cleanEnv(),
        PDP_PORT: String(port),
        PDP_PROJECTS: `previewed=${dir}`,
        PDP_STATE_DIR: path.join(work, 'preview-state'),
        PDP_ADMIN_TOKEN: 'gate-admin-token-1234567890',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor(async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200, 'serve ready', 60_000, 100);
      const decided = await fetch(`${base}/decide`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ project: 'previewed', requester: 'Dev', tool: 'idea_memory_write' }),
      });
      expect(decided.status).toBe(200);
      const online = await idea(['preview', proposed, '--server', base, '--project', 'previewed', '--json']);
      expect(online.code).toBe(0);
      expect(JSON.parse(online.stdout)).toMatchObject({
        project: 'previewed',
        valid: true,
        replay: {
          decisions: 1,
          counts: { denyToAllow: 1 },
          changed: [{ requester: 'Dev', tool: 'idea_memory_write', before: 'deny', after: 'allow', calls: 1 }],
        },
      });
      await writeFile(proposed, '{ "version": 1, "projectDefault": { "allowedTools": ["idea_memory_read"] }, "extra": 1 }\n');
      const invalid = await idea(['preview', proposed, '--server', base, '--project', 'previewed', '--json']);
      expect(invalid.code).toBe(1);
      expect(JSON.parse(invalid.stdout)).toMatchObject({ valid: false, errors: [{ file: proposed, line: 1, code: 'invalid_shape' }] });
    } finally {
      child.kill('SIGTERM');
    }
  }, 120_000);

  it('serve without projects serves copies of the demo projects in its state folder and says so', async () => {
    const port = await freePort();
    const state = path.join(work, 'serve-state');
    const child = spawn(path.join(installed.app, 'node_modules', '.bin', 'idea-pdp'), ['serve'], {
      cwd: installed.app,
      env: { ...cleanEnv(), PDP_PORT: String(port), PDP_STATE_DIR: state, PDP_ADMIN_TOKEN: 'gate-admin-token-1234567890' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      await waitFor(
        async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
        'serve ready',
        60_000,
        100,
      );
      expect(output).toContain(`serving copies of the demo projects in ${path.join(state, 'demo-projects')}`);
      expect(output).toContain('keep it out of git (.gitignore: serve-state/)');
      expect(await readFile(path.join(state, 'demo-projects', 'demo', '.ideai', POLICY), 'utf8')).toBe(
        await readFile(path.join(REPO_ROOT, 'examples', 'projects', 'demo', '.ideai', POLICY), 'utf8'),
      );
    } finally {
      child.kill('SIGTERM');
    }
  }, 120_000);

  it('the package has a license field and ships examples/ as committed; packing refuses edited examples', async () => {
    const manifest = JSON.parse(
      await readFile(path.join(installed.app, 'node_modules', 'idea-mcp-tool-permissions', 'package.json'), 'utf8'),
    ) as {
      license?: string;
    };
    expect(manifest.license).toBe('UNLICENSED');
    const clone = path.join(work, 'clone');
    expect((await runProcess('git', ['clone', '-q', REPO_ROOT, clone], work)).code).toBe(0);
    const refuse = path.join(clone, 'scripts', 'refuse-dirty-examples.mjs');
    expect((await runProcess(process.execPath, [refuse], clone)).code).toBe(0);
    await writeFile(path.join(clone, 'examples', 'projects', 'demo', '.ideai', POLICY), '{}');
    const refused = await runProcess(process.execPath, [refuse], clone);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('examples/projects differs from the last commit');
  }, 120_000);
});
