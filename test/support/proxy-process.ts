/**
 * `idea-mcp-proxy` as a host starts it: a child process (the TypeScript source through tsx) in
 * front of a real server, driven either by the MCP SDK's own `Client` over stdio or by raw lines.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { TestScope } from './app.js';
import { REPO_ROOT } from './service-process.js';
import { waitFor } from './wait.js';

export const PROXY_CLI = path.join(REPO_ROOT, 'client', 'proxy', 'cli.ts');
export const PYTHON_SERVER = path.join(REPO_ROOT, 'test', 'proxy', 'fixtures', 'python_mcp_server.py');

/** The proxy's command line: node, tsx, the CLI, its options, `--`, the server. */
export function proxyArgs(options: readonly string[], server: readonly string[] = ['python3', PYTHON_SERVER]): string[] {
  return ['--import', 'tsx', PROXY_CLI, ...options, '--', ...server];
}

/** The environment of the proxy: this process's, without PDP_* or IDEA_* variables, plus `extra`. */
export function proxyEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('PDP_') && !key.startsWith('IDEA_')) env[key] = value;
  }
  return { ...env, ...extra };
}

/** The SDK's `Client` connected to the proxy over stdio; counts the `tools/list_changed` notifications it gets. */
export async function connectThroughProxy(options: readonly string[], env: Record<string, string>, server?: readonly string[]) {
  const client = new Client({ name: 'proxy-test-host', version: '1.0.0' });
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    listChanged += 1;
  });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: proxyArgs(options, server),
    cwd: REPO_ROOT,
    env: proxyEnv(env),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await client.connect(transport);
  return {
    client,
    listChanged: () => listChanged,
    stderr: () => stderr,
    close: () => client.close(),
  };
}

/** The proxy spawned directly: lines written to its stdin, every line of its stdout parsed as JSON. */
export function spawnProxy(options: readonly string[], env: Record<string, string>, server?: readonly string[]) {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, proxyArgs(options, server), {
    cwd: REPO_ROOT,
    env: proxyEnv(env),
  });
  const lines: string[] = [];
  let pending = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal });
    });
  });
  /** Every stdout line as JSON: a line that is not JSON fails the test (stdout carries JSON-RPC only). */
  const messages = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    child,
    exited,
    messages,
    /** Every complete stdout line, as written. */
    lines: () => [...lines],
    stderr: () => stderr,
    send: (message: unknown) => child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`),
    /** Waits for the answer to request `id`. */
    answerTo: async (id: number | string, timeoutMs = 20_000) => {
      await waitFor(
        () => messages().some((message) => message.id === id && !('method' in message)),
        `an answer to ${String(id)}`,
        timeoutMs,
      );
      return messages().find((message) => message.id === id && !('method' in message)) as Record<string, unknown>;
    },
  };
}

/**
 * The proxy in front of the Python server (or `server`) for `agent` in project `demo` of a real service (3 s
 * deadline, its decide token), killed at the end of the test if it is still running.
 */
export function spawnProxyFor(
  scope: TestScope,
  service: { url: string; decideToken: string },
  agent: string,
  options: readonly string[] = [],
  env: Record<string, string> = {},
  server?: readonly string[],
) {
  const proxy = spawnProxy(
    ['--pdp', service.url, '--project', 'demo', '--agent', agent, '--timeout-ms', '3000', ...options],
    { PDP_DECIDE_TOKEN: service.decideToken, ...env },
    server,
  );
  scope.onTestFinished(async () => {
    if (proxy.child.exitCode === null && proxy.child.signalCode === null) {
      proxy.child.kill('SIGKILL');
      await proxy.exited;
    }
  });
  return proxy;
}

export const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-host', version: '1.0.0' } },
};
