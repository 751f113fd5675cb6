/**
 * What `idea-mcp-proxy` passes on to the server it starts: its own environment without the
 * service's tokens, nor the paths of the files that hold them.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { INITIALIZE, spawnProxy } from '../support/proxy-process.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

describe('idea-mcp-proxy and the server environment', () => {
  it('starts the server without the tokens of the service nor their files', async () => {
    const proxy = spawnProxy(['--pdp', pdp.url, '--project', 'demo', '--agent', 'QA'], {
      PDP_DECIDE_TOKEN: pdp.decideToken,
      PDP_ADMIN_TOKEN: 'admin-token-of-the-service',
      PDP_APPROVER_TOKEN: 'approver-token-of-the-service',
      PDP_DECIDE_TOKEN_FILE: '/run/secrets/decide-token',
      PDP_ADMIN_TOKEN_FILE: '/run/secrets/admin-token',
      PDP_APPROVER_TOKEN_FILE: '/run/secrets/approver-token',
      PDP_PROJECT: 'demo',
    });
    suite.onTestFinished(async () => {
      if (proxy.child.exitCode === null && proxy.child.signalCode === null) {
        proxy.child.kill('SIGKILL');
        await proxy.exited;
      }
    });
    proxy.send(INITIALIZE);
    await proxy.answerTo(1);
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'fixture/env' });
    // PDP_PROJECT holds no secret: the rest of the environment reaches the server unchanged.
    expect(await proxy.answerTo(2)).toEqual({ jsonrpc: '2.0', id: 2, result: { names: ['PDP_PROJECT'] } });
  });
});
