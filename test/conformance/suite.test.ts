/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, every scenario:
 * `--suite all`) against the reference server of this folder over Streamable HTTP, three ways:
 * unguarded; guarded with a client that allows everything, which must pass exactly the checks
 * the unguarded server passes (the wrapping alone changes nothing the suite sees); guarded by the
 * real service (a child process) with a policy, which must fail exactly the scenarios that call
 * a tool, every one of them refused by the service, and nothing else.
 *
 * `npm run conformance` (not part of `npm test`): the suite needs Node >= 22 (`fs.globSync`), so
 * it runs on `CONFORMANCE_NODE` when set, else on the Node running vitest.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PdpClient } from '../../client/index.js';
import { guardMcpServer, type McpGuardOptions } from '../../client/mcp.js';
import type { ClientDecision } from '../../client/decision.js';
import { TOOL_CATALOG } from '../../schemas/catalog.js';
import { REPO_ROOT, startService, type ServiceProcess } from '../support/service-process.js';
import { allowDecision } from './allow-all-pdp.js';
import { EVERYTHING_TOOLS } from './everything-tools.js';
import { failedScenarios, requireSuiteNode, runSuite, summary, SUITE_VERSION, type Results } from './suite-runner.js';
import { startEverythingServer, type SessionGuard } from './everything-server.js';

/**
 * The scenarios the real service makes fail: the suite's tools are not IdeA tools, so the service
 * refuses every call (`unknown_tool`, whatever the policy grants), and with `filterToolsList` the
 * guard lists none of them (`json-schema-2020-12` looks for its tool in the list). Three more
 * scenarios are refused too yet pass, because their checks only look at the shape of the answer:
 * `tools-call-simple-text` (a text content), `tools-call-error` (`isError: true`) and `tools-list`
 * (a well-formed, here empty, list); the test checks that their calls were refused all the same.
 */
const REFUSED_SCENARIOS = [
  'tools-call-image',
  'tools-call-audio',
  'tools-call-embedded-resource',
  'tools-call-mixed-content',
  'tools-call-with-logging',
  'tools-call-with-progress',
  'tools-call-sampling',
  'tools-call-elicitation',
  'elicitation-sep1034-defaults',
  'elicitation-sep1330-enums',
  'server-sse-polling',
  'json-schema-2020-12',
].sort();

/** A stand-in for `PdpClient` that allows every call and lists every tool of the reference server. */
const allowEverything: McpGuardOptions['client'] = {
  timeoutMs: 1000,
  decide: (query) => Promise.resolve(allowDecision(query, 'allow-everything')),
  decideBatch: () => Promise.reject(new Error('not used by the MCP guard')),
  effective: (project, requester) =>
    Promise.resolve({
      project,
      requester: { id: requester, kind: 'agent' },
      source: 'agent-override',
      allowedTools: EVERYTHING_TOOLS.map((tool) => tool.name),
      deniedTools: [],
      revision: 'allow-everything',
    }),
};

function guardWith(options: McpGuardOptions): SessionGuard {
  return (server: McpServer) => guardMcpServer(server, options);
}

async function runAgainst(guard?: SessionGuard) {
  const server = await startEverythingServer(guard);
  try {
    return { results: await runSuite(server.url), protocolVersions: [...server.protocolVersions].sort() };
  } finally {
    await server.close();
  }
}

describe(`MCP conformance suite ${SUITE_VERSION}, guarded reference server over Streamable HTTP`, () => {
  let unguarded: Awaited<ReturnType<typeof runAgainst>>;

  beforeAll(async () => {
    requireSuiteNode();
    unguarded = await runAgainst();
  });

  it('the unguarded reference server passes every scenario (the baseline)', () => {
    expect(failedScenarios(unguarded.results)).toEqual([]);
    expect(unguarded.results.size).toBeGreaterThanOrEqual(30);
  });

  it('guarded with a client that allows everything: exactly the checks of the unguarded server', async () => {
    const decisions: ClientDecision[] = [];
    const guarded = await runAgainst(
      guardWith({
        client: allowEverything,
        project: 'demo',
        requester: 'Conformance',
        filterToolsList: true,
        onDecision: (d) => decisions.push(d),
      }),
    );
    expect(summary(guarded.results)).toEqual(summary(unguarded.results));
    // Every tool the suite calls went through the guard (it only lists json_schema_2020_12_tool).
    const decided = [...new Set(decisions.map((decision) => decision.tool.name))].sort();
    expect(decided).toEqual(
      EVERYTHING_TOOLS.map((tool) => tool.name)
        .filter((name) => name !== 'json_schema_2020_12_tool')
        .sort(),
    );
  });

  describe('guarded by the real service', () => {
    let service: ServiceProcess;
    let admin: PdpClient;
    let decider: PdpClient;
    let root: string;

    beforeAll(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'conformance-projects-'));
      await cp(path.join(REPO_ROOT, 'examples', 'projects'), root, { recursive: true });
      service = await startService({
        PDP_PROJECTS_ROOT: root,
        PDP_STATE_DIR: root,
        PDP_ADMIN_TOKEN: 'conformance-admin-token-0123456789',
        PDP_DECIDE_TOKEN: 'conformance-decide-token-0123456789',
      });
      admin = new PdpClient({ baseUrl: service.baseUrl, token: 'conformance-admin-token-0123456789' });
      decider = new PdpClient({ baseUrl: service.baseUrl, token: 'conformance-decide-token-0123456789' });
      // The widest policy there is: every tool of the catalog for this agent.
      await admin.putAgent(
        'demo',
        'Conformance',
        TOOL_CATALOG.map((tool) => tool.name),
      );
    });
    afterAll(async () => {
      await Promise.all([admin.close(), decider.close()]);
      await service.stop();
      await rm(root, { recursive: true, force: true });
    });

    it('fails exactly the scenarios whose tool calls the service refuses, nothing else', async () => {
      const decisions: ClientDecision[] = [];
      const guarded = await runAgainst(
        guardWith({
          client: decider,
          project: 'demo',
          requester: 'Conformance',
          filterToolsList: true,
          onDecision: (d) => decisions.push(d),
        }),
      );
      expect(failedScenarios(guarded.results)).toEqual(REFUSED_SCENARIOS);
      // Every other check is what the unguarded server got.
      const untouched = (results: Results) => summary(new Map([...results].filter(([scenario]) => !REFUSED_SCENARIOS.includes(scenario))));
      expect(untouched(guarded.results)).toEqual(untouched(unguarded.results));
      const refusedTools = new Set(decisions.map((decision) => decision.tool.name));
      expect(refusedTools).toContain('test_simple_text');
      expect(refusedTools).toContain('test_error_handling');
      expect(decisions.filter((decision) => decision.allow || decision.reason !== 'unknown_tool')).toEqual([]);
    });
  });
});
