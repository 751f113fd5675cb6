/**
 * `idea-mcp-proxy` on what a hostile or careless host writes, raw lines to the real proxy process in
 * front of the Python server and the real service: spellings of `tools/call` a lenient server would
 * run (`-32601`, never forwarded), messages nested 12,000 deep or 4 MiB long (no crash), and the
 * bytes of every message it does not change forwarded as received (numbers beyond 2^53, key order),
 * an allowed `tools/call` included.
 */
import { createHash } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { INITIALIZE, spawnProxyFor } from '../support/proxy-process.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

/** The proxy in front of the server for QA (read-only set: `idea_ticket_read` allowed), initialized. */
async function started(env: Record<string, string> = {}) {
  const proxy = spawnProxyFor(suite, pdp, 'QA', [], env);
  proxy.send(INITIALIZE);
  await proxy.answerTo(1);
  proxy.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  return proxy;
}

type Proxy = Awaited<ReturnType<typeof started>>;

/** The lines the server received, as it received them. */
async function serverLines(proxy: Proxy, id: number): Promise<string[]> {
  proxy.send({ jsonrpc: '2.0', id, method: 'fixture/lines' });
  return ((await proxy.answerTo(id)).result as { lines: string[] }).lines;
}

async function toolCalls(proxy: Proxy, id: number): Promise<unknown[]> {
  proxy.send({ jsonrpc: '2.0', id, method: 'fixture/calls' });
  return ((await proxy.answerTo(id)).result as { calls: unknown[] }).calls;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('idea-mcp-proxy, spellings of tools/call', () => {
  it('answers -32601 to Tools/Call, "tools/call " and other foldings, which a lenient server would run undecided', async () => {
    const proxy = await started({ FIXTURE_LENIENT_METHODS: '1' });
    const spellings = ['Tools/Call', 'tools/call ', ' TOOLS/CALL', 'tools/call\u0000', 'toolſ/call', '\ttools/call\n'];
    for (const [index, method] of spellings.entries()) {
      // idea_memory_write is not QA's: a server that ran it would have run a refused call.
      proxy.send({ jsonrpc: '2.0', id: 10 + index, method, params: { name: 'idea_memory_write', arguments: { text: 'x' } } });
    }
    for (const [index, method] of spellings.entries()) {
      expect(await proxy.answerTo(10 + index)).toEqual({
        jsonrpc: '2.0',
        id: 10 + index,
        error: { code: -32601, message: `Method not found: ${JSON.stringify(method)}` },
      });
    }
    // The same spellings as notifications (no id): dropped, never forwarded.
    proxy.send({ jsonrpc: '2.0', method: 'Tools/Call', params: { name: 'idea_memory_write', arguments: { text: 'y' } } });
    expect(await toolCalls(proxy, 30)).toEqual([]);
    expect((await serverLines(proxy, 31)).filter((line) => line.includes('idea_memory_write'))).toEqual([]);
  });

  it('echoes an id beyond 2^53 as it was written in the answers it writes itself', async () => {
    const proxy = await started();
    proxy.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"Tools/Call","params":{"name":"idea_ticket_read"}}');
    proxy.send('{"jsonrpc":"2.0","id":9007199254740995,"method":"tools/call","params":{"name":"idea_memory_write","arguments":{}}}');
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'ping' });
    await proxy.answerTo(2);
    await waitFor(() => proxy.lines().some((line) => line.includes('9007199254740995')), 'the refusal');
    expect(proxy.lines().find((line) => line.includes('-32601'))).toContain('"id":9007199254740993,');
    expect(proxy.lines().find((line) => line.includes('"isError":true'))).toMatch(/^\{"jsonrpc":"2\.0","id":9007199254740995,/u);
  });
});

