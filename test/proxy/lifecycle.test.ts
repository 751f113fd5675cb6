/**
 * What `idea-mcp-proxy` does around the messages, as a host sees it through raw lines on the
 * proxy's stdin and stdout: stdout carries JSON-RPC only, a malformed line from either side is
 * logged and skipped, `notifications/tools/list_changed` never comes before the host's
 * `notifications/initialized`, the server's exit ends the proxy with its code after answering what
 * was pending, and a host that closes stdin gets the server stopped (stdin, SIGTERM, SIGKILL).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { elapse, waitFor } from '../support/wait.js';
import { INITIALIZE, spawnProxyFor } from '../support/proxy-process.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

function start(agent: string, env: Record<string, string> = {}) {
  return spawnProxyFor(suite, pdp, agent, [], env);
}

describe('idea-mcp-proxy lifecycle and faults, raw JSON-RPC lines', () => {
  it('skips a malformed line from the host and one from the server, logging both on stderr', async () => {
    const proxy = start('QA');
    proxy.send(INITIALIZE);
    await proxy.answerTo(1);
    proxy.send('this is not json');
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    expect(await proxy.answerTo(2)).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    proxy.send({ jsonrpc: '2.0', id: 3, method: 'fixture/garbage' });
    expect(await proxy.answerTo(3)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    // A tools/call that names no tool is no call to decide on: the protocol's error, as guardMcpServer gives.
    proxy.send({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 5 } });
    expect(await proxy.answerTo(4)).toEqual({
      jsonrpc: '2.0',
      id: 4,
      error: { code: -32602, message: 'Invalid tools/call request: params.name must be a string' },
    });
    const logged = proxy
      .stderr()
      .split('\n')
      .filter((line) => line.includes('malformed JSON-RPC line skipped'))
      .map((line) => JSON.parse(line) as { from: string; level: number });
    expect(logged.map((line) => line.from)).toEqual(['host', 'server']);
    // Every stdout line is JSON-RPC: messages() parses each one.
    expect(proxy.messages().every((message) => message.jsonrpc === '2.0')).toBe(true);
  });

  it('sends tools/list_changed only after the host said notifications/initialized', async () => {
    const proxy = start('Late');
    proxy.send(INITIALIZE);
    const initialized = await proxy.answerTo(1);
    expect((initialized.result as { capabilities: { tools: unknown } }).capabilities.tools).toEqual({ listChanged: true });
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    await proxy.answerTo(2);
    await pdp.admin.putAgent('demo', 'Late', ['idea_ticket_read', 'idea_memory_write']);
    await elapse(1500);
    const changes = () => proxy.messages().filter((message) => message.method === 'notifications/tools/list_changed').length;
    expect(changes()).toBe(0);
    proxy.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await pdp.admin.putAgent('demo', 'Late', ['idea_ticket_read']);
    await waitFor(() => changes() === 1, 'notifications/tools/list_changed after initialized');
  });

  it('answers the requests the server left pending when it exits, then exits with its code', async () => {
    const proxy = start('QA');
    proxy.send(INITIALIZE);
    await proxy.answerTo(1);
    proxy.send({ jsonrpc: '2.0', id: 7, method: 'fixture/exit', params: { code: 3 } });
    expect(await proxy.exited).toEqual({ code: 3, signal: null });
    expect(await proxy.answerTo(7)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { code: -32000, message: 'the MCP server exited with code 3 before answering' },
    });
  });

  it('still sends the filtered tools/list the server answered just before it exited', async () => {
    const proxy = start('QA');
    proxy.send(INITIALIZE);
    await proxy.answerTo(1);
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    proxy.child.stdin.end();
    expect(await proxy.exited).toEqual({ code: 0, signal: null });
    expect(await proxy.answerTo(2)).toMatchObject({ result: { tools: [{ name: 'idea_ticket_read' }] } });
  });

  it('closes the server stdin when the host closes its own, and the server exits with it', async () => {
    const proxy = start('QA');
    proxy.send(INITIALIZE);
    await proxy.answerTo(1);
    proxy.child.stdin.end();
    expect(await proxy.exited).toEqual({ code: 0, signal: null });
  });

  it('sends SIGTERM 2 s after closing the stdin of a server that keeps running, then SIGKILL 2 s later', async () => {
    const stubborn = start('QA', { FIXTURE_IGNORE_EOF: '1' });
    const deaf = start('QA', { FIXTURE_IGNORE_EOF: '1', FIXTURE_IGNORE_SIGTERM: '1' });
    for (const proxy of [stubborn, deaf]) {
      proxy.send(INITIALIZE);
      await proxy.answerTo(1);
    }
    const started = performance.now();
    stubborn.child.stdin.end();
    deaf.child.stdin.end();
    expect(await stubborn.exited).toEqual({ code: 128 + 15, signal: null });
    const afterTerm = performance.now() - started;
    expect(await deaf.exited).toEqual({ code: 128 + 9, signal: null });
    const afterKill = performance.now() - started;
    expect(afterTerm).toBeGreaterThanOrEqual(2000);
    expect(afterKill).toBeGreaterThanOrEqual(4000);
    expect(deaf.stderr()).toContain('"signal":"SIGKILL"');
  });
});
