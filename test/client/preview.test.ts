/** `PdpClient.preview()` against the real app on a real port: the validated answer, and the errors it throws. */
import { describe, expect, it } from 'vitest';
import { PdpClient, PdpError } from '../../client/index.js';
import { startTestServer } from '../support/app.js';
import { policyDoc } from '../support/files.js';

describe('PdpClient.preview', () => {
  it('answers the replay of the recent decisions and throws unknown_project for a project the service does not serve', async (t) => {
    const server = await startTestServer(t, {
      demo: { policy: policyDoc(['idea_memory_read'], { QA: ['idea_memory_read', 'idea_memory_write'] }) },
    });
    const client = new PdpClient({ baseUrl: server.baseUrl });
    try {
      for (let i = 0; i < 4; i++) await client.decide({ project: 'demo', requester: 'QA', tool: 'idea_memory_write' });
      const answer = await client.preview('demo', { version: 1, projectDefault: { allowedTools: ['idea_memory_read'] } });
      expect(answer.valid).toBe(true);
      expect(answer.agents.map((agent) => [agent.agentId, agent.removed])).toEqual([['QA', ['idea_memory_write']]]);
      expect(answer.replay.counts).toEqual({ allowToDeny: 4, denyToAllow: 0, toAsk: 0, notReplayable: 0 });
      expect(answer.replay.changed).toEqual([
        { requester: 'QA', tool: 'idea_memory_write', before: 'allow', after: 'deny', calls: 4, lastAt: expect.any(String) as string },
      ]);
      const invalid = await client.preview('demo', { version: 2 } as unknown as { version: 1 });
      expect(invalid).toMatchObject({ valid: false, errors: [{ code: 'unsupported_version', severity: 'error', line: 2, column: 3 }] });
      const failure = await client.preview('nope', { version: 1 }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PdpError);
      expect((failure as PdpError).code).toBe('unknown_project');
    } finally {
      await client.close();
    }
  });
});