describe('idea-mcp-proxy never crashes on a message', () => {
  it('forwards a resources/read holding a 12,000-level array, and answers the next request', async () => {
    const proxy = await started();
    const deep = `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///x","deep":${nested(12_000)}}}`;
    proxy.send(deep);
    proxy.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(await proxy.answerTo(3)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
    // The server got it byte for byte (it cannot parse it itself: Python stops at 1,000 levels).
    expect(await serverLines(proxy, 4)).toContain(deep);
    expect(proxy.child.exitCode).toBeNull();
  });

  it('forwards an answer of the server nested 12,000 deep, and a tools/list of that depth becomes an error', async () => {
    const proxy = await started();
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'fixture/deep', params: { depth: 12_000 } });
    await waitFor(() => proxy.lines().some((line) => line.startsWith('{"jsonrpc":"2.0","id":2,')), 'the deep answer');
    expect(proxy.lines().find((line) => line.startsWith('{"jsonrpc":"2.0","id":2,'))).toBe(
      `{"jsonrpc":"2.0","id":2,"result":{"deep":${nested(12_000)}}}`,
    );
    proxy.send({ jsonrpc: '2.0', id: 3, method: 'ping' });
    expect(await proxy.answerTo(3)).toEqual({ jsonrpc: '2.0', id: 3, result: {} });
  });

  it('refuses a tools/call whose arguments are nested 1,001 or 12,000 deep, without forwarding it, on every Node line', async () => {
    const proxy = await started();
    // `arguments` itself is the first level: {"q": 1,000 arrays} is 1,001 deep.
    proxy.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"idea_ticket_read","arguments":{"q":${nested(1_000)}}}}`);
    proxy.send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"idea_ticket_read","arguments":{"q":${nested(12_000)}}}}`);
    for (const id of [2, 3]) {
      const refused = await proxy.answerTo(id);
      expect(refused.result).toMatchObject({ isError: true, _meta: { 'io.ideai/decision': { reason: 'invalid_arguments' } } });
    }
    expect(await toolCalls(proxy, 4)).toEqual([]);
  });

  it('forwards a tools/call whose arguments are nested 100 deep, which the service judges as sent', async () => {
    const proxy = await started();
    proxy.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"idea_ticket_read","arguments":{"q":${nested(99)}}}}`);
    await proxy.answerTo(2);
    expect(await toolCalls(proxy, 3)).toHaveLength(1);
  });

  it('forwards a 4 MiB line as it came, and one 4 MiB deep, then answers the next request', async () => {
    const proxy = await started();
    const big = `{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"file:///big","text":"${'é'.repeat(2 * 1024 * 1024 - 64)}"}}`;
    expect(Buffer.byteLength(big)).toBeLessThan(4 * 1024 * 1024);
    proxy.send(big);
    const half = 2 * 1024 * 1024 - 100;
    const deep = `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"deep":${nested(half)}}}`;
    proxy.send(deep);
    proxy.send({ jsonrpc: '2.0', id: 4, method: 'ping' });
    expect(await proxy.answerTo(4, 60_000)).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
    proxy.send({ jsonrpc: '2.0', id: 5, method: 'fixture/lines', params: { digest: true } });
    const digests = ((await proxy.answerTo(5)).result as { lines: string[] }).lines;
    expect(digests).toContain(sha256(big));
    expect(digests).toContain(sha256(deep));
    expect(proxy.child.exitCode).toBeNull();
  }, 120_000);
});

describe('idea-mcp-proxy forwards the bytes it received', () => {
  it('passes a request and an answer it does not change byte for byte, both ways', async () => {
    const proxy = await started();
    const request = '{"jsonrpc":"2.0", "id":2,"method":"resources/read","params":{"z":9007199254740993,"a":1.50,"m":"\\u00e9","uri":"x"}}';
    proxy.send(request);
    expect(await serverLines(proxy, 3)).toContain(request);
    const line = '{"id":"s-1","jsonrpc":"2.0","method":"notifications/message","params":{"big":12345678901234567890,"b":1,"a":2e0}}';
    proxy.send({ jsonrpc: '2.0', id: 4, method: 'fixture/raw', params: { line } });
    await proxy.answerTo(4);
    expect(proxy.lines()).toContain(line);
  });

  it('forwards an allowed tools/call as the bytes the host sent, 9007199254740993 and key order intact', async () => {
    const proxy = await started();
    const call =
      '{"params":{"arguments":{"n":9007199254740993,"b":1,"a":[0.10,1e2]},"name":"idea_ticket_read"},"method":"tools/call","id":2,"jsonrpc":"2.0"}';
    proxy.send(call);
    const answer = await proxy.answerTo(2);
    expect(answer.result).toMatchObject({ content: [{ type: 'text' }] });
    expect(JSON.stringify(answer.result)).not.toContain('isError');
    expect(await serverLines(proxy, 3)).toContain(call);
    // Python reads integers exactly: it ran the call with …993, not …992.
    await toolCalls(proxy, 4);
    expect(proxy.lines().find((line) => line.startsWith('{"jsonrpc": "2.0", "id": 4,'))).toContain('"n": 9007199254740993');
  });
});

describe('idea-mcp-proxy refuses what two parsers would read differently', () => {
  it('refuses a request that gives a member twice or in another case, which first-wins and case-blind servers read otherwise', async () => {
    const proxy = await started({ FIXTURE_RUN_NOTIFIED_CALLS: '1' });
    const sent = [
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"idea_memory_write","arguments":{"text":"x"}},"method":"ping"}',
      '{"jsonrpc":"2.0","id":3,"method":"ping","Method":"tools/call","params":{"name":"idea_memory_write","arguments":{"text":"x"}}}',
    ];
    for (const line of sent) proxy.send(line);
    for (const id of [2, 3]) expect(((await proxy.answerTo(id)).error as { code: number }).code).toBe(-32600);
    // A notification or an answer that would turn into a call: dropped.
    proxy.send('{"jsonrpc":"2.0","id":4,"result":{},"METHOD":"tools/call","params":{"name":"idea_memory_write","arguments":{}}}');
    expect(await toolCalls(proxy, 5)).toEqual([]);
    expect((await serverLines(proxy, 6)).some((line) => line.includes('idea_memory_write'))).toBe(false);
  });

  it('refuses a tools/call whose arguments give a key twice (-32602): the server may read the other value', async () => {
    const proxy = await started();
    proxy.send(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"idea_ticket_read","arguments":{"issueRef":"#1","issueRef":"#2"}}}',
    );
    proxy.send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"idea_ticket_read","Name":"idea_memory_write"}}');
    expect(await proxy.answerTo(2)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32602, message: 'Invalid tools/call request: a key is given twice in params' },
    });
    expect(await proxy.answerTo(3)).toEqual({
      jsonrpc: '2.0',
      id: 3,
      error: { code: -32602, message: 'Invalid tools/call request: params.Name is not a tools/call parameter' },
    });
    expect(await toolCalls(proxy, 4)).toEqual([]);
  });

  it('refuses a request that is not valid UTF-8, which a lenient decoder could read as tools/call', async () => {
    const proxy = await started({ FIXTURE_LENIENT_METHODS: '1' });
    proxy.child.stdin.write(
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":2,"method":"tools/call'),
        Buffer.from([0xff]),
        Buffer.from('","params":{"name":"idea_memory_write","arguments":{"text":"x"}}}\n'),
      ]),
    );
    expect(await proxy.answerTo(2)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32600, message: 'Invalid request: the message is not valid UTF-8' },
    });
    expect(await toolCalls(proxy, 3)).toEqual([]);
  });
});
