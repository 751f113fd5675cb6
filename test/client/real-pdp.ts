/** The real policy service (`buildApp`) on 127.0.0.1:0 over a temp copy of the demo projects. */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { buildApp } from '../../server/http/app.js';
import { PdpClient } from '../../client/index.js';

export interface RealPdp {
  url: string;
  root: string;
  adminToken: string;
  decideToken: string;
  /** A client with the admin token (grants and revocations). */
  admin: PdpClient;
  /** A client with the decide token, as an enforcement point has. */
  decider: PdpClient;
  close(): Promise<void>;
}

export async function startRealPdp(): Promise<RealPdp> {
  const root = await mkdtemp(join(tmpdir(), 'pdp-client-e2e-'));
  await cp(new URL('../../examples/projects/', import.meta.url), root, { recursive: true });
  const adminToken = 'admin-token-for-tests-0123456789';
  const decideToken = 'decide-token-for-tests-0123456789';
  const app = await buildApp({ projectsRoot: root, adminToken, decideToken, logger: false });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const admin = new PdpClient({ baseUrl: url, token: adminToken });
  const decider = new PdpClient({ baseUrl: url, token: decideToken, timeoutMs: 2000 });
  return {
    url,
    root,
    adminToken,
    decideToken,
    admin,
    decider,
    close: async () => {
      await Promise.all([admin.close(), decider.close()]);
      await app.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}
