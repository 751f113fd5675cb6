/**
 * Races over a real socket: decisions under concurrent load while the policy changes are never
 * wrong and never fail. Agent Y's policy never changes, so every answer about Y is exact; agent X
 * is granted and withdrawn tool T in a loop, so every answer about X must be the state of the
 * revision it names. And a decision answered after a write's 200 reflects that write.
 */
import { Pool } from 'undici';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Decision, PermissionsView } from '../../schemas/index.js';
import { policyText } from '../support/files.js';
import { startTestServer, suiteScope } from '../support/app.js';
import { ALL_TOOLS, READ_TOOLS } from '../support/tools.js';

const ADMIN = 'races-admin-token-0123456789abcdef';
const T = 'idea_memory_write';
const Y_TOOLS = new Set(['idea_ticket_read', 'idea_memory_write', 'idea_ask_agent']);
const DECISIONS = 2_000;
const CONCURRENCY = 32;
const MIN_WRITES = 10;

const suite = suiteScope();
let pool: Pool;

beforeAll(async () => {
  const made = await startTestServer(suite, { demo: policyText([...READ_TOOLS], { Y: [...Y_TOOLS] }) }, { adminToken: ADMIN });
  const opened = new Pool(made.baseUrl, { connections: 16 });
  suite.onTestFinished(() => opened.close());
  pool = opened;
});

interface Reply<Body> {
  status: number;
  body: Body;
  etag: string | undefined;
}

async function json(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, admin = false): Promise<Reply<unknown>> {
  const response = await pool.request({
    method,
    path,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(admin ? { authorization: `Bearer ${ADMIN}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const etag = response.headers.etag;
  return {
    status: response.statusCode,
    body: await response.body.json(),
    etag: typeof etag === 'string' ? etag.replaceAll('"', '') : undefined,
  };
}

/** The answers of the routes this test calls, as their schemas give them. */
const asView = (reply: Reply<unknown>): Reply<PermissionsView> => ({ ...reply, body: reply.body as PermissionsView });
const asDecision = (reply: Reply<unknown>): Reply<Decision> => ({ ...reply, body: reply.body as Decision });
const asDecisions = (reply: Reply<unknown>): Reply<{ decisions: Decision[] }> => ({
  ...reply,
  body: reply.body as { decisions: Decision[] },
});

const xUrl = '/projects/demo/mcp-tool-permissions/agents/X';
const grantX = async () => asView(await json('PUT', xUrl, { allowedTools: [...READ_TOOLS, T] }, true));
const withdrawX = async () => asView(await json('DELETE', xUrl, undefined, true));
const decideOne = async (query: { project: string; requester: string; tool: string }) => asDecision(await json('POST', '/decide', query));

/** Y's answer is fixed whatever X's state is. */
function checkY(decision: Decision, tool: string): void {
  const allow = Y_TOOLS.has(tool);
  expect(decision, `Y ${tool}`).toMatchObject({ allow, reason: allow ? 'allowed' : 'not_in_allowlist', source: 'agent-override' });
}

describe('decisions while the policy changes', () => {
  it(`answers ${DECISIONS} concurrent decisions right while X is granted and withdrawn in a loop`, async () => {
    /** revision → whether X may call T in it (from every write's answer, and the start state). */
    const xAllowedAt = new Map<string, boolean>();
    const record = (revision: string, allowed: boolean): void => {
      expect(xAllowedAt.get(revision) ?? allowed, `revision ${revision} seen with both X states`).toBe(allowed);
      xAllowedAt.set(revision, allowed);
    };
    const initial = asView(await json('GET', '/projects/demo/mcp-tool-permissions'));
    record(initial.body.revision, false);

    const decided = new AbortController();
    let writes = 0;
    const writer = (async () => {
      while (!decided.signal.aborted) {
        const granting = writes % 2 === 0;
        const response = granting ? await grantX() : await withdrawX();
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        const x = response.body.agents.find((agent) => agent.agentId === 'X');
        record(response.body.revision, x?.allowedTools.includes(T) ?? false);
        expect(x?.mode ?? 'inherit').toBe(granting ? 'override' : 'inherit');
        writes++;
      }
    })();

    const xAnswers: Decision[] = [];
    const failures: string[] = [];
    let issued = 0;
    const worker = async (): Promise<void> => {
      // At least DECISIONS decisions, and on until enough writes interleaved (a loaded machine may be slow to write).
      while (issued < DECISIONS || writes < MIN_WRITES) {
        const n = issued++;
        if (n % 20 === 0) {
          // A batch is decided against one state: X and Y in it share one revision.
          const queries = Array.from({ length: 10 }, (_, i) => ({
            project: 'demo',
            requester: i % 2 ? 'X' : 'Y',
            tool: i % 2 ? T : (ALL_TOOLS[i] as string),
          }));
          const response = asDecisions(await json('POST', '/decide/batch', { queries }));
          if (response.status !== 200) failures.push(`batch ${response.status}`);
          const revisions = new Set(response.body.decisions.map((decision) => decision.revision));
          expect(revisions.size).toBe(1);
          response.body.decisions.forEach((decision, i) => {
            if (i % 2) xAnswers.push(decision);
            else checkY(decision, ALL_TOOLS[i] as string);
          });
          continue;
        }
        const requester = n % 2 ? 'X' : 'Y';
        const tool = requester === 'X' ? T : (ALL_TOOLS[n % ALL_TOOLS.length] as string);
        const response = await decideOne({ project: 'demo', requester, tool });
        if (response.status !== 200) failures.push(`${requester} ${response.status} ${JSON.stringify(response.body)}`);
        else if (requester === 'Y') checkY(response.body, tool);
        else xAnswers.push(response.body);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    decided.abort();
    await writer;

    expect(failures).toEqual([]);
    expect(writes, 'enough writes interleaved with the decisions').toBeGreaterThanOrEqual(MIN_WRITES);
    for (const decision of xAnswers) {
      expect(decision).toMatchObject(
        decision.allow ? { reason: 'allowed', source: 'agent-override' } : { reason: 'not_in_allowlist', source: 'project-default' },
      );
      expect(xAllowedAt.has(decision.revision), `X answered with an unknown revision ${decision.revision}`).toBe(true);
      expect(decision.allow, `X at revision ${decision.revision}`).toBe(xAllowedAt.get(decision.revision));
    }
    // Not vacuous: X was seen both allowed and denied during the run.
    expect(xAnswers.some((decision) => decision.allow)).toBe(true);
    expect(xAnswers.some((decision) => !decision.allow)).toBe(true);
  });

  it('reflects a write in the very next decision (50 grant/withdraw rounds, sequential)', async () => {
    for (let round = 0; round < 50; round++) {
      const granted = await grantX();
      expect(granted.status).toBe(200);
      const afterGrant = await decideOne({ project: 'demo', requester: 'X', tool: T });
      expect(afterGrant.body, `round ${round} grant`).toMatchObject({ allow: true, revision: granted.etag });
      const withdrawn = await withdrawX();
      expect(withdrawn.status).toBe(200);
      const afterWithdraw = await decideOne({ project: 'demo', requester: 'X', tool: T });
      expect(afterWithdraw.body, `round ${round} withdraw`).toMatchObject({
        allow: false,
        reason: 'not_in_allowlist',
        revision: withdrawn.etag,
      });
    }
  });
});
