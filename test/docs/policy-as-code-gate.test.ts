/**
 * docs/policy-as-code.md#in-ci-and-before-each-commit, run as written: the workflow, the hook and its
 * install line are taken from the page's code blocks, in a git repository holding two projects with
 * the one file built by `npm run build:standalone` committed under tools/. Each mistake a team made
 * in a trial is refused with its message and exit code; a good change commits; the workflow's steps
 * run on a fresh clone with no node_modules anywhere above it.
 */
import { chmod, copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { suiteScope } from '../support/app.js';
import { runProcess, type CliRun } from '../support/cli.js';
import { REPO_ROOT } from '../support/service-process.js';
import { bareEnv, buildStandalone, nodeModulesAbove } from '../support/standalone.js';
import { tempFolder } from '../support/temp-folder.js';

interface Block {
  readonly lang: string;
  readonly text: string;
}

/** The fenced code blocks of the page's section `heading`, in order. */
async function sectionBlocks(heading: string): Promise<Block[]> {
  const page = await readFile(path.join(REPO_ROOT, 'docs', 'policy-as-code.md'), 'utf8');
  const start = page.indexOf(`\n## ${heading}\n`);
  expect(start, heading).toBeGreaterThan(0);
  const end = page.indexOf('\n## ', start + 1);
  const section = page.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1] ?? '', text: match[2] ?? '' }));
}

interface Step {
  readonly uses?: string;
  readonly with?: Record<string, unknown>;
  readonly run?: string;
}

const suite = suiteScope();
let doc: { workflow: { jobs: Record<string, { steps: Step[] }> }; hook: string; install: string; refused: string[] };
let standalone: string;

beforeAll(async () => {
  const blocks = await sectionBlocks('In CI and before each commit');
  expect(blocks.map((block) => block.lang)).toEqual(['yaml', 'sh', 'sh', 'text']);
  const [workflow, hook, install, refused] = blocks as [Block, Block, Block, Block];
  expect(hook.text.startsWith('#!/bin/sh\n')).toBe(true);
  doc = {
    workflow: parseYaml(workflow.text) as typeof doc.workflow,
    hook: hook.text,
    install: install.text,
    refused: refused.text.split('\n').filter((line) => line !== ''),
  };
  const folder = await mkdtemp(path.join(tmpdir(), 'pdp-gate-doc-'));
  suite.onTestFinished(() => rm(folder, { recursive: true, force: true }));
  standalone = await buildStandalone(path.join(folder, 'idea-pdp-standalone.mjs'));
}, 300_000);

const GIT_ENV = bareEnv({
  GIT_AUTHOR_NAME: 'Team',
  GIT_AUTHOR_EMAIL: 'team@example.com',
  GIT_COMMITTER_NAME: 'Team',
  GIT_COMMITTER_EMAIL: 'team@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
});

const WEB_POLICY = `{
  "version": 1,
  "projectDefault": { "allowedTools": ["idea_ticket_read", "idea_memory_read"] },
  "agents": [
    { "agentId": "QA", "policy": { "allowedTools": ["idea_ticket_read", "idea_memory_write"] } }
  ]
}
`;
const WEB_TESTS = `{ "version": 1, "cases": [
  { "requester": "QA", "tool": "idea_memory_write", "expect": "allow" },
  { "requester": "Dev", "tool": "idea_memory_write", "expect": "deny" }
] }
`;
const API_POLICY = `{
  "version": 1,
  "agents": [
    { "agentId": "QA", "policy": { "allowedTools": ["idea_ticket_read", "idea_ticket_update"] } }
  ]
}
`;
const API_TESTS = `{ "version": 1, "cases": [
  { "requester": "QA", "tool": "idea_ticket_update", "expect": "allow" },
  { "requester": "Dev", "tool": "idea_ticket_update", "expect": "deny" }
] }
`;
const AGENTS = '[{ "id": "QA" }, { "id": "Dev" }]\n';

