/**
 * Crash safety (docs/api.md#writes: a success is answered only once the data is durable): the real service
 * runs as a child process, takes a stream of concurrent agent writes, and is SIGKILLed in the
 * middle. After each kill the policy file must be a valid document holding every acknowledged
 * write, no stray file may matter, and the restarted service must decide accordingly. The
 * restarted service is the next victim, so three kill points cost four starts; a fifth start
 * removes the temp files the kills left, once they are old enough.
 */
import { Value } from '@sinclair/typebox/value';
import { readdir, readFile, stat, utimes } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyDocumentSchema, type Decision, type PolicyDocument } from '../../schemas/index.js';
import { makeTestProjects, suiteScope, type TestProjects } from '../support/app.js';
import { START_DEADLINE_MS, startService, type ServiceProcess } from '../support/service-process.js';
import { READ_TOOLS, WRITE_TOOLS } from '../support/tools.js';
import { elapse, waitFor } from '../support/wait.js';

const ADMIN = 'crash-admin-token-0123456789abcdef';
const IN_FLIGHT = 4;
/** Kill points: after this many acknowledged writes, wait this long, then SIGKILL. */
const KILL_POINTS = [
  { afterAcks: 5, delayMs: 0 },
  { afterAcks: 10, delayMs: 40 },
  { afterAcks: 20, delayMs: 150 },
];
/** Temp files of `writeFileAtomic`: `.mcp-tool-permissions.json.<pid>.<hex>.tmp`. */
const TEMP_FILE = /^\.mcp-tool-permissions\.json\.\d+\.[0-9a-f]{12}\.(tmp|aside)$/;

const suite = suiteScope();
let made: TestProjects;
let env: Record<string, string>;
const running: ServiceProcess[] = [];

beforeAll(async () => {
  made = await makeTestProjects(suite, { demo: null });
  env = {
    PDP_PROJECTS_ROOT: made.root,
    PDP_ADMIN_TOKEN: ADMIN,
    PDP_STATE_DIR: path.join(made.outer, 'state'),
    PDP_LOG_LEVEL: 'warn',
  };
});

afterAll(async () => {
  await Promise.all(running.map((service) => service.stop(2_000)));
});

/** The allowlist written for agent number `n`: one write tool and one read tool, both from the catalog. */
const toolsFor = (n: number): string[] => [READ_TOOLS[n % READ_TOOLS.length] as string, WRITE_TOOLS[n % WRITE_TOOLS.length] as string];
const agentName = (n: number): string => `Agent${n}`;

interface StreamResult {
  acknowledged: number[];
  failed: number[];
}

/** Sends PUT agent writes with `IN_FLIGHT` in flight until the service dies, then reports. */
async function writeUntilKilled(
  service: ServiceProcess,
  firstAgent: number,
  kill: { afterAcks: number; delayMs: number },
): Promise<StreamResult & { next: number }> {
  const result: StreamResult = { acknowledged: [], failed: [] };
  let next = firstAgent;
  let dead = false;
  void service.exited.then(() => (dead = true));
  const worker = async (): Promise<void> => {
    while (!dead) {
      const n = next++;
      try {
        const response = await fetch(`${service.baseUrl}/projects/demo/mcp-tool-permissions/agents/${agentName(n)}`, {
          method: 'PUT',
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
          body: JSON.stringify({ allowedTools: toolsFor(n) }),
        });
        await response.arrayBuffer();
        if (response.status === 200) result.acknowledged.push(n);
        else {
          // Anything but 200 before the kill is a bug; after it there is no answer at all.
          expect.soft(response.status, `write ${n}`).toBe(200);
          result.failed.push(n);
        }
      } catch {
        result.failed.push(n);
      }
    }
  };
  const workers = Array.from({ length: IN_FLIGHT }, worker);
  await waitFor(() => result.acknowledged.length >= kill.afterAcks, `${kill.afterAcks} acknowledged writes`, 30_000, 1);
  if (kill.delayMs > 0) await elapse(kill.delayMs); // the kill lands this long after the acknowledgements (the scenario)
  service.child.kill('SIGKILL');
  expect(await service.exited).toEqual({ code: null, signal: 'SIGKILL' });
  await Promise.all(workers);
  return { ...result, next };
}

async function readPolicy(): Promise<PolicyDocument> {
  const text = await readFile(made.policyPath('demo'), 'utf8');
  const document: unknown = JSON.parse(text);
  expect(Value.Check(PolicyDocumentSchema, document), text.slice(0, 300)).toBe(true);
  return document as PolicyDocument;
}

