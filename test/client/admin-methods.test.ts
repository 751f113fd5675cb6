/**
 * The admin methods are the rows of the client's ENDPOINTS table: every row but the decisions has
 * its method, and every method fails by rejecting its promise (a bad argument as a TypeError or
 * RangeError, an unreachable service as PdpError `pdp_unavailable`), never by throwing at the call.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { PdpClient, PdpError } from '../../client/index.js';
import { ENDPOINTS } from '../../client/http/endpoints.js';

const clients: PdpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

/** A client of a port nothing listens on (9, discard). */
function unreachable(): PdpClient {
  const client = new PdpClient({ baseUrl: 'http://127.0.0.1:9', adminTimeoutMs: 2_000 });
  clients.push(client);
  return client;
}

describe('admin methods', () => {
  it('exist for every row of the table but the decisions', () => {
    const client = unreachable();
    const rows = Object.keys(ENDPOINTS).filter((name) => name !== 'decide' && name !== 'decideBatch');
    expect(rows).toHaveLength(23);
    for (const name of rows) expect(typeof (client as unknown as Record<string, unknown>)[name], name).toBe('function');
  });

  it('reject a bad argument instead of throwing at the call', async () => {
    const client = unreachable();
    const badToken = client.answerApproval('demo', 'id', 'once', undefined, { token: 'a token with spaces' });
    await expect(badToken).rejects.toThrow(TypeError);
    const badWait = client.getApproval('demo', 'id', { waitSeconds: 61 });
    await expect(badWait).rejects.toThrow(RangeError);
    const notAList = client.putAgent('demo', 'QA', null as unknown as string[]);
    await expect(notAList).rejects.toThrow(TypeError);
  });

  it('reject with pdp_unavailable when the service cannot be reached, generated or wrapped', async () => {
    const client = unreachable();
    const calls: Promise<unknown>[] = [
      client.catalog(),
      client.getPermissions('demo'),
      client.deleteAgent('demo', 'QA', { ifMatch: '1' }),
      client.effective('demo', 'QA'),
      client.putDefault('demo', ['idea_ticket_read']),
      client.listApprovals('demo'),
    ];
    for (const call of calls) {
      const error: unknown = await call.then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(error).toBeInstanceOf(PdpError);
      expect(error).toMatchObject({ code: 'pdp_unavailable' });
    }
  });
});
