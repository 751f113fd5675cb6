/**
 * Live tool lists (docs/api.md#the-client-sdk, docs/api.md#live-changes-get-events), real service and the SDK's `Client`: with
 * `filterToolsList`, the MCP guard follows the service's events and sends
 * `notifications/tools/list_changed` when the requester's list changes (a grant, a revocation),
 * when the service becomes unreachable and once it is back, and when the service starts after the
 * MCP server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { closedPortUrl } from './fake-pdp.js';
import { connectGuardedIdeaServer } from '../support/guarded-mcp-server.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { elapse, waitFor } from '../support/wait.js';

let cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

/** A guarded example server for QA in demo, its SDK client, and the list_changed notifications it got. */
async function guardedFor(pdp: RealPdp) {
  const mcp = await connectGuardedIdeaServer({ client: pdp.decider, project: 'demo', requester: 'QA', filterToolsList: true });
  cleanups.push(mcp.close);
  const notifications = { count: 0 };
  mcp.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    notifications.count += 1;
  });
  const list = async () => (await mcp.client.listTools()).tools.map((tool) => tool.name).sort();
  return { mcp, notifications, list };
}

const readTools = [...READ_ONLY_DEFAULT].sort();

describe('tools/list_changed from the service events', () => {
  it('a grant and a revocation through the API each reach the client, and its next tools/list shows them', async () => {
    const pdp = await startRealPdp();
    cleanups.push(pdp.close);
    const { notifications, list } = await guardedFor(pdp);
    expect(await list()).toEqual(readTools);

    await pdp.admin.putAgent('demo', 'QA', [...READ_ONLY_DEFAULT, 'idea_memory_write']);
    await waitFor(() => notifications.count >= 1, 'list_changed after the grant');
    expect(await list()).toEqual([...readTools, 'idea_memory_write'].sort());

    await pdp.admin.deleteAgent('demo', 'QA');
    await waitFor(() => notifications.count >= 2, 'list_changed after the revocation');
    expect(await list()).toEqual(readTools);

    // A change that leaves QA's list as it was (another agent's override) notifies nothing.
    await pdp.admin.putAgent('demo', 'Main', [...READ_ONLY_DEFAULT, 'idea_ticket_create']);
    await elapse(500); // a window in which no list_changed may come
    expect(notifications.count).toBe(2);
  });

  it('an outage: list_changed when the service goes away (the list empties) and again once it is back', async () => {
    const pdp = await startRealPdp();
    cleanups.push(pdp.close);
    const { notifications, list } = await guardedFor(pdp);
    expect(await list()).toEqual(readTools);

    await pdp.stopService();
    await waitFor(() => notifications.count === 1, 'list_changed once the service is unreachable');
    expect(await list()).toEqual([]); // fail closed: nothing the service did not confirm
    await pdp.startService();
    await waitFor(() => notifications.count === 2, 'list_changed once the service is back');
    expect(await list()).toEqual(readTools);
    await elapse(500); // a window in which no further list_changed may come
    expect(notifications.count).toBe(2);
  });

  it('the service starts after the MCP server: the list ends right without a restart', async () => {
    const port = Number(new URL(await closedPortUrl()).port);
    const pdp = await startRealPdp({ port, listen: false });
    cleanups.push(pdp.close);
    const { notifications, list } = await guardedFor(pdp);
    expect(await list()).toEqual([]);
    await pdp.startService();
    await waitFor(() => notifications.count >= 1, 'list_changed once the service started');
    expect(await list()).toEqual(readTools);
  });
});