/** A team's repository: two projects, the one file and the hook under tools/, the hook installed as the page says. */
async function teamRepository(): Promise<{
  repo: string;
  git: (...args: string[]) => Promise<CliRun>;
  write: (file: string, text: string) => Promise<void>;
}> {
  const repo = path.join(await tempFolder('pdp-team-'), 'team');
  const write = async (file: string, text: string) => {
    await mkdir(path.dirname(path.join(repo, file)), { recursive: true });
    await writeFile(path.join(repo, file), text);
  };
  const git = (...args: string[]) => runProcess('git', args, repo, 60_000, GIT_ENV);
  await mkdir(repo, { recursive: true });
  expect(await git('init', '-q', '-b', 'main')).toMatchObject({ code: 0 });
  await write('web/.ideai/mcp-tool-permissions.json', WEB_POLICY);
  await write('web/.ideai/agents.json', AGENTS);
  await write('web/.ideai/mcp-tool-permissions.test.json', WEB_TESTS);
  await write('api/.ideai/mcp-tool-permissions.json', API_POLICY);
  await write('api/.ideai/agents.json', AGENTS);
  await write('api/.ideai/mcp-tool-permissions.test.json', API_TESTS);
  await mkdir(path.join(repo, 'tools'));
  await copyFile(standalone, path.join(repo, 'tools', 'idea-pdp-standalone.mjs'));
  await write('tools/pre-commit', doc.hook);
  expect(await runProcess('sh', ['-e', '-c', doc.install], repo, 60_000, GIT_ENV)).toMatchObject({ code: 0 });
  return { repo, git, write };
}

