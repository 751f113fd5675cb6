/** The real policy service (test/support/app.ts) on 127.0.0.1 over a temp copy of the demo projects. */
import { PdpClient } from '../../client/index.js';
import {
  ADMIN_TOKEN,
  APPROVER_TOKEN,
  DECIDE_TOKEN,
  closableScope,
  demoProjects,
  makeTestProjects,
  startTestServer,
  type TestServer,
} from './app.js';

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
  stopService: () => Promise<void>;
  /** Starts the service again on the same port and projects. */
  startService: () => Promise<void>;
  close: () => Promise<void>;
}

/** The real service on 127.0.0.1 (`port` 0: any free one; `listen: false`: not started yet; approvals pending `approvalTtlSeconds`). */
export async function startRealPdp(options: { port?: number; listen?: boolean; approvalTtlSeconds?: number } = {}): Promise<RealPdp> {
  const scope = closableScope();
  const projects = await makeTestProjects(scope, demoProjects());
  const root = projects.root;
  let port = options.port ?? 0;
  let server: TestServer | undefined;
  const startService = async () => {
    server = await startTestServer(
      scope,
      {},
      {
        projects,
        port,
        decideToken: DECIDE_TOKEN,
        approverToken: APPROVER_TOKEN,
        ...(options.approvalTtlSeconds === undefined ? {} : { approvalTtlSeconds: options.approvalTtlSeconds }),
      },
    );
    port = Number(new URL(server.baseUrl).port);
  };
  const stopService = async () => {
    await server?.close();
    server = undefined;
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
      await scope.close();
    },
  };
}
