/**
 * What a user of the package does: `npm pack` at the repository root, `npm install` of the tarball
 * in an empty folder (offline from the npm cache once the dependencies are there), then the
 * `idea-pdp` command spawned as a shell would: its exit codes and its exact lines, and `serve`
 * answering on a real port with the panel built in.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { suiteScope } from '../support/app.js';
import { runProcess, type CliRun } from '../support/cli.js';
import { REPO_ROOT, freePort } from '../support/service-process.js';
import { waitFor } from '../support/wait.js';

const suite = suiteScope();
let work: string;
let app: string;
let files: string[];

/** The environment of a nested npm: none of the npm_* variables of an outer `npm test`. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.toLowerCase().startsWith('npm_') && !key.startsWith('PDP_')) env[key] = value;
  return env;
}

async function npm(cwd: string, args: string[]): Promise<string> {
  const result = await runProcess('npm', args, cwd, 600_000, cleanEnv());
  if (result.code !== 0) throw new Error(`npm ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

const idea = (args: string[], cwd = app): Promise<CliRun> =>
  runProcess(path.join(app, 'node_modules', '.bin', 'idea-pdp'), args, cwd, 60_000, cleanEnv());

beforeAll(async () => {
  const folder = await mkdtemp(path.join(tmpdir(), 'pdp-package-'));
  suite.onTestFinished(() => rm(folder, { recursive: true, force: true }));
  work = folder;
  // What prepack runs, run first so that `npm pack --json` prints only its JSON.
  await npm(REPO_ROOT, ['run', 'build', '--silent']);
  const packed = JSON.parse(await npm(REPO_ROOT, ['pack', '--ignore-scripts', '--json', '--pack-destination', work])) as {
    filename: string;
    files: { path: string }[];
  }[];
  const tarball = path.join(work, packed[0]?.filename ?? 'missing.tgz');
  files = (packed[0]?.files ?? []).map((file) => file.path).sort();
  app = path.join(work, 'app');
  await mkdir(app);
  await writeFile(path.join(app, 'package.json'), JSON.stringify({ name: 'policies', version: '1.0.0', private: true }));
  await npm(app, ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error']);
}, 900_000);

/** A project folder under the app folder: its policy text, agents file and test file. */
async function project(name: string, content: { policy?: string; agents?: string; tests?: unknown }): Promise<string> {
  const dir = path.join(app, name);
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  if (content.policy !== undefined) await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.json'), content.policy);
  if (content.agents !== undefined) await writeFile(path.join(dir, '.ideai', 'agents.json'), content.agents);
  if (content.tests !== undefined)
    await writeFile(path.join(dir, '.ideai', 'mcp-tool-permissions.test.json'), JSON.stringify(content.tests, null, 2));
  return dir;
}

const GOOD = `{
  "version": 1,
  "projectDefault": { "allowedTools": ["idea_memory_read"], "askTools": ["idea_ticket_create"] },
  "agents": [{ "agentId": "QA", "policy": { "allowedTools": ["idea_memory_read", "idea_memory_write"] } }]
}
`;

