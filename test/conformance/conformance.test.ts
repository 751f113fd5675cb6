/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.2.x) with
 * `--requirements 2025-11-25` and `--requirements 2026-07-28`, against the v2 example server of
 * this folder served over stdio with `serveStdio`, three ways:
 * * directly (the baseline): every scenario the revision scores passes, and only the unscored ones
 *   listed below (with why) fail;
 * * through `idea-mcp-proxy --server conf`, and
 * * guarded in process by `guardMcpServer`,
 * both with the real service deciding: the project's `.ideai/mcp-servers.json` declares the
 * example's tools as server `conf`, its policy allows them to the agent. Each must give exactly the
 * checks of the direct run, and every tool call must have been decided (and allowed) by the service.
 *
 * `npm run conformance` (not part of `npm test`): the suite needs Node >= 22 (`fs.globSync`), so
 * it runs on `CONFORMANCE_NODE` when set, else on the Node running vitest.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PdpClient } from '../../client/index.js';
import { ADMIN_TOKEN, closableScope, DECIDE_TOKEN, startTestServer } from '../support/app.js';
import { bundle } from './bundle.js';
import { EXAMPLE_TOOLS } from './example-server.js';
import { startStdioBridge, type StdioCommand } from './stdio-bridge.js';
import { failures, REVISIONS, requireSuiteNode, runSuite, summary, SUITE_VERSION, type Results, type Revision } from './suite-runner.js';

const PROJECT = 'conformance';
const AGENT = 'Conformance';
const SERVER = 'conf';

/** The tools the example lists that change something (the list-change triggers): declared `write`, the rest `read`. */
const WRITE_TOOLS = new Set<string>(['test_trigger_tool_change', 'test_trigger_prompt_change']);

/** The tasks extension's scenarios (io.modelcontextprotocol/tasks, SEP-2663), which 2026-07-28 runs without scoring them. */
const TASKS_SCENARIOS = [
  'tasks-lifecycle',
  'tasks-capability-negotiation',
  'tasks-wire-fields',
  'tasks-request-state-removal',
  'tasks-mrtr-input',
  'tasks-request-headers',
  'tasks-dispatch-and-envelope',
  'tasks-required-task-error',
  'tasks-mrtr-composition',
];

/**
 * Scenarios the requirement set runs without scoring them, which the example server fails, and
 * why. Every other scenario must pass directly; and one of these passing is a failure too (the
 * list would be stale).
 */
const UNSCORED_FAILURES: Record<Revision, Record<string, string>> = {
  '2025-11-25': {},
  '2026-07-28': {
    // Pending in the suite: its own reference fixture cannot pass them either.
    'http-header-validation':
      'pending: the Mcp-Method/Mcp-Name header validation of SEP-2243 is HTTP-only; the SDK checks it in createMcpHandler, not in the exported classifier the stdio bridge uses',
    'http-custom-header-server-validation': 'pending: needs a tool with x-mcp-header annotations (SEP-2243), HTTP-only',
    ...Object.fromEntries(
      TASKS_SCENARIOS.map((scenario) => [scenario, 'extension: the tasks extension is not in @modelcontextprotocol/server 2.4.0']),
    ),
  },
};

/**
 * Scenarios that call tools the example does not serve (`test_reconnection`; the tasks fixtures
 * `slow_compute`, `greet`, ...). Directly, the server answers its own "tool not found"; through
 * the proxy or the guard the service refuses the undeclared `conf/<tool>` first (`unknown_tool`,
 * a tool result with `isError`), so their checks differ from the direct run's, as they should: an
 * undeclared tool never reaches the server. The test checks those refusals instead.
 */
const CALL_UNSERVED_TOOLS: Record<Revision, string[]> = {
  '2025-11-25': ['server-sse-polling'],
  '2026-07-28': TASKS_SCENARIOS,
};

const failedScenarios = (results: Results) =>
  [...results]
    .filter(([, checks]) => checks.some((check) => check.status === 'FAILURE'))
    .map(([scenario]) => scenario)
    .sort();

const SERVERS_FILE = {
  version: 1,
  servers: {
    [SERVER]: {
      label: 'Serveur de conformité',
      tools: Object.fromEntries(EXAMPLE_TOOLS.map((tool) => [tool, { access: WRITE_TOOLS.has(tool) ? 'write' : 'read' }])),
    },
  },
};
/** What the agent may call: every tool of the example, and the resources and prompts it serves. */
const ALLOWED = [...EXAMPLE_TOOLS.map((tool) => `${SERVER}/${tool}`), `${SERVER}/resources/read`, `${SERVER}/prompts/get`];
const POLICY = { version: 1, agents: [{ agentId: AGENT, policy: { allowedTools: ALLOWED } }] };

const scope = closableScope();
let folder: string;
let server: string;
let proxy: string;
let pdpUrl: string;
let admin: PdpClient;

function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('PDP_')) env[key] = value;
  return env;
}

/**
 * The deadline of one decision, proxy and guard alike: 500 ms by default, which a loaded 2-core
 * machine running the suite, the bridge and the service at once overran here (a `prompts/get`
 * refused `pdp_unavailable`, as it must be). The run checks conformance, not latency.
 */
