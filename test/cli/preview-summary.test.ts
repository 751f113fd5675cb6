/**
 * docs/policy-as-code.md: `idea-pdp preview OLD NEW` as a reviewer runs it in a git repository — a summary
 * line per agent by default, the document with --json, OLD from `<(git show main:…)` or NEW from stdin,
 * and a bounded read of a pipe.
 */
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runProcess, runSourceCli, SOURCE_CLI_COMMAND } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

const git = (cwd: string, ...args: string[]) => promisify(execFile)('git', args, { cwd });
const POLICY = '.ideai/mcp-tool-permissions.json';
const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;

const BEFORE = {
  version: 1,
  projectDefault: { allowedTools: ['idea_memory_read', 'idea_ticket_read'] },
  agents: [
    {
      agentId: 'QA',
      policy: {
        allowedTools: ['idea_memory_read', 'idea_run_in_background', 'idea_memory_write'],
        conditions: { idea_run_in_background: { command: { prefix: ['npm test', 'npm run lint'] } } },
      },
    },
  ],
};
const AFTER = {
  version: 1,
  projectDefault: { allowedTools: ['idea_memory_read', 'idea_ticket_read'], askTools: ['idea_ticket_create', 'idea_ticket_update'] },
  agents: [
    {
      agentId: 'QA',
      policy: {
        allowedTools: ['idea_memory_read', 'idea_run_in_background'],
        conditions: { idea_run_in_background: { command: { prefix: ['npm'] } } },
      },
    },
  ],
};

async function repository(): Promise<string> {
  const dir = path.join(await tempFolder(), 'repo');
  await mkdir(path.join(dir, '.ideai'), { recursive: true });
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'config', 'user.email', 'reviewer@example.test');
  await git(dir, 'config', 'user.name', 'Reviewer');
  await writeFile(path.join(dir, POLICY), `${JSON.stringify(BEFORE, null, 2)}\n`);
  await git(dir, 'add', '.');
  await git(dir, 'commit', '-q', '-m', 'policy');
  await writeFile(path.join(dir, POLICY), `${JSON.stringify(AFTER, null, 2)}\n`);
  return dir;
}

const SUMMARY = [
  '*default (project default): put on ask idea_ticket_create, idea_ticket_update',
  'QA: removed idea_memory_write; idea_run_in_background conditions {"command":{"prefix":["npm test","npm run lint"]}} -> {"command":{"prefix":["npm"]}}',
  '2 agents change',
  '',
].join('\n');

describe('idea-pdp preview for a reviewer', () => {
  it('reads OLD from <(git show main:…) and prints one line per agent: ask changes and each condition before and after', async () => {
    const dir = await repository();
    const command = [...SOURCE_CLI_COMMAND, 'preview', `<(git show main:${POLICY})`, POLICY].map((word, index, all) =>
      index === all.length - 2 ? word : quote(word),
    );
    const run = await runProcess('bash', ['-c', command.join(' ')], dir);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(SUMMARY);
  });

  it('--json prints the document, NEW read from stdin with -', async () => {
    const dir = await repository();
    const { stdout: old } = await git(dir, 'show', `main:${POLICY}`);
    await writeFile(path.join(dir, 'old.json'), old);
    const run = await runSourceCli(['preview', 'old.json', '-', '--json'], dir, `${JSON.stringify(AFTER)}\n`);
    expect(run.code, run.stderr).toBe(0);
    const document = JSON.parse(run.stdout) as { valid: boolean; agents: unknown[] };
    expect(document.valid).toBe(true);
    expect(document.agents).toEqual([
      expect.objectContaining({ agentId: '*default', added: [], removed: [], askAdded: ['idea_ticket_create', 'idea_ticket_update'] }),
      expect.objectContaining({
        agentId: 'QA',
        removed: ['idea_memory_write'],
        conditions: [
          {
            tool: 'idea_run_in_background',
            before: { command: { prefix: ['npm test', 'npm run lint'] } },
            after: { command: { prefix: ['npm'] } },
          },
        ],
      }),
    ]);
    // The summary of the same change, from stdin too.
    expect((await runSourceCli(['preview', 'old.json', '-'], dir, JSON.stringify(AFTER))).stdout).toBe(SUMMARY);
  });

  it('an invalid NEW from stdin names stdin in its problems and exits 1; no change says so', async () => {
    const dir = await repository();
    const invalid = await runSourceCli(['preview', POLICY, '-'], dir, '{ "version": 1, "projectDefault": { "allowedTools": [] }, "x": 1 }');
    expect(invalid.code).toBe(1);
    expect(invalid.stdout).toMatch(/^stdin:1:\d+: error invalid_shape: .*"x"/m);
    expect(invalid.stdout).toMatch(/^invalid: 1 error; nothing to preview$/m);
    const same = await runSourceCli(['preview', POLICY, POLICY], dir);
    expect(same).toMatchObject({ code: 0, stdout: 'no agent changes\n' });
  });

  it('refuses - twice, a folder, a missing file, and a pipe longer than 4 MiB, as usage errors', async () => {
    const dir = await repository();
    const refused = async (args: string[], message: string, stdin?: Buffer) => {
      const run = await runSourceCli(args, dir, stdin);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stderr).toContain(message);
    };
    await refused(['preview', '-', '-'], 'only one of OLD and NEW');
    await refused(['preview', '.ideai', POLICY], '.ideai is a folder');
    await refused(['preview', 'gone.json', POLICY], 'cannot read gone.json');
    await refused(['preview', POLICY, '-'], 'stdin: larger than 4 MiB', Buffer.alloc(4 * 1024 * 1024 + 1, 0x20));
  });
});
