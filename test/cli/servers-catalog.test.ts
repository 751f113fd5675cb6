/**
 * docs/api.md#other-mcp-servers-tools: `idea-pdp check`, `test` and `decide` read the project's
 * `.ideai/mcp-servers.json` beside the policy, as the service reads it: check lists its problems with
 * the service's codes and judges `<server>/<tool>` names against it (with suggestions), decide and
 * test decide qualified names as `/decide` does, a repository walk and `--staged` include it.
 * Real folders and git repositories, `idea-pdp` run from the sources, the real app for `/decide`.
 */
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildTestApp, decide } from '../support/app.js';
import { cleanEnv, runProcess, runSourceCli } from '../support/cli.js';
import { tempFolder } from '../support/temp-folder.js';

/** Each test runs idea-pdp several times; on a loaded 2-core machine one run can take 20 s. */
const SLOW = 240_000;

const SERVERS = {
  version: 1,
  servers: {
    fs: {
      label: 'Fichiers',
      tools: { read_text_file: { access: 'read', label: 'Lire un fichier' }, write_file: { access: 'write' } },
    },
  },
};

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

async function writeFiles(root: string, entries: Record<string, unknown>): Promise<void> {
  for (const [name, content] of Object.entries(entries)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), typeof content === 'string' ? content : json(content));
  }
}

async function project(entries: Record<string, unknown>): Promise<string> {
  const dir = path.join(await tempFolder(), 'demo');
  await writeFiles(dir, entries);
  return dir;
}

async function git(repo: string, ...args: string[]): Promise<void> {
  const run = await runProcess('git', args, repo, 60_000, cleanEnv());
  expect(run, `git ${args.join(' ')}`).toMatchObject({ code: 0 });
}

