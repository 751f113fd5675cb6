/**
 * The conformance example server over stdio, served with the v2 SDK's `serveStdio` (either era,
 * as the host opens). With `CONFORMANCE_PDP_URL` set, each instance is guarded in process by
 * `guardMcpServer` with the real service deciding: project `CONFORMANCE_PROJECT`, agent
 * `IDEA_AGENT_ID`, decide token `PDP_DECIDE_TOKEN`, server id `CONFORMANCE_SERVER`, deadline `CONFORMANCE_TIMEOUT_MS`
 * (default 500), `tools/list` filtered.
 */
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { PdpClient } from '../../client/index.js';
import { guardMcpServer } from '../../client/mcp.js';
import { createExampleServer } from './example-server.js';
import { qualifiedClient } from './qualified-client.js';

const url = process.env.CONFORMANCE_PDP_URL;
const timeoutMs = Number(process.env.CONFORMANCE_TIMEOUT_MS ?? 500);
const pdp = url === undefined ? undefined : new PdpClient({ baseUrl: url, token: process.env.PDP_DECIDE_TOKEN, timeoutMs });
const client = pdp === undefined ? undefined : qualifiedClient(pdp, process.env.CONFORMANCE_SERVER ?? '');

serveStdio(() => {
  const server = createExampleServer();
  if (client !== undefined)
    guardMcpServer(server, {
      client,
      project: process.env.CONFORMANCE_PROJECT ?? '',
      requester: process.env.IDEA_AGENT_ID ?? '',
      filterToolsList: true,
    });
  return server;
});
