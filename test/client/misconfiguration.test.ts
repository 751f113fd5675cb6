/**
 * Misconfiguration is not an outage: a wrong token, URL prefix or query is `pdp_rejected` with a
 * message that says which; `check()` tells it at boot; bad options throw at construction; every
 * cause quoted is one line of at most 200 characters. Real service on a real port.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PdpClient, type ClientDecision } from '../../client/index.js';
import { oneLine } from '../../client/causes.js';
import { closedPortUrl, sendJson, startBlackHole, startFakeHttp } from './fake-pdp.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { stringContaining, stringMatching } from '../support/typed.js';

const suite = suiteScope();
let pdp: RealPdp;
const clients: PdpClient[] = [];
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});
afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
});

function client(options: ConstructorParameters<typeof PdpClient>[0]): PdpClient {
  const built = new PdpClient(options);
  clients.push(built);
  return built;
}

const query = { project: 'demo', requester: 'QA', tool: 'idea_memory_write' };

/** The cause in parentheses at the end of a local denial's message. */
function causeOf(decision: ClientDecision): string {
  const match = /denied: policy service (?:unreachable|rejected the request) \((.*)\)$/.exec(decision.message);
  expect(match).not.toBeNull();
  return match?.[1] ?? '';
}

function expectOneLine(text: string): void {
  // eslint-disable-next-line no-control-regex
  expect(text).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/);
}

