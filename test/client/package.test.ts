/**
 * What an integrator does with the client package: `npm pack` in client/, install the tarball into
 * an empty project, then (a) import each entry point under TypeScript NodeNext and plain Node ESM,
 * (b) guard a real `McpServer` over stdio driven by the SDK's `Client`, (c) count the installed
 * runtime packages: undici and @sinclair/typebox, nothing else without the MCP SDK.
 *
 * The pack runs on a copy of client/ and schemas/ laid out as in the repository (with its
 * node_modules), so the test builds nothing inside the working tree that other runs may share.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const INSTALL_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];
const rootPackage = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as Record<
  'dependencies' | 'devDependencies',
  Record<string, string>
>;
const pinned = (name: string): string => `${name}@${rootPackage.dependencies[name] ?? rootPackage.devDependencies[name] ?? 'missing'}`;

/** The environment of a nested npm: none of the npm_* variables of an outer `npm test`. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.toLowerCase().startsWith('npm_')) env[key] = value;
  return { ...env, ...extra };
}

async function npm(cwd: string, args: string[]): Promise<string> {
  const { stdout } = await run('npm', args, { cwd, env: cleanEnv(), maxBuffer: 32 * 1024 * 1024, timeout: 300_000 });
  return stdout;
}

async function emptyProject(parent: string, name: string): Promise<string> {
  const dir = join(parent, name);
  await mkdir(dir);
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2));
  await writeFile(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        target: 'ES2022',
        strict: true,
        noEmit: true,
        skipLibCheck: false,
        types: ['node'],
      },
      files: ['check.ts'],
    }),
  );
  return dir;
}

async function tsc(cwd: string): Promise<{ ok: boolean; output: string }> {
  try {
    await run(process.execPath, [TSC, '-p', 'tsconfig.json'], { cwd, timeout: 300_000 });
    return { ok: true, output: '' };
  } catch (error) {
    const failed = error as { stdout?: string; stderr?: string };
    return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

/** Names of the packages `npm ls --omit=dev --all --parseable` lists, the project itself left out. */
async function runtimePackages(dir: string): Promise<string[]> {
  const paths = (await npm(dir, ['ls', '--omit=dev', '--all', '--parseable'])).split('\n').filter((line) => line.trim() !== '');
  const names = await Promise.all(
    paths.slice(1).map(async (path) => (JSON.parse(await readFile(join(path, 'package.json'), 'utf8')) as { name: string }).name),
  );
  return [...new Set(names)].sort();
}

const suite = suiteScope();
let work: string;
let tarball: string;
let pdp: RealPdp;

beforeAll(async () => {
  const folder = await mkdtemp(join(tmpdir(), 'pdp-client-package-'));
  suite.onTestFinished(() => rm(folder, { recursive: true, force: true }));
  work = folder;
  const repoCopy = join(work, 'repo');
  await mkdir(repoCopy);
  const skip = (source: string) => !/[/\\](dist|node_modules)([/\\]|$)/.test(source);
  await cp(join(REPO, 'client'), join(repoCopy, 'client'), { recursive: true, filter: skip });
  await cp(join(REPO, 'schemas'), join(repoCopy, 'schemas'), { recursive: true });
  // The root package.json too: its `"type": "module"` is what makes schemas/*.ts ES modules.
  for (const file of ['tsconfig.json', 'package.json']) await cp(join(REPO, file), join(repoCopy, file));
  await symlink(join(REPO, 'node_modules'), join(repoCopy, 'node_modules'), 'dir');
  const packed = JSON.parse(await npm(join(repoCopy, 'client'), ['pack', '--json', '--pack-destination', work])) as { filename: string }[];
  tarball = join(work, packed[0]?.filename ?? 'missing.tgz');
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
}, 600_000);