describe('the idea-mcp-tool-permissions tarball, installed in an empty folder', () => {
  it('ships compiled JavaScript, the built panel and the published schemas, nothing else', () => {
    expect(files.some((file) => file.endsWith('.ts') || file.endsWith('.map'))).toBe(false);
    expect(files.some((file) => /^(test|bench|server|client|ui|scripts)\//.test(file))).toBe(false);
    expect(files.filter((file) => file.startsWith('dist/') && !/^dist\/(server|schemas)\//.test(file))).toEqual([
      'dist/ui/app.js',
      'dist/ui/index.html',
      'dist/ui/styles.css',
    ]);
    expect(files).toEqual(
      expect.arrayContaining(['dist/server/cli/idea-pdp.js', 'dist/server/main.js', 'schemas/mcp-tool-permissions.test.schema.json']),
    );
  });

  it('check: exact lines, the summary, exit 0, 1 and 2, --strict and --json', async () => {
    await project('good', { policy: GOOD, agents: '[{ "id": "QA" }]' });
    await project('bad', {
      policy: '{\n  "version": 1,\n  "projectDefault": { "allowedTools": ["idea_memory_read"], "askTools": ["idea_memory_read"] }\n}\n',
    });
    await project('unknown', { policy: '{ "version": 1, "projectDefault": { "allowedTools": ["idea_memry_read"] } }' });

    expect(await idea(['check', 'good'])).toEqual({ code: 0, stdout: 'valid: 0 errors, 0 warnings in 1 project\n', stderr: '' });
    expect(await idea(['check'], path.join(app, 'good'))).toMatchObject({ code: 0 });

    const bad = await idea(['check', 'good', 'bad']);
    expect(bad.code).toBe(1);
    expect(bad.stdout.split('\n')).toEqual([
      'bad/.ideai/mcp-tool-permissions.json:3:61: error ask_conflict: "idea_memory_read" in both allowedTools and askTools at /projectDefault',
      'invalid: 1 error, 0 warnings in 2 projects',
      '',
    ]);

    const unknown = await idea(['check', 'unknown']);
    expect(unknown.code).toBe(0);
    expect(unknown.stdout).toContain('unknown/.ideai/mcp-tool-permissions.json:1:54: warning unknown_tool: unknown tool "idea_memry_read"');
    const strict = await idea(['check', '--strict', '--json', 'unknown']);
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.stdout)).toMatchObject({ valid: false, errors: 1, warnings: 0, projects: [{ dir: 'unknown', valid: false }] });

    expect((await idea(['check', 'no-such-folder'])).code).toBe(2);
    expect((await idea(['check', '--nope'])).code).toBe(2);
    expect((await idea(['frobnicate'])).code).toBe(2);
  }, 60_000);

  it('test: one line per failing case, then "N passed, M failed"; every case fails on an invalid policy', async () => {
    const cases = [
      { requester: 'QA', tool: 'idea_memory_write', expect: 'allow' },
      { requester: 'Dev', tool: 'idea_ticket_create', expect: 'ask' },
      { name: 'devs cannot write memory', requester: 'Dev', tool: 'idea_memory_write', expect: 'allow' },
    ];
    await project('tested', { policy: GOOD, tests: { version: 1, cases } });
    const run = await idea(['test', 'tested']);
    expect(run.code).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(
      /^tested\/\.ideai\/mcp-tool-permissions\.test\.json:\d+:\d+: FAIL "devs cannot write memory" requester "Dev" tool idea_memory_write: expected allow, got deny \(not_in_allowlist: /,
    );
    expect(lines[1]).toBe('2 passed, 1 failed');

    await project('passing', { policy: GOOD, tests: { version: 1, cases: cases.slice(0, 2) } });
    expect(await idea(['test', 'passing'])).toMatchObject({ code: 0, stdout: '2 passed, 0 failed\n' });
    const json = JSON.parse((await idea(['test', '--json', 'passing'])).stdout) as { passed: number; failed: number; cases: unknown[] };
    expect(json).toMatchObject({ passed: 2, failed: 0 });

    await project('broken', { policy: '{ "version": 1, ', tests: { version: 1, cases: cases.slice(0, 2) } });
    const broken = await idea(['test', 'broken']);
    expect(broken.code).toBe(1);
    // The policy's error once, then each case as not run, never as a verdict.
    expect(broken.stdout.split('\n').filter((line) => line.includes(': NOT RUN requester '))).toHaveLength(2);
    expect(broken.stdout).not.toContain('expected ');
    expect(broken.stdout.endsWith('0 passed, 2 failed\nno case was run: the policy file is invalid\n')).toBe(true);
  }, 60_000);

  it('decide prints the /decide body without decisionId; --help on every command', async () => {
    await project('decided', { policy: GOOD });
    const decided = await idea([
      'decide',
      'decided',
      '--requester',
      'QA',
      '--tool',
      'idea_memory_write',
      '--arguments',
      '{"issueRef":"#3"}',
    ]);
    expect(decided.code).toBe(0);
    const body = JSON.parse(decided.stdout) as Record<string, unknown>;
    expect(body).toMatchObject({
      allow: true,
      reason: 'allowed',
      source: 'agent-override',
      project: 'decided',
      tool: { name: 'idea_memory_write' },
    });
    expect(body).not.toHaveProperty('decisionId');
    const asked = JSON.parse((await idea(['decide', 'decided', '--requester', 'Dev', '--tool', 'idea_ticket_create'])).stdout) as {
      reason: string;
    };
    expect(asked.reason).toBe('approval_required');
    expect((await idea(['decide', 'decided', '--tool', 'idea_memory_write'])).code).toBe(2);
    expect((await idea(['decide', 'decided', '--requester', 'QA', '--tool', 'x', '--arguments', '{'])).code).toBe(2);

    for (const command of [[], ['serve'], ['check'], ['test'], ['decide']]) {
      const help = await idea([...command, '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/^Usage: idea-pdp/);
    }
  }, 60_000);

  it('serve runs the service with the PDP_* variables, the panel built in, and stops on SIGTERM', async () => {
    const root = path.join(work, 'projects');
    await mkdir(path.join(root, 'demo', '.ideai'), { recursive: true });
    await writeFile(path.join(root, 'demo', '.ideai', 'mcp-tool-permissions.json'), GOOD);
    const port = await freePort();
    const child = spawn(path.join(app, 'node_modules', '.bin', 'idea-pdp'), ['serve'], {
      cwd: app,
      env: {
        ...cleanEnv(),
        PDP_PORT: String(port),
        PDP_PROJECTS_ROOT: root,
        PDP_STATE_DIR: path.join(work, 'state'),
        PDP_ADMIN_TOKEN: 'package-admin-token-123456',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => {
        resolve(code);
      }),
    );
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor(
        async () => (await fetch(`${base}/readyz`).catch(() => undefined))?.status === 200,
        `idea-pdp serve ready:\n${output}`,
        60_000,
        100,
      );
      const decision = (await (
        await fetch(`${base}/decide`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' }),
        })
      ).json()) as { allow: boolean };
      expect(decision.allow).toBe(true);
      const panel = await fetch(`${base}/ui/`);
      expect(panel.status).toBe(200);
      expect(await panel.text()).toContain('<script');
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 120_000);
});
