/**
 * `idea-mcp-proxy --socket` to a socket it must not trust (docs/api.md#security): another user listening
 * in a 0755 folder of its own, as `nobody` on `/tmp/shared/pdp.sock`, or anyone in a folder others
 * may write. The squatter answers "allow" to whatever reaches it; nothing does: every tools/call is
 * refused with `pdp_unavailable`, the server never sees it, the squatter receives no byte (no
 * token), and the proxy's log has one line naming the socket and the fix.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DECISION_META_KEY } from '../../client/mcp.js';
import { AS_ROOT, giveAway, hostileSocket, type HostileSocket } from '../support/hostile-socket.js';
import { freePort } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { connectThroughProxy } from '../support/proxy-process.js';

const DECIDE = 'untrusted-socket-decide-token-0001';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const CallsSchema = z.object({ calls: z.array(z.object({ name: z.string(), arguments: z.unknown() })) });

async function expectNothingReachesIt(listener: HostileSocket, fix: string): Promise<void> {
  // Nothing listens on this TCP port either: no fallback can answer.
  const closedTcp = `http://127.0.0.1:${String(await freePort())}`;
  const host = await connectThroughProxy(
    ['--socket', listener.socketPath, '--pdp', closedTcp, '--project', 'demo', '--agent', 'QA', '--timeout-ms', '3000'],
    { PDP_DECIDE_TOKEN: DECIDE },
  );
  closers.push(host.close);
  expect((await host.client.listTools()).tools).toEqual([]);
  for (const name of ['idea_stop_agent', 'idea_ticket_read', 'idea_stop_agent']) {
    const result = await host.client.callTool({ name, arguments: { agentId: 'Main' } });
    expect(result.isError).toBe(true);
    expect((result._meta as Record<string, { reason: string }> | undefined)?.[DECISION_META_KEY]?.reason).toBe('pdp_unavailable');
  }
  expect((await host.client.request({ method: 'fixture/calls' }, CallsSchema)).calls).toEqual([]);
  expect(listener.connections()).toBe(0);
  expect(listener.received()).toBe('');
  const named = host
    .stderr()
    .split('\n')
    .filter((line) => line.includes(fix));
  expect(named).toHaveLength(1);
  expect(JSON.parse(named[0] ?? '{}')).toMatchObject({ level: 40, socketPath: listener.socketPath });
  expect(named[0]).toContain(`socket ${listener.socketPath} not trusted`);
  expect(host.stderr()).not.toContain(DECIDE);
}

describe('idea-mcp-proxy --socket trusts only a socket of its own user', () => {
  it.skipIf(!AS_ROOT)('refuses every call when another user listens in a 0755 folder of its own', { timeout: 60_000 }, async () => {
    const listener = await hostileSocket(await tempFolder(), 0o755);
    await giveAway(listener.socketPath);
    await giveAway(listener.folder);
    await expectNothingReachesIt(listener, 'Use the socket of a service run by this user, in a folder of its own');
  });

  it('refuses every call when the socket is in a folder others may write (0777)', { timeout: 60_000 }, async () => {
    const listener = await hostileSocket(await tempFolder(), 0o777);
    await expectNothingReachesIt(listener, `Run: chmod 700 ${listener.folder}`);
  });
});