describe('pdp_rejected: the service says the caller is wrong', () => {
  it('a wrong decide token: 401, worded as the contract says', async () => {
    for (const token of ['wrong-token', undefined]) {
      const decision = await client({ baseUrl: pdp.url, token, timeoutMs: 2000 }).decide(query);
      expect(decision).toMatchObject({ allow: false, reason: 'pdp_rejected', source: 'none', revision: 'none' });
      expect(decision.message).toBe(
        'Tool idea_memory_write (agent QA, project demo) denied: policy service rejected the request (401 unauthorized: decide token missing or wrong)',
      );
    }
  });

  it('a wrong URL prefix: 404 says to check the path of baseUrl', async () => {
    const decision = await client({ baseUrl: `${pdp.url}/pdp/v1`, token: pdp.decideToken, timeoutMs: 2000 }).decide(query);
    expect(decision.reason).toBe('pdp_rejected');
    expect(decision.message).toMatch(/policy service rejected the request \(404 \w+: no such route \(check the path of baseUrl\)\)$/);
    const batch = await client({ baseUrl: `${pdp.url}/pdp`, token: pdp.decideToken, timeoutMs: 2000 }).decideBatch([query, query]);
    expect(batch.map((one) => one.reason)).toEqual(['pdp_rejected', 'pdp_rejected']);
  });

  it('a malformed query (a 600-character requester): 400, one line, the requester not echoed whole', async () => {
    const requester = `QA${'x'.repeat(598)}`;
    const decision = await client({ baseUrl: pdp.url, token: pdp.decideToken, timeoutMs: 2000 }).decide({ ...query, requester });
    expect(decision).toMatchObject({ allow: false, reason: 'pdp_rejected' });
    expect(decision.message).toMatch(
      /^Tool idea_memory_write \(invalid requester "QAx+"…, project demo\) denied: policy service rejected the request \(400 /,
    );
    expect(decision.message).not.toContain(requester);
    expect(decision.message.length).toBeLessThan(600);
    expectOneLine(decision.message);
    expect(causeOf(decision).length).toBeLessThanOrEqual(200);
  });

  it('a 5xx, 408 or 429 is still pdp_unavailable (the service, not the caller)', async () => {
    for (const status of [500, 503, 408, 429]) {
      const fake = await startFakeHttp((_r, response) => {
        sendJson(response, status, { error: { code: 'busy', message: 'later' } });
      });
      const decision = await client({ baseUrl: fake.url, timeoutMs: 1000 }).decide(query);
      await fake.close();
      expect(decision.reason).toBe('pdp_unavailable');
      expect(decision.message).toContain(`policy service unreachable (HTTP ${status}: busy)`);
    }
  });
});

describe('causes quoted in messages', () => {
  it('an https URL on a plain HTTP port gives one short line, not an OpenSSL dump', async () => {
    const decision = await client({ baseUrl: pdp.url.replace('http:', 'https:'), timeoutMs: 2000 }).decide(query);
    expect(decision.reason).toBe('pdp_unavailable');
    expectOneLine(decision.message);
    expect(causeOf(decision).length).toBeLessThanOrEqual(200);
    expect(decision.message).toMatch(/policy service unreachable \((TLS error|connection reset|.*SSL)/);
  });

  it('a service error message with newlines and control characters is flattened and cut', async () => {
    const message = `line one\nline two\r\n\u0007${'y'.repeat(500)}`;
    const fake = await startFakeHttp((_r, response) => {
      sendJson(response, 400, { error: { code: 'invalid_request', message } });
    });
    const decision = await client({ baseUrl: fake.url, timeoutMs: 1000 }).decide(query);
    await fake.close();
    expect(decision.reason).toBe('pdp_rejected');
    expectOneLine(decision.message);
    expect(decision.message).toContain('(400 invalid_request: line one line two ');
    expect(causeOf(decision).length).toBeLessThanOrEqual(200);
  });

  it('oneLine keeps at most 200 characters and never splits a surrogate pair', () => {
    expect(oneLine('a\n\tb\u2028c')).toBe('a b c');
    const cut = oneLine(`${'a'.repeat(198)}😀😀😀`);
    expect(cut.length).toBeLessThanOrEqual(200);
    expect(cut.endsWith('…')).toBe(true);
    expect(cut).not.toMatch(/[\ud800-\udbff]…$/);
  });
});

describe('check() at boot', () => {
  it('ok with the revision and status of the project', async () => {
    const good = client({ baseUrl: pdp.url, token: pdp.decideToken });
    const result = await good.check({ project: 'demo' });
    expect(result).toMatchObject({ ok: true, status: 'ok' });
    expect(result.ok && typeof result.revision === 'string').toBe(true);
    expect(await good.check()).toEqual({ ok: true });
  });

  it('names what is wrong: project, token, URL prefix, reachability, wrong service', async () => {
    const good = client({ baseUrl: pdp.url, token: pdp.decideToken });
    expect(await good.check({ project: 'ghost' })).toEqual({
      ok: false,
      reason: 'unknown_project',
      message: `policy service at ${pdp.url} does not serve project "ghost" (projects served: demo, sandbox)`,
    });
    expect(await client({ baseUrl: pdp.url, token: 'wrong' }).check({ project: 'demo' })).toEqual({
      ok: false,
      reason: 'pdp_rejected',
      message: `policy service at ${pdp.url} rejected the request (401 unauthorized: decide token missing or wrong)`,
    });
    expect(await client({ baseUrl: `${pdp.url}/pdp/`, token: pdp.decideToken }).check()).toMatchObject({
      ok: false,
      reason: 'pdp_rejected',
      message: stringMatching(new RegExp(`^policy service at ${pdp.url}/pdp rejected the request \\(404 .*check the path of baseUrl`)),
    });
    const down = await closedPortUrl();
    expect(await client({ baseUrl: down }).check()).toMatchObject({
      ok: false,
      reason: 'pdp_unavailable',
      message: stringMatching(/unreachable \(connection refused/),
    });
    const hole = await startBlackHole();
    const started = performance.now();
    expect(await client({ baseUrl: hole.url }).check({ timeoutMs: 300 })).toMatchObject({
      ok: false,
      reason: 'pdp_unavailable',
      message: stringContaining('timeout after 300 ms'),
    });
    expect(performance.now() - started).toBeLessThan(2000);
    await hole.close();
    const other = await startFakeHttp((_r, response) => {
      sendJson(response, 200, { hello: 'world' });
    });
    expect(await client({ baseUrl: other.url }).check()).toMatchObject({ ok: false, reason: 'pdp_unavailable' });
    await other.close();
  });

  it('reports an invalid policy file as status invalid', async () => {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(`${pdp.root}/sandbox/.ideai/mcp-tool-permissions.json`, '{ not json');
    const good = client({ baseUrl: pdp.url, token: pdp.decideToken });
    await waitFor(
      async () => {
        const result = await good.check({ project: 'sandbox' });
        return result.ok && result.status === 'invalid';
      },
      'the sandbox policy reported invalid',
      5000,
      50,
    );
    expect(await good.check({ project: 'sandbox' })).toMatchObject({ ok: true, status: 'invalid' });
  });
});

describe('options are checked when the client is built', () => {
  it('a baseUrl without a scheme throws and says what is expected', () => {
    for (const baseUrl of ['127.0.0.1:8787', 'localhost:8787', 'ftp://127.0.0.1:8787', '', '/decide']) {
      expect(() => new PdpClient({ baseUrl })).toThrow(
        /baseUrl .*absolute http:\/\/ or https:\/\/ URL such as "http:\/\/127\.0\.0\.1:8787"/,
      );
    }
    expect(() => new PdpClient({ baseUrl: 'http://user:pw@127.0.0.1:8787' })).toThrow(/credentials/);
    expect(() => new PdpClient({ baseUrl: 'http://127.0.0.1:8787/?x=1' })).toThrow(/query or a fragment/);
  });

  it('timeoutMs 0, negative, NaN or infinite throws; so do bad connections and a token with a newline', () => {
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31]) {
      expect(() => new PdpClient({ baseUrl: 'http://127.0.0.1:8787', timeoutMs })).toThrow(
        /timeoutMs must be a number of milliseconds greater than 0 .*default of 500 ms/,
      );
    }
    expect(() => new PdpClient({ baseUrl: 'http://127.0.0.1:8787', adminTimeoutMs: 0 })).toThrow(RangeError);
    expect(() => new PdpClient({ baseUrl: 'http://127.0.0.1:8787', connections: 0 })).toThrow(/connections/);
    expect(() => new PdpClient({ baseUrl: 'http://127.0.0.1:8787', token: 'abc\n' })).toThrow(/trailing newline/);
  });

  it('a valid URL with a path prefix is kept as the prefix of every route', async () => {
    const seen: string[] = [];
    const server = createServer((request, response) => {
      seen.push(request.url ?? '');
      response.writeHead(404).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const prefixed = client({ baseUrl: `http://127.0.0.1:${port}/gateway/pdp/`, timeoutMs: 1000 });
    expect(prefixed.baseUrl).toBe(`http://127.0.0.1:${port}/gateway/pdp`);
    await prefixed.decide(query);
    server.closeAllConnections();
    await new Promise<void>((resolve) =>
      server.close(() => {
        resolve();
      }),
    );
    expect(seen).toEqual(['/gateway/pdp/decide']);
  });
});