async function decideAll(service: ServiceProcess, agents: number[]): Promise<Decision[]> {
  const decisions: Decision[] = [];
  for (let start = 0; start < agents.length; start += 100) {
    const queries = agents
      .slice(start, start + 100)
      .map((n) => ({ project: 'demo', requester: agentName(n), tool: toolsFor(n)[1] as string }));
    const response = await fetch(`${service.baseUrl}/decide/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ queries }),
    });
    expect(response.status).toBe(200);
    decisions.push(...((await response.json()) as { decisions: Decision[] }).decisions);
  }
  return decisions;
}

describe('SIGKILL in the middle of concurrent writes', () => {
  it(
    'keeps every acknowledged write durable and the file valid; the restarted service decides accordingly',
    { timeout: (KILL_POINTS.length + 1) * START_DEADLINE_MS + 60_000 },
    async () => {
      const acknowledged = new Set<number>();
      let next = 0;
      let service = await startService(env);
      running.push(service);
      for (const kill of KILL_POINTS) {
        const stream = await writeUntilKilled(service, next, kill);
        next = stream.next;
        for (const n of stream.acknowledged) acknowledged.add(n);
        expect(stream.acknowledged.length).toBeGreaterThanOrEqual(kill.afterAcks);

        // On disk: the policy file (or, killed inside a compare-and-swap's microseconds, the file moved aside) and temp files.
        const entries = await readdir(path.join(made.root, 'demo', '.ideai'));
        for (const entry of entries) {
          if (entry === 'mcp-tool-permissions.json') continue;
          expect(entry, 'only the policy file and temp files of interrupted writes').toMatch(TEMP_FILE);
        }

        // The restarted service (same env) puts a file moved aside back, ignores temp files and decides from the file.
        service = await startService(env);
        running.push(service);

        // One valid document holding every acknowledged write (it may hold unacknowledged ones).
        const document = await readPolicy();
        const written = new Map((document.agents ?? []).map((agent) => [agent.agentId, agent.policy.allowedTools]));
        for (const n of acknowledged) {
          expect(written.get(agentName(n)), `acknowledged write ${n}`).toEqual(toolsFor(n));
        }
        for (const [agentId, tools] of written) {
          const n = Number(agentId.slice('Agent'.length));
          expect(tools, agentId).toEqual(toolsFor(n));
        }
        const view = (await (await fetch(`${service.baseUrl}/projects/demo/mcp-tool-permissions`)).json()) as {
          status: string;
          fileExists: boolean;
          agents: { agentId: string; mode: string }[];
        };
        expect(view).toMatchObject({ status: 'ok', fileExists: true });
        expect(
          view.agents
            .filter((agent) => agent.mode === 'override')
            .map((agent) => agent.agentId)
            .sort(),
        ).toEqual([...written.keys()].sort());
        const everyone = Array.from({ length: next }, (_, n) => n);
        const decisions = await decideAll(service, everyone);
        everyone.forEach((n, index) => {
          const decision = decisions[index] as Decision;
          expect(decision.allow, `${agentName(n)} ${decision.reason}`).toBe(written.has(agentName(n)));
          if (acknowledged.has(n)) expect(decision).toMatchObject({ allow: true, source: 'agent-override' });
        });
      }
      expect(acknowledged.size).toBeGreaterThanOrEqual(KILL_POINTS.reduce((sum, kill) => sum + kill.afterAcks, 0));
      // The admin token came from the environment: no token file was generated.
      await expect(stat(path.join(env.PDP_STATE_DIR as string, 'admin-token'))).rejects.toMatchObject({ code: 'ENOENT' });
      await service.stop();

      // Leftovers of interrupted writes are removed by the next start once old enough (temp files: a minute old).
      const ideai = path.join(made.root, 'demo', '.ideai');
      const leftovers = (await readdir(ideai)).filter((entry) => TEMP_FILE.test(entry));
      const longAgo = new Date(Date.now() - 120_000);
      for (const entry of leftovers) await utimes(path.join(ideai, entry), longAgo, longAgo);
      service = await startService(env);
      running.push(service);
      await waitFor(async () => (await readdir(ideai)).every((entry) => !TEMP_FILE.test(entry)), 'leftover temp files removed', 15_000);
      expect(await readdir(ideai)).toEqual(['mcp-tool-permissions.json']);
      await service.stop();
    },
  );
});
