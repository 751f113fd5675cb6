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
  /** The approver token (answers approval requests only). */
  approverToken: string;
  /** A client with the admin token (grants and revocations). */
  admin: PdpClient;
  /** A client with the decide token, as an enforcement point has. */
  decider: PdpClient;
  /** Stops the service only (an outage): the clients and the projects stay. */
  stopService(): Promise<void>;
  /** Starts the service again on the same port and projects. */
  startService(): Promise<void>;
  close(): Promise<void>;
}

const ADMIN_TOKEN = 'admin-token-for-tests-0123456789';
const DECIDE_TOKEN = 'decide-token-for-tests-0123456789';
const APPROVER_TOKEN = 'approver-token-for-tests-0123456789';

/** The real service on 127.0.0.1 (`port` 0: any free one; `listen: false`: not started yet). */
export async function startRealPdp(options: { port?: number; listen?: boolean } = {}): Promise<RealPdp> {
  const root = await mkdtemp(join(tmpdir(), 'pdp-client-e2e-'));
  await cp(new URL('../../examples/projects/', import.meta.url), root, { recursive: true });
  let port = options.port ?? 0;
  let app: Awaited<ReturnType<typeof buildApp>> | undefined;
  const startService = async () => {
    app = await buildApp({
      projectsRoot: root,
      adminToken: ADMIN_TOKEN,
      decideToken: DECIDE_TOKEN,
      approverToken: APPROVER_TOKEN,
      logger: false,
    });
    await app.listen({ port, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  };
  const stopService = async () => {
    await app?.close();
    app = undefined;
  };
  if (options.listen !== false) await startService();
  const url = `http://127.0.0.1:${port}`;
  const admin = new PdpClient({ baseUrl: url, token: ADMIN_TOKEN });
  const decider = new PdpClient({ baseUrl: url, token: DECIDE_TOKEN, timeoutMs: 2000 });
  return {
    url,
    root,
    adminToken: ADMIN_TOKEN,
    decideToken: DECIDE_TOKEN,
    approverToken: APPROVER_TOKEN,
    admin,
    decider,
    stopService,
    startService,
    close: async () => {
      await Promise.all([admin.close(), decider.close()]);
      await stopService();
      await rm(root, { recursive: true, force: true });
    },
  };
}