const DECISION_DEADLINE_MS = '5000';

const commands = {
  direct: (): StdioCommand => ({ command: process.execPath, args: [server], env: baseEnv(), cwd: folder }),
  proxy: (): StdioCommand => ({
    command: process.execPath,
    args: [
      proxy,
      ...['--pdp', pdpUrl, '--project', PROJECT, '--agent', AGENT, '--server', SERVER, '--timeout-ms', DECISION_DEADLINE_MS],
      ...['--', process.execPath, server],
    ],
    env: { ...baseEnv(), PDP_DECIDE_TOKEN: DECIDE_TOKEN },
    cwd: folder,
  }),
  guard: (): StdioCommand => ({
    command: process.execPath,
    args: [server],
    env: {
      ...baseEnv(),
      CONFORMANCE_PDP_URL: pdpUrl,
      CONFORMANCE_PROJECT: PROJECT,
      CONFORMANCE_SERVER: SERVER,
      CONFORMANCE_TIMEOUT_MS: DECISION_DEADLINE_MS,
      IDEA_AGENT_ID: AGENT,
      PDP_DECIDE_TOKEN: DECIDE_TOKEN,
    },
    cwd: folder,
  }),
};

async function runThroughBridge(stdio: StdioCommand, revision: Revision): Promise<Results> {
  const bridge = await startStdioBridge(stdio);
  try {
    return await runSuite(bridge.url, revision);
  } finally {
    await bridge.close();
  }
}

/** The service's decisions since the last call (decision ids already seen): the tools allowed, and the refusals. */
async function decidedSince(seen: Set<string>) {
  const decisions = await admin.recentDecisions(PROJECT, { limit: 1000 });
  const fresh = decisions.filter((decision) => !seen.has(decision.decisionId));
  for (const decision of fresh) seen.add(decision.decisionId);
  return {
    allowed: [...new Set(fresh.filter((decision) => decision.allow).map((decision) => decision.tool))].sort(),
    refused: fresh.filter((decision) => !decision.allow).map((decision) => ({ tool: decision.tool, reason: decision.reason })),
    requesters: [...new Set(fresh.map((decision) => decision.requester))],
  };
}

/** The results without the scenarios that call tools the example does not serve. */
const served = (results: Results, revision: Revision) =>
  summary(new Map([...results].filter(([scenario]) => !CALL_UNSERVED_TOOLS[revision].includes(scenario))));

beforeAll(async () => {
  requireSuiteNode();
  folder = await mkdtemp(path.join(os.tmpdir(), 'conformance-'));
  [server, proxy] = await Promise.all([bundle('test/conformance/example-stdio.ts', folder), bundle('client/proxy/cli.ts', folder)]);
  const service = await startTestServer(
    scope,
    { [PROJECT]: { policy: POLICY, servers: SERVERS_FILE, agents: { agents: [{ id: AGENT, name: AGENT }] } } },
    { decideToken: DECIDE_TOKEN },
  );
  pdpUrl = service.baseUrl;
  admin = new PdpClient({ baseUrl: pdpUrl, token: ADMIN_TOKEN });
});
afterAll(async () => {
  await admin.close();
  await scope.close();
  await rm(folder, { recursive: true, force: true });
});

// A whole run took 181 s (407 s under load) on a shared 2-core machine: 2025-11-25 opens a
// process per session (two through the proxy), 2026-07-28 shares one.
describe.each(REVISIONS)(`MCP conformance suite ${SUITE_VERSION}, --requirements %s, v2 example server over stdio`, (revision) => {
  let direct: Results;
  const seen = new Set<string>();

  beforeAll(async () => {
    direct = await runThroughBridge(commands.direct(), revision);
  }, 900_000);

  it('directly: every scored scenario passes; only the listed unscored ones fail', () => {
    expect(direct.size).toBeGreaterThanOrEqual(30);
    expect(failedScenarios(direct), failures(direct).join('\n')).toEqual(Object.keys(UNSCORED_FAILURES[revision]).sort());
  });

  it.each(['proxy', 'guard'] as const)(
    'through %s with the real service deciding: exactly the checks of the direct run, every tool call allowed by the service',
    { timeout: 900_000 },
    async (way) => {
      await decidedSince(seen);
      const guarded = await runThroughBridge(commands[way](), revision);
      expect(served(guarded, revision), failures(guarded).join('\n')).toEqual(served(direct, revision));
      const decided = await decidedSince(seen);
      expect(decided.requesters).toEqual([AGENT]);
      // Every tool the suite calls went through the service: the example's were allowed, any other refused as undeclared.
      expect(decided.allowed).toContain(`${SERVER}/test_simple_text`);
      expect(decided.allowed.filter((tool) => !ALLOWED.includes(tool))).toEqual([]);
      expect(decided.refused.filter((refusal) => refusal.reason !== 'unknown_tool' || ALLOWED.includes(refusal.tool))).toEqual([]);
      expect(decided.refused.length).toBeGreaterThan(0);
      if (way === 'proxy') expect(decided.allowed).toEqual(expect.arrayContaining([`${SERVER}/resources/read`, `${SERVER}/prompts/get`]));
    },
  );
});
