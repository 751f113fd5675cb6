/**
 * `idea-mcp-proxy` against the real service process: reached only through its unix socket
 * (`--socket`, the TCP address given being closed), and deciding with the call's arguments, so a
 * condition on an argument lets one call reach the Python server and keeps another from it.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { DECISION_META_KEY } from '../../client/mcp.js';
import { READ_TOOLS } from '../support/tools.js';
import { writeProject } from '../support/files.js';
import { freePort, START_DEADLINE_MS, startService, type ServiceProcess } from '../support/service-process.js';
import { tempFolder } from '../support/temp-folder.js';
import { connectThroughProxy } from '../support/proxy-process.js';

const ADMIN = 'proxy-socket-test-admin-token-0001';
const DECIDE = 'proxy-socket-test-decide-token-001';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const CallsSchema = z.object({ calls: z.array(z.object({ name: z.string(), arguments: z.unknown() })) });
type Host = Awaited<ReturnType<typeof connectThroughProxy>>;
const receivedCalls = async (host: Host) => (await host.client.request({ method: 'fixture/calls' }, CallsSchema)).calls;
const textOf = (result: object) => ((result as { content?: { text: string }[] }).content ?? [])[0]?.text;
const decisionOf = (result: { _meta?: unknown }) =>
  (result._meta as Record<string, { reason: string; argument?: string }> | undefined)?.[DECISION_META_KEY];

/** QA may update the carnet of ticket #9 only; everyone may read. */
const POLICY = {
  version: 1,
  projectDefault: { allowedTools: [...READ_TOOLS] },
  agents: [
    {
      agentId: 'QA',
      policy: {
        allowedTools: [...READ_TOOLS, 'idea_ticket_update_carnet'],
        conditions: { idea_ticket_update_carnet: { issueRef: { in: ['#9'] } } },
      },
    },
  ],
};

async function startOnSocket(): Promise<{ service: ServiceProcess; socketPath: string }> {
  const outer = await tempFolder();
  const root = path.join(outer, 'p');
  await mkdir(root);
  await writeProject(root, 'demo', { policy: POLICY });
  // Short names: the socket's path must stay under 107 bytes.
  const service = await startService({
    PDP_PROJECTS_ROOT: root,
    PDP_STATE_DIR: path.join(outer, 's'),
    PDP_ADMIN_TOKEN: ADMIN,
    PDP_DECIDE_TOKEN: DECIDE,
    PDP_SOCKET: '',
  });
  closers.push(() => service.stop());
  return { service, socketPath: path.join(outer, 's', 'pdp.sock') };
}

async function proxyOnSocket(socketPath: string): Promise<Host> {
  // Nothing listens on this TCP port: every answer must come through the socket.
  const closedTcp = `http://127.0.0.1:${String(await freePort())}`;
  const host = await connectThroughProxy(
    ['--socket', socketPath, '--pdp', closedTcp, '--project', 'demo', '--agent', 'QA', '--timeout-ms', '3000'],
    { PDP_DECIDE_TOKEN: DECIDE },
  );
  closers.push(host.close);
  return host;
}

describe('idea-mcp-proxy on the service unix socket, with argument conditions', () => {
  it(
    'decides through the socket alone: a call inside its condition runs, one outside never reaches the server',
    { timeout: 2 * START_DEADLINE_MS },
    async () => {
      const { socketPath } = await startOnSocket();
      const host = await proxyOnSocket(socketPath);
      expect((await host.client.listTools()).tools.map((tool) => tool.name)).toEqual(['idea_ticket_read', 'idea_ticket_update_carnet']);

      const inside = await host.client.callTool({ name: 'idea_ticket_update_carnet', arguments: { issueRef: '#9', text: 'ok' } });
      expect(inside.isError).toBeUndefined();
      expect(textOf(inside)).toBe('idea_ticket_update_carnet ran with {"issueRef": "#9", "text": "ok"}');

      const outside = await host.client.callTool({ name: 'idea_ticket_update_carnet', arguments: { issueRef: '#10', text: 'no' } });
      expect(outside.isError).toBe(true);
      expect(decisionOf(outside)).toMatchObject({ reason: 'argument_not_allowed', argument: 'issueRef' });
      // The refusal names the argument and what is allowed, never the value sent.
      expect(textOf(outside)).toContain('issueRef');
      expect(textOf(outside)).not.toContain('#10');

      const missing = await host.client.callTool({ name: 'idea_ticket_update_carnet', arguments: { text: 'no ticket' } });
      expect(decisionOf(missing)?.reason).toBe('argument_not_allowed');
      const nested = await host.client.callTool({ name: 'idea_ticket_update_carnet', arguments: { issueRef: { id: 9 } } });
      expect(decisionOf(nested)?.reason).toBe('invalid_arguments');

      expect(await receivedCalls(host)).toEqual([{ name: 'idea_ticket_update_carnet', arguments: { issueRef: '#9', text: 'ok' } }]);
    },
  );

  it('refuses with pdp_unavailable once the service stops, never falling back to TCP', { timeout: 2 * START_DEADLINE_MS }, async () => {
    const { service, socketPath } = await startOnSocket();
    const host = await proxyOnSocket(socketPath);
    expect((await host.client.callTool({ name: 'idea_ticket_read', arguments: { issueRef: '#9' } })).isError).toBeUndefined();
    await service.stop();
    const read = await host.client.callTool({ name: 'idea_ticket_read', arguments: { issueRef: '#9' } });
    expect(read.isError).toBe(true);
    expect(decisionOf(read)?.reason).toBe('pdp_unavailable');
    expect(await receivedCalls(host)).toEqual([{ name: 'idea_ticket_read', arguments: { issueRef: '#9' } }]);
  });
});
