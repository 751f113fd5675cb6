/**
 * docs/api.md#approvals-and-temporary-grants, invariants: an answer to a request whose tool an editor's save has just taken off
 * ask is `409 approval_closed` and grants nothing, even when it arrives before the watcher has heard
 * of the save. A real atomic save of the policy file, then a real answer over a loopback socket
 * 0 to 5 ms later, repeated.
 */
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../schemas/index.js';
import { saveAtomically } from '../support/files.js';
import { READ_TOOLS } from '../support/tools.js';
import { waitFor } from '../support/wait.js';
import { ADMIN_TOKEN, askDoc, buildApprovalsApp } from '../support/approvals-app.js';

const ON_ASK = `${JSON.stringify(askDoc({ allowedTools: [...READ_TOOLS], askTools: ['idea_memory_write'] }), null, 2)}\n`;
const OFF_ASK = `${JSON.stringify(askDoc({ allowedTools: [...READ_TOOLS] }), null, 2)}\n`;
const WRITE = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' } as const;
const DELAYS_MS = [0, 0, 1, 2, 5];
const ROUNDS = 4;

describe('an answer racing the save that took its tool off ask', () => {
  it(
    `is 409 approval_closed and grants nothing (${ROUNDS * DELAYS_MS.length} saves, answers 0 to 5 ms after each)`,
    { timeout: 120_000 },
    async (t) => {
      const service = await buildApprovalsApp(t, { demo: { policy: JSON.parse(ON_ASK) as Record<string, unknown> } });
      const base = await service.listen();
      const post = async (url: string, body: unknown): Promise<Response> =>
        fetch(`${base}${url}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_TOKEN}` },
          body: JSON.stringify(body),
        });
      const decide = async (): Promise<Decision> => (await (await post('/decide', WRITE)).json()) as Decision;
      const accepted: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        for (const [index, delayMs] of DELAYS_MS.entries()) {
          const answer = index % 2 === 0 ? { answer: 'for', ttlSeconds: 3600 } : { answer: 'once' };
          await saveAtomically(service.policyPath('demo'), ON_ASK);
          let id = '';
          await waitFor(
            async () => {
              const decision = await decide();
              id = decision.approval?.id ?? '';
              return decision.reason === 'approval_required' && decision.approval?.status === 'pending';
            },
            'the tool on ask again with a pending request',
            10_000,
            2,
          );
          await saveAtomically(service.policyPath('demo'), OFF_ASK);
          if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
          const response = await post(`/projects/demo/approvals/${id}`, answer);
          if (response.status !== 409) accepted.push(`${answer.answer} +${delayMs} ms: ${response.status} ${await response.text()}`);
          else expect(((await response.json()) as { error: { code: string } }).error.code).toBe('approval_closed');
          const after = await decide();
          if (after.allow) accepted.push(`${answer.answer} +${delayMs} ms: then allowed (${after.source})`);
          const grants = (await service.call('GET', '/projects/demo/grants')).json<{ grants: { id: string }[] }>().grants;
          for (const grant of grants) {
            accepted.push(`${answer.answer} +${delayMs} ms: grant ${grant.id}`);
            expect((await service.call('DELETE', `/projects/demo/grants/${grant.id}`)).statusCode).toBe(200);
          }
        }
      }
      expect(accepted).toEqual([]);
    },
  );
});