/** Runs the workflow's steps in order on a fresh clone of `repo`, as a runner does; stops at the first failing step. */
async function runWorkflow(repo: string): Promise<{ runner: string; steps: CliRun[] }> {
  const runner = path.join(await tempFolder('pdp-runner-'), 'checkout');
  const steps: CliRun[] = [];
  const [job, ...others] = Object.values(doc.workflow.jobs);
  expect(others).toEqual([]);
  for (const step of job?.steps ?? []) {
    let run: CliRun;
    if (step.uses === 'actions/checkout@v4')
      run = await runProcess('git', ['clone', '-q', repo, runner], path.dirname(runner), 60_000, GIT_ENV);
    else if (step.uses === 'actions/setup-node@v4') {
      // The runner's Node is this one: the step must ask for a line it is at least.
      expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(Number(step.with?.['node-version']));
      continue;
    } else if (step.run !== undefined) {
      expect(await nodeModulesAbove(runner)).toEqual([]);
      // GitHub's default shell for `run` on Linux.
      run = await runProcess('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run], runner, 60_000, bareEnv());
    } else throw new Error(`a step the test cannot run: ${JSON.stringify(step)}`);
    steps.push(run);
    if (run.code !== 0) break;
  }
  return { runner, steps };
}

describe('the documented hook and CI workflow, in a repository of two projects', () => {
  it('refuses each mistake of the trial with its message and exit code, and commits a good change', async () => {
    const { repo, git, write } = await teamRepository();
    await git('add', '-A');
    // The first commit already goes through the hook: both projects are valid and their cases pass.
    const first = await git('commit', '-q', '-m', 'Policies of web and api');
    expect(first, first.stdout + first.stderr).toMatchObject({ code: 0 });
    // git shows a hook's output on stderr.
    expect(first.stderr).toContain('valid: 0 errors, 0 warnings in 2 projects');
    expect(first.stderr).toContain('4 passed, 0 failed');

    const hook = () => runProcess(path.join(repo, '.git', 'hooks', 'pre-commit'), [], repo, 60_000, GIT_ENV);
    const refused = async (what: string, files: Record<string, string>, expected: string[]) => {
      for (const [file, text] of Object.entries(files)) await write(file, text);
      await git('add', '-A');
      const commit = await git('commit', '-q', '-m', what);
      expect(commit.code, `${what}: ${commit.stdout}${commit.stderr}`).toBe(1);
      for (const line of expected) expect(commit.stderr, what).toContain(line);
      // The hook's own exit code, run as git runs it.
      expect((await hook()).code, what).toBe(1);
      expect((await git('log', '--format=%s')).stdout.split('\n')).not.toContain(what);
      expect(await git('reset', '-q', '--hard')).toMatchObject({ code: 0 });
    };

    // A tool misspelled in the second project: the page's own example of a refusal, line for line.
    await refused(
      'A typo',
      { 'api/.ideai/mcp-tool-permissions.json': API_POLICY.replace('"idea_ticket_update"', '"idea_ticket_updte"') },
      doc.refused,
    );
    await refused(
      'A condition mistake',
      {
        'api/.ideai/mcp-tool-permissions.json': API_POLICY.replace(
          '"idea_ticket_update"] }',
          '"idea_ticket_update", "idea_ask_agent"],\n      "conditions": { "idea_ask_agent": { "agentId": { "in": "QA" } } } }',
        ),
      },
      [
        'api/.ideai/mcp-tool-permissions.json:5:56: error invalid_condition: invalid condition at /agents/0/policy/conditions/idea_ask_agent/agentId/in: agentId: "in" expects 1–100 strings or numbers, got the string "QA"',
        'invalid: 1 error, 0 warnings in 2 projects',
      ],
    );
    await refused(
      'A tool named twice',
      { 'api/.ideai/mcp-tool-permissions.json': API_POLICY.replace('"idea_ticket_update"]', '"idea_ticket_update", "idea_ticket_read"]') },
      [
        'api/.ideai/mcp-tool-permissions.json:4:95: error duplicate_tool: "idea_ticket_read" named twice in one list, at /agents/0/policy/allowedTools/0 and /agents/0/policy/allowedTools/2',
      ],
    );
    await refused(
      'A failing case',
      {
        'api/.ideai/mcp-tool-permissions.test.json': API_TESTS.replace(
          '] }',
          ',\n  { "requester": "QA", "tool": "idea_memory_write", "expect": "allow" }\n] }',
        ),
      },
      [
        'valid: 0 errors, 0 warnings in 2 projects',
        'api/.ideai/mcp-tool-permissions.test.json:5:3: FAIL requester "QA" tool idea_memory_write: expected allow, got deny (not_in_allowlist: Tool idea_memory_write is denied for agent QA in project api (policy: agent-override). Grant it in Permissions > Tools MCP IdeA.)',
        '4 passed, 1 failed',
      ],
    );

    // The good change: QA may write memory in api, with its case.
    await write(
      'api/.ideai/mcp-tool-permissions.json',
      API_POLICY.replace('"idea_ticket_update"]', '"idea_ticket_update", "idea_memory_write"]'),
    );
    await write(
      'api/.ideai/mcp-tool-permissions.test.json',
      API_TESTS.replace('] }', ',\n  { "requester": "QA", "tool": "idea_memory_write", "expect": "allow" }\n] }'),
    );
    await git('add', '-A');
    const good = await git('commit', '-q', '-m', 'QA writes memory in api');
    expect(good, good.stdout + good.stderr).toMatchObject({ code: 0 });
    expect(good.stderr).toContain('5 passed, 0 failed');
    expect((await git('log', '--format=%s')).stdout).toBe('QA writes memory in api\nPolicies of web and api\n');

    // The workflow on a fresh clone: both steps pass, and the JUnit report counts every case of both projects.
    const { runner, steps } = await runWorkflow(repo);
    expect(steps.map((step) => step.code)).toEqual([0, 0, 0]);
    const junit = new XMLParser({ ignoreAttributes: false }).parse(await readFile(path.join(runner, 'pdp-junit.xml'), 'utf8')) as {
      testsuites: { '@_tests': string; '@_failures': string };
    };
    expect([junit.testsuites['@_tests'], junit.testsuites['@_failures']]).toEqual(['5', '0']);
  }, 600_000);

  it('the workflow fails a commit made without the hook, with the same message', async () => {
    const { repo, git, write } = await teamRepository();
    await write('api/.ideai/mcp-tool-permissions.json', API_POLICY.replace('"idea_ticket_update"', '"idea_ticket_updte"'));
    await git('add', '-A');
    expect(await git('commit', '-q', '--no-verify', '-m', 'A typo, hook skipped')).toMatchObject({ code: 0 });
    const { steps } = await runWorkflow(repo);
    expect(steps.map((step) => step.code)).toEqual([0, 1]);
    for (const line of doc.refused) expect(steps[1]?.stdout).toContain(line);
  }, 300_000);

  it('the hook is executable as committed and the install line links it', async () => {
    const { repo, git } = await teamRepository();
    await chmod(path.join(repo, 'tools', 'pre-commit'), 0o644);
    expect(await runProcess('sh', ['-e', '-c', doc.install], repo, 60_000, GIT_ENV)).toMatchObject({ code: 0 });
    await git('add', '-A');
    expect((await git('ls-files', '-s', 'tools/pre-commit')).stdout).toMatch(/^100755 /);
    expect((await git('commit', '-q', '-m', 'first')).code).toBe(0);
  }, 120_000);
});