describe('idea-pdp and .ideai/mcp-servers.json', () => {
  it(
    'check judges qualified names against the declared servers, with suggestions, in the policy and the test file',
    async () => {
      const dir = await project({
        '.ideai/mcp-servers.json': SERVERS,
        '.ideai/agents.json': [{ id: 'QA' }],
        '.ideai/mcp-tool-permissions.json': {
          version: 1,
          projectDefault: { allowedTools: ['idea_memory_read', 'fs/read_text_file', 'fs/resources/read'] },
          agents: [
            {
              agentId: 'QA',
              policy: {
                allowedTools: ['fs/read_txt_file', 'fss/write_file', 'files/write_file', 'read_text_file', 'db/query'],
                askTools: ['fs/write_file'],
              },
            },
          ],
        },
        '.ideai/mcp-tool-permissions.test.json': {
          version: 1,
          cases: [
            { requester: 'QA', tool: 'fs/write_fil', expect: 'deny' },
            { requester: 'QA', tool: 'fs/write_file', expect: 'ask' },
          ],
        },
      });
      const run = await runSourceCli(['check'], dir);
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const at = (file: string) => `^\\.ideai/${file.replace(/\./g, '\\.')}:\\d+:\\d+: warning unknown_tool: `;
      const policy = at('mcp-tool-permissions.json');
      expect(run.stdout.split('\n')).toEqual([
        expect.stringMatching(
          new RegExp(
            `${policy}unknown tool "fs/read_txt_file" at /agents/0/policy/allowedTools/0: server fs declares no tool "read_txt_file" in \\.ideai/mcp-servers\\.json, it grants nothing; did you mean fs/read_text_file\\?$`,
          ),
        ),
        expect.stringMatching(
          new RegExp(
            `${policy}unknown tool "fss/write_file" at /agents/0/policy/allowedTools/1: no server "fss" is declared in \\.ideai/mcp-servers\\.json, it grants nothing; did you mean fs/write_file\\?$`,
          ),
        ),
        expect.stringMatching(
          new RegExp(`${policy}unknown tool "files/write_file" .*no server "files" is declared.*; did you mean fs/write_file\\?$`),
        ),
        expect.stringMatching(
          new RegExp(`${policy}unknown tool "read_text_file" .*not in the IdeA MCP tool catalog.*; did you mean fs/read_text_file\\?$`),
        ),
        expect.stringMatching(
          new RegExp(`${policy}unknown tool "db/query" .*no server "db" is declared in \\.ideai/mcp-servers\\.json, it grants nothing$`),
        ),
        expect.stringMatching(
          new RegExp(
            `${at('mcp-tool-permissions.test.json')}unknown tool "fs/write_fil" at /cases/0/tool: .*did you mean fs/write_file\\?$`,
          ),
        ),
        'valid: 0 errors, 6 warnings in 1 project; --strict would make them 6 errors',
        '',
      ]);
      // Declared names, the implicit methods and a file named almost like the servers file.
      expect(run.stdout).not.toMatch(/"fs\/read_text_file"|"fs\/write_file"|resources\/read/);
      await writeFile(path.join(dir, '.ideai', 'mcp-server.json'), json(SERVERS));
      const strict = await runSourceCli(['check', '--strict'], dir);
      expect(strict.code).toBe(1);
      expect(strict.stdout).toContain(
        '.ideai/mcp-server.json:1:1: error misnamed_file: not a file the service reads: did you mean mcp-servers.json?',
      );
    },
    SLOW,
  );

  it(
    'an invalid servers file: check lists each of its problems where they are, decide and test deny with policy_invalid',
    async () => {
      const servers = [
        '{ "version": 1,',
        '  "servers": {',
        '    "fs": { "tools": {',
        '      "read_text_file": { "access": "rw" },',
        '      "resources/read": { "access": "read" } } },',
        '    "FS": { "tools": {} } } }',
        '',
      ].join('\n');
      const dir = await project({
        '.ideai/mcp-servers.json': servers,
        '.ideai/mcp-tool-permissions.json': { version: 1, projectDefault: { allowedTools: ['idea_memory_read', 'fs/read_text_file'] } },
        '.ideai/mcp-tool-permissions.test.json': {
          version: 1,
          cases: [{ requester: 'QA', tool: 'idea_memory_read', expect: 'allow' }],
        },
      });
      const check = await runSourceCli(['check'], dir);
      expect(check.code).toBe(1);
      const lines = check.stdout.split('\n');
      expect(lines).toEqual([
        expect.stringMatching(
          /^\.ideai\/mcp-tool-permissions\.json:\d+:\d+: warning unknown_tool: unknown tool "fs\/read_text_file" .*\.ideai\/mcp-servers\.json is invalid \(see its errors\), so it declares no server, it grants nothing$/,
        ),
        '.ideai/mcp-servers.json:4:27: error invalid_shape: expected one of read, write, got "rw" at /servers/fs/tools/read_text_file/access',
        expect.stringMatching(
          /^\.ideai\/mcp-servers\.json:5:7: error invalid_shape: the tool name "resources\/read" of server fs is reserved/,
        ),
        '.ideai/mcp-servers.json:6:5: error invalid_shape: unknown property "FS" at /servers (a server id matches ^[a-z][a-z0-9-]{0,31}$ and is not "idea")',
        'invalid: 3 errors, 1 warning in 1 project; --strict would make it an error',
        '',
      ]);

      const decided = await runSourceCli(['decide', '.', '--requester', 'QA', '--tool', 'idea_memory_read', '--format', 'line'], dir);
      expect(decided.stdout).toBe('deny policy_invalid none\n');

      const tested = await runSourceCli(['test'], dir);
      expect(tested.code).toBe(1);
      expect(tested.stdout).toContain('.ideai/mcp-servers.json:4:27: error invalid_shape: expected one of read, write, got "rw"');
      expect(tested.stdout).toMatch(/NOT RUN requester "QA" tool idea_memory_read: policy_invalid/);
      expect(tested.stdout).toContain('0 passed, 1 failed\nno case was run: the policy file is invalid\n');

      await writeFile(
        path.join(dir, '.ideai', 'mcp-servers.json'),
        '{ "version": 1,\n  "servers": { "fs": { "tools": {} },\n "fs": { "tools": {} } } }\n',
      );
      const duplicate = await runSourceCli(['check'], dir);
      expect(duplicate.stdout).toMatch(/^\.ideai\/mcp-servers\.json:3:2: error duplicate_key: duplicate key "fs" at line 3, column 2/m);
    },
    SLOW,
  );

  it(
    'decide and test decide <server>/<tool> exactly as /decide does on the same folder',
    async (t) => {
      const policy = {
        version: 1,
        projectDefault: { allowedTools: ['idea_memory_read', 'fs/read_text_file'] },
        agents: [
          {
            agentId: 'Dev',
            policy: {
              allowedTools: ['fs/read_text_file', 'fs/write_file'],
              conditions: { 'fs/write_file': { path: { in: ['/work/src/a.ts'] } } },
            },
          },
          { agentId: 'Ops', policy: { allowedTools: ['idea_memory_read'], askTools: ['fs/write_file'] } },
        ],
      };
      const { app, projectDir } = await buildTestApp(t, { demo: { servers: SERVERS, policy, agents: [{ id: 'Dev' }, { id: 'Ops' }] } });
      const dir = projectDir('demo');
      const calls = [
        { requester: 'QA', tool: 'fs/read_text_file', expect: 'allow' },
        { requester: 'QA', tool: 'fs/write_file', expect: 'deny' },
        { requester: 'Dev', tool: 'fs/write_file', arguments: { path: '/work/src/a.ts' }, expect: 'allow' },
        { requester: 'Dev', tool: 'fs/write_file', arguments: { path: '/etc/passwd' }, expect: 'deny' },
        { requester: 'Dev', tool: 'fs/write_file', expect: 'deny' },
        { requester: 'Ops', tool: 'fs/write_file', expect: 'ask' },
        { requester: 'Ops', tool: 'fs/read_text_file', expect: 'deny' },
        { requester: '', tool: 'fs/read_text_file', expect: 'allow' },
        { requester: '', tool: 'fs/resources/read', expect: 'allow' },
        { requester: 'Dev', tool: 'fs/read_txt_file', expect: 'deny' },
      ] as const;
      await writeFiles(dir, { '.ideai/mcp-tool-permissions.test.json': { version: 1, cases: calls } });
      const tested = await runSourceCli(['test', '.', '--format', 'json'], dir);
      expect(tested.code, tested.stdout + tested.stderr).toBe(0);
      const report = JSON.parse(tested.stdout) as {
        passed: number;
        cases: { tool: string; got: string; reason: string; message: string }[];
      };
      expect(report.passed).toBe(calls.length);
      for (const [index, call] of calls.entries()) {
        const served = await decide(app, {
          project: 'demo',
          requester: call.requester,
          tool: call.tool,
          ...('arguments' in call ? { arguments: call.arguments } : {}),
        });
        // On ask, the service opens a request and says so; offline none is opened: the reason is the same.
        const same = served.reason === 'approval_required' ? { reason: served.reason } : { reason: served.reason, message: served.message };
        expect(report.cases[index], `${call.requester} ${call.tool}`).toMatchObject(same);
      }

      const args = ['decide', '.', '--requester', 'Dev', '--tool', 'fs/write_file', '--arguments', '{"path":"/etc/passwd"}'];
      const offline = await runSourceCli(args, dir);
      const { decisionId: _id, ...served } = await decide(app, {
        project: 'demo',
        requester: 'Dev',
        tool: 'fs/write_file',
        arguments: { path: '/etc/passwd' },
      });
      expect(JSON.parse(offline.stdout)).toEqual(served);
      expect(served).toMatchObject({
        allow: false,
        reason: 'argument_not_allowed',
        argument: 'path',
        tool: { name: 'fs/write_file', access: 'write' },
      });
      expect(offline.stderr).toBe('');
    },
    SLOW,
  );

  it(
    'a repository walk reads each project’s servers file, and --staged the index’s, refusing a staged link',
    async () => {
      const repo = path.join(await tempFolder(), 'repo');
      await writeFiles(repo, {
        'apps/web/.ideai/mcp-servers.json': SERVERS,
        'apps/web/.ideai/mcp-tool-permissions.json': { version: 1, projectDefault: { allowedTools: ['fs/read_text_file'] } },
        'apps/web/.ideai/mcp-tool-permissions.test.json': {
          version: 1,
          cases: [
            { requester: 'QA', tool: 'fs/read_text_file', expect: 'allow' },
            { requester: 'QA', tool: 'fs/write_file', expect: 'deny' },
          ],
        },
        'services/api/.ideai/mcp-tool-permissions.json': { version: 1, projectDefault: { allowedTools: ['fs/read_text_file'] } },
      });
      const walked = await runSourceCli(['check', '.'], repo);
      expect(walked.stdout.split('\n')).toEqual([
        expect.stringMatching(
          /^services\/api\/\.ideai\/mcp-tool-permissions\.json:\d+:\d+: warning unknown_tool: unknown tool "fs\/read_text_file" .*no server "fs" is declared/,
        ),
        'valid: 0 errors, 1 warning in 2 projects; --strict would make it an error',
        '',
      ]);
      expect((await runSourceCli(['test', '.'], repo)).stdout).toBe('2 passed, 0 failed\n');

      await git(repo, 'init', '-q');
      await git(repo, 'add', '-A');
      // The working tree's servers file no longer declares the tool; the index still does.
      await writeFiles(repo, {
        'apps/web/.ideai/mcp-servers.json': { version: 1, servers: { fs: { tools: { write_file: { access: 'rw' } } } } },
      });
      expect((await runSourceCli(['check', '--staged', 'apps/web'], repo)).code).toBe(0);
      const unstaged = await runSourceCli(['check', 'apps/web'], repo);
      expect(unstaged.code).toBe(1);
      expect(unstaged.stdout).toContain(
        'apps/web/.ideai/mcp-servers.json:7:11: error invalid_shape: expected one of read, write, got "rw"',
      );

      // Staged as a link to a file of .ideai: git show prints the link's text, the service reads the target.
      const ideai = path.join(repo, 'apps', 'web', '.ideai');
      await rm(path.join(ideai, 'mcp-servers.json'));
      await writeFile(path.join(ideai, 'declared.json'), json(SERVERS));
      await symlink('declared.json', path.join(ideai, 'mcp-servers.json'));
      await git(repo, 'add', '-A');
      const linked = await runSourceCli(['check', '--staged', '.'], repo);
      expect(linked.code).toBe(1);
      expect(linked.stdout).toContain(
        'apps/web/.ideai/mcp-servers.json:1:1: error staged_link: staged as a symbolic link (git mode 120000)',
      );
      const tested = await runSourceCli(['test', '--staged', 'apps/web'], repo);
      expect(tested.code).toBe(1);
      expect(tested.stdout).toContain('error staged_link');
      expect(tested.stdout).toContain('no case was run');
    },
    SLOW,
  );
});