describe('the idea-mcp-permissions-client tarball, installed into an empty project', () => {
  it('holds the built entry points and their types, and nothing of the service', async () => {
    const listing = JSON.parse(await npm(work, ['pack', '--dry-run', '--json', tarball])) as { files: { path: string }[] }[];
    const files = (listing[0]?.files ?? []).map((file) => file.path).sort();
    for (const entry of ['client/index', 'client/mcp', 'client/openai', 'client/proxy/cli']) {
      expect(files).toContain(`dist/${entry}.js`);
      expect(files).toContain(`dist/${entry}.d.ts`);
    }
    expect(files).toContain('dist/schemas/api.js');
    expect(files).toContain('package.json');
    expect(files.filter((file) => !file.startsWith('dist/client/') && !file.startsWith('dist/schemas/'))).toEqual([
      'README.md',
      'package.json',
    ]);
    expect(files.some((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toBe(false);
  }, 120_000);

  it('has no install script: installing it runs nothing (no prepare, preinstall, install or postinstall)', async () => {
    const { stdout } = await run('tar', ['-xzOf', tarball, 'package/package.json']);
    const packed = JSON.parse(stdout) as { scripts?: Record<string, string> };
    const lifecycle = ['preinstall', 'install', 'postinstall', 'prepare'];
    expect(Object.keys(packed.scripts ?? {}).filter((name) => lifecycle.includes(name))).toEqual([]);
  }, 120_000);

  it('without the MCP SDK: imports under TypeScript NodeNext and Node ESM, and installs undici and typebox only', async () => {
    const dir = await emptyProject(work, 'openai-only');
    await npm(dir, ['install', tarball, ...INSTALL_FLAGS]);
    await npm(dir, ['install', '--save-dev', '@types/node@20.19.43', ...INSTALL_FLAGS]);

    // (c) The runtime packages: the client, undici, typebox; no fastify, no MCP SDK, no zod.
    const runtime = await runtimePackages(dir);
    expect(runtime).toEqual(['@sinclair/typebox', 'idea-mcp-permissions-client', 'undici']);

    // (a) TypeScript, NodeNext, strict, library types checked too.
    await writeFile(
      join(dir, 'check.ts'),
      [
        "import { PdpClient, PdpError, CLIENT_DENIAL_REASONS, type CheckResult, type ClientDecision } from 'idea-mcp-permissions-client';",
        "import { guardOpenAiToolCalls, type ChatCompletionToolCall, type GuardedToolCalls } from 'idea-mcp-permissions-client/openai';",
        "import type { McpGuardOptions } from 'idea-mcp-permissions-client/mcp';",
        '// @ts-expect-error the root entry point does not carry the MCP guard',
        "import { guardMcpServer } from 'idea-mcp-permissions-client';",
        "const client = new PdpClient({ baseUrl: 'http://127.0.0.1:8787', timeoutMs: 500 });",
        "const checked: Promise<CheckResult> = client.check({ project: 'demo' });",
        'const calls: ChatCompletionToolCall[] = [];',
        "const guarded: Promise<GuardedToolCalls<ChatCompletionToolCall>> = guardOpenAiToolCalls(calls, { client, project: 'demo', requester: 'QA', invoke: () => 'ok', concurrency: 2 });",
        "const options: Pick<McpGuardOptions, 'project'> = { project: () => 'demo' };",
        'const reasons: readonly string[] = CLIENT_DENIAL_REASONS;',
        'const first = (decision: ClientDecision): string => decision.message;',
        'export { checked, guarded, options, reasons, first, PdpError, guardMcpServer };',
        '',
      ].join('\n'),
    );
    const typed = await tsc(dir);
    expect(typed.output).toBe('');
    expect(typed.ok).toBe(true);

    // (a) Plain Node ESM, against the real service; the MCP entry point needs the SDK, the others do not.
    await writeFile(
      join(dir, 'check.mjs'),
      [
        "import * as root from 'idea-mcp-permissions-client';",
        "import * as openai from 'idea-mcp-permissions-client/openai';",
        'let mcp = null;',
        "try { await import('idea-mcp-permissions-client/mcp'); mcp = 'loaded'; } catch (error) { mcp = error.code; }",
        // A generous deadline: this is about the package, and the whole suite may load the machine.
        'const client = new root.PdpClient({ baseUrl: process.argv[2], token: process.argv[3], timeoutMs: 5000 });',
        "const decision = await client.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' });",
        "const check = await client.check({ project: 'demo' });",
        "const { outputs } = await openai.guardOpenAiToolCalls([{ id: 'c1', type: 'function', function: { name: 'idea_ticket_read', arguments: '{}' } }], { client, project: 'demo', requester: 'QA', invoke: () => 'read' });",
        'await client.close();',
        'console.log(JSON.stringify({ root: Object.keys(root).sort(), openai: Object.keys(openai), mcp, decision: [decision.allow, decision.reason], check: check.ok, output: outputs[0].content }));',
      ].join('\n'),
    );
    const { stdout } = await run(process.execPath, ['check.mjs', pdp.url, pdp.decideToken], { cwd: dir, timeout: 60_000 });
    const seen = JSON.parse(stdout) as Record<string, unknown>;
    expect(seen.root).toEqual(expect.arrayContaining(['PdpClient', 'PdpError', 'CLIENT_DENIAL_REASONS', 'refusalText']));
    expect(seen.root).not.toContain('guardMcpServer');
    expect(seen.root).not.toContain('guardOpenAiToolCalls');
    expect(seen.openai).toEqual(['guardOpenAiToolCalls']);
    // Both SDK lines are optional peers: the MCP entry imports neither, and guards the server object it is given.
    expect(seen.mcp).toBe('loaded');
    expect(seen).toMatchObject({ decision: [false, 'not_in_allowlist'], check: true, output: 'read' });
  }, 600_000);

  it('with the MCP SDK: types check, and a guarded McpServer over stdio answers the SDK Client', async () => {
    const dir = await emptyProject(work, 'mcp-server');
    await npm(dir, ['install', tarball, pinned('@modelcontextprotocol/sdk'), pinned('zod'), ...INSTALL_FLAGS]);
    await npm(dir, ['install', '--save-dev', '@types/node@20.19.43', ...INSTALL_FLAGS]);
    const installed = await readdir(join(dir, 'node_modules', 'idea-mcp-permissions-client'));
    expect(installed.sort()).toEqual(['README.md', 'dist', 'package.json']);

    const server = [
      "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';",
      "import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';",
      "import { z } from 'zod';",
      "import { PdpClient } from 'idea-mcp-permissions-client';",
      "import { guardMcpServer, type McpGuard } from 'idea-mcp-permissions-client/mcp';",
      "const pdp = new PdpClient({ baseUrl: process.env['PDP_URL'] ?? 'http://127.0.0.1:8787', token: process.env['PDP_DECIDE_TOKEN'], timeoutMs: 5000 });",
      "const server = new McpServer({ name: 'integrator', version: '1.0.0' });",
      "const guard: McpGuard = guardMcpServer(server, { client: pdp, project: 'demo', requester: process.env['IDEA_AGENT_ID'] ?? '', filterToolsList: true });",
      "for (const name of ['idea_ticket_read', 'idea_memory_write']) {",
      "  server.registerTool(name, { inputSchema: { text: z.string().optional() } }, () => ({ content: [{ type: 'text' as const, text: `${name} ran` }] }));",
      '}',
      "process.stdin.once('end', () => void server.close().finally(() => pdp.close()));",
      'await server.connect(new StdioServerTransport());',
      'export { guard };',
      '',
    ].join('\n');
    await writeFile(join(dir, 'check.ts'), server);
    const typed = await tsc(dir);
    expect(typed.output).toBe('');
    expect(typed.ok).toBe(true);
    // The same server as plain JavaScript: what runs is the installed package, not TypeScript.
    await writeFile(
      join(dir, 'server.mjs'),
      server.replace(', type McpGuard', '').replace('const guard: McpGuard', 'const guard').replace(' as const', ''),
    );

    const mcp = new Client({ name: 'integration-host', version: '1.0.0' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [join(dir, 'server.mjs')],
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', PDP_URL: pdp.url, PDP_DECIDE_TOKEN: pdp.decideToken, IDEA_AGENT_ID: 'QA' },
      stderr: 'pipe',
    });
    await mcp.connect(transport);
    try {
      expect((await mcp.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
      const read = await mcp.callTool({ name: 'idea_ticket_read', arguments: {} });
      expect(read).toMatchObject({ content: [{ type: 'text', text: 'idea_ticket_read ran' }] });
      const write = await mcp.callTool({ name: 'idea_memory_write', arguments: { text: 'x' } });
      expect(write.isError).toBe(true);
      expect((write.content as { text: string }[])[0]?.text).toMatch(/^Tool idea_memory_write is denied for agent QA in project demo/);
    } finally {
      await mcp.close();
    }

    // The proxy's bin, as a user runs it: `npx idea-mcp-proxy --help`, then in front of a Python server.
    const help = await run('npx', ['--no-install', 'idea-mcp-proxy', '--help'], { cwd: dir, env: cleanEnv(), timeout: 120_000 });
    expect(help.stdout).toMatch(/^Usage: idea-mcp-proxy --project <id> \[options\] -- <server command>/);
    const proxied = new Client({ name: 'integration-host', version: '1.0.0' });
    await proxied.connect(
      new StdioClientTransport({
        command: join(dir, 'node_modules', '.bin', 'idea-mcp-proxy'),
        args: [
          '--pdp',
          pdp.url,
          '--project',
          'demo',
          '--agent',
          'QA',
          '--',
          'python3',
          join(REPO, 'test', 'proxy', 'fixtures', 'python_mcp_server.py'),
        ],
        cwd: dir,
        env: { PATH: process.env.PATH ?? '', PDP_DECIDE_TOKEN: pdp.decideToken },
        stderr: 'pipe',
      }),
    );
    try {
      expect((await proxied.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read']);
      const refused = await proxied.callTool({ name: 'idea_memory_write', arguments: { text: 'x' } });
      expect(refused.isError).toBe(true);
      expect(refused._meta).toMatchObject({ 'io.ideai/decision': { reason: 'not_in_allowlist' } });
    } finally {
      await proxied.close();
    }
  }, 600_000);

  it('runs `idea-mcp-proxy` without the MCP SDK: it reads JSON-RPC itself', async () => {
    const dir = await emptyProject(work, 'proxy-without-sdk');
    await npm(dir, ['install', tarball, ...INSTALL_FLAGS]);
    const help = await run('npx', ['--no-install', 'idea-mcp-proxy', '--help'], { cwd: dir, env: cleanEnv(), timeout: 120_000 });
    expect(help.stdout).toContain('Usage: idea-mcp-proxy');
    // The server exits at once: the proxy exits with its code, having written nothing on stdout.
    const relayed = await run('npx', ['--no-install', 'idea-mcp-proxy', '--project', 'demo', '--', 'true'], {
      cwd: dir,
      env: cleanEnv(),
      timeout: 120_000,
    });
    expect(relayed.stdout).toBe('');
    expect(relayed.stderr).not.toContain('@modelcontextprotocol/sdk');
    expect(relayed.stderr).toContain('the MCP server exited with code 0');
  }, 600_000);
});
