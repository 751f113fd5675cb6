/**
 * `idea-mcp-proxy` and hosts on MCP 2026-07-28, raw lines to the real proxy process (real service,
 * Python server): the era is told per request from `params._meta`; a refusal is the same refusal in
 * every era, with `resultType: "complete"` on 2026-07-28; a call on ask is answered `input_required`
 * with the French form and a sealed `requestState`, and its retry runs the call once the user
 * allowed it, while a tampered, replayed or expired state is refused (`invalid_request_state`) and
 * never runs.
 */
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';
import { suiteScope } from '../support/app.js';
import { waitFor } from '../support/wait.js';
import { INITIALIZE, spawnProxyFor } from '../support/proxy-process.js';

const suite = suiteScope();
let pdp: RealPdp;
let tokenFile: string;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
  const folder = await mkdtemp(path.join(tmpdir(), 'proxy-2026-'));
  suite.onTestFinished(() => rm(folder, { recursive: true, force: true }));
  tokenFile = path.join(folder, 'approver-token');
  await writeFile(tokenFile, `${pdp.approverToken}\n`);
  await chmod(tokenFile, 0o600);
});

/** The `_meta` envelope of a 2026-07-28 request. */
const envelope = (capabilities: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026-host', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

const callOf = (id: number, args: Record<string, unknown>, extra: Record<string, unknown> = {}, capabilities = { elicitation: {} }) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'idea_memory_write', arguments: args, _meta: envelope(capabilities), ...extra },
});

type Proxy = ReturnType<typeof spawnProxyFor>;

async function toolCalls(proxy: Proxy, id: number): Promise<unknown[]> {
  proxy.send({ jsonrpc: '2.0', id, method: 'fixture/calls' });
  return ((await proxy.answerTo(id)).result as { calls: unknown[] }).calls;
}

function askingProxy(agent: string, service: RealPdp = pdp) {
  return spawnProxyFor(suite, service, agent, ['--approver-token-file', tokenFile]);
}

interface InputRequired {
  resultType: 'input_required';
  inputRequests: Record<string, { method: string; params: { mode: string; message: string; requestedSchema: unknown } }>;
  requestState: string;
}

async function askedFor(proxy: Proxy, id: number, args: Record<string, unknown>): Promise<InputRequired> {
  proxy.send(callOf(id, args));
  return (await proxy.answerTo(id)).result as InputRequired;
}

const allowOnce = { 'io.ideai/approval': { action: 'accept', content: { reponse: 'Autoriser une fois' } } };

describe('idea-mcp-proxy on 2026-07-28, refusals', () => {
  it('refuses with the same text and _meta in every era, with resultType "complete" on 2026-07-28 only', async () => {
    const proxy = spawnProxyFor(suite, pdp, 'QA');
    // A 2026-07-28 host never sends initialize: the request tells its era.
    proxy.send(callOf(2, { text: 'x' }));
    const modern = (await proxy.answerTo(2)).result as Record<string, unknown>;
    proxy.send(INITIALIZE);
    await proxy.answerTo(1);
    proxy.send({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'idea_memory_write', arguments: { text: 'x' } } });
    const legacy = (await proxy.answerTo(3)).result as Record<string, unknown>;
    expect(modern.resultType).toBe('complete');
    expect(legacy).not.toHaveProperty('resultType');
    const { resultType: _complete, ...sameShape } = modern;
    expect(sameShape.isError).toBe(true);
    expect(sameShape.content).toEqual(legacy.content);
    const meta = (result: Record<string, unknown>) => (result._meta as Record<string, { reason: string }>)['io.ideai/decision'];
    expect(meta(modern)?.reason).toBe('not_in_allowlist');
    expect(meta(legacy)?.reason).toBe('not_in_allowlist');
    expect(await toolCalls(proxy, 4)).toEqual([]);
  });
});

describe('idea-mcp-proxy on 2026-07-28, approvals through input_required', () => {
  it('answers input_required with the French form, and runs the retry once the user allowed it', async () => {
    await pdp.admin.putAgent('demo', 'Modern', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const proxy = askingProxy('Modern');
    const asked = await askedFor(proxy, 2, { text: 'kept', n: 1 });
    expect(asked.resultType).toBe('input_required');
    const form = asked.inputRequests['io.ideai/approval'];
    expect(form?.method).toBe('elicitation/create');
    expect(form?.params.mode).toBe('form');
    expect(form?.params.message).toContain('L\u2019agent Modern demande à utiliser l\u2019outil');
    expect(form?.params.message).not.toContain('kept');
    expect(asked.requestState).toMatch(/^ideai\.1\./u);
    // The host's SDK writes the same arguments in another key order: the same call.
    proxy.send(callOf(3, { n: 1, text: 'kept' }, { inputResponses: allowOnce, requestState: asked.requestState }));
    const ran = (await proxy.answerTo(3)).result as { content: { text: string }[] };
    expect(ran.content[0]?.text).toBe('idea_memory_write ran with {"n": 1, "text": "kept"}');
    // The server got the call without the proxy's state and answer.
    expect(await toolCalls(proxy, 4)).toEqual([{ name: 'idea_memory_write', arguments: { n: 1, text: 'kept' } }]);
    const answered = (await pdp.admin.listApprovals('demo')).filter((approval) => approval.requester === 'Modern');
    expect(answered.map((approval) => [approval.answer, approval.via])).toEqual([['once', 'elicitation']]);
  });

  it('refuses a tampered state and a state replayed for other arguments or another tool, and runs nothing', async () => {
    await pdp.admin.putAgent('demo', 'Tamper', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write', 'idea_ticket_update_carnet'] });
    const proxy = askingProxy('Tamper');
    const asked = await askedFor(proxy, 2, { text: 'one' });
    const state = asked.requestState;
    const flipped = `${state.slice(0, -2)}${state.endsWith('AA') ? 'AB' : 'AA'}`;
    const [body] = state.slice('ideai.1.'.length).split('.');
    const claims = JSON.parse(Buffer.from(body ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = `ideai.1.${Buffer.from(JSON.stringify({ ...claims, tool: 'idea_ticket_update_carnet' })).toString('base64url')}.${state.split('.').pop() ?? ''}`;
    const retries = [
      callOf(3, { text: 'one' }, { inputResponses: allowOnce, requestState: flipped }),
      callOf(4, { text: 'two' }, { inputResponses: allowOnce, requestState: state }),
      {
        ...callOf(5, {}, { inputResponses: allowOnce, requestState: state }),
        params: {
          name: 'idea_ticket_update_carnet',
          arguments: { text: 'one' },
          _meta: envelope({ elicitation: {} }),
          inputResponses: allowOnce,
          requestState: forged,
        },
      },
    ];
    const causes: string[] = [];
    for (const retry of retries) {
      proxy.send(retry);
      const result = (await proxy.answerTo(retry.id)).result as {
        resultType: string;
        isError: boolean;
        content: { text: string }[];
        _meta: Record<string, { reason: string }>;
      };
      expect(result.resultType).toBe('complete');
      expect(result.isError).toBe(true);
      expect(result._meta['io.ideai/decision']?.reason).toBe('invalid_request_state');
      causes.push(result.content[0]?.text ?? '');
    }
    expect(causes.map((text) => /\(([^()]*)\)$/u.exec(text)?.[1])).toEqual(['bad seal', 'sealed for other arguments', 'bad seal']);
    expect(await toolCalls(proxy, 6)).toEqual([]);
    // Nothing was answered: the request is still pending for the panel.
    const pending = (await pdp.admin.listApprovals('demo', 'pending')).filter((approval) => approval.requester === 'Tamper');
    expect(pending).toHaveLength(1);
  });

  it('refuses a state past its expiry (the approval request lived 2 s)', { timeout: 120_000 }, async () => {
    const shortLived = await startRealPdp({ approvalTtlSeconds: 2 });
    suite.onTestFinished(shortLived.close);
    await shortLived.admin.putAgent('demo', 'Late', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const folder = await mkdtemp(path.join(tmpdir(), 'proxy-2026-late-'));
    suite.onTestFinished(() => rm(folder, { recursive: true, force: true }));
    const file = path.join(folder, 'approver-token');
    await writeFile(file, `${shortLived.approverToken}\n`);
    await chmod(file, 0o600);
    const proxy = spawnProxyFor(suite, shortLived, 'Late', ['--approver-token-file', file]);
    const asked = await askedFor(proxy, 2, { text: 'late' });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    proxy.send(callOf(3, { text: 'late' }, { inputResponses: allowOnce, requestState: asked.requestState }));
    const result = (await proxy.answerTo(3)).result as { content: { text: string }[]; _meta: Record<string, { reason: string }> };
    expect(result._meta['io.ideai/decision']?.reason).toBe('invalid_request_state');
    expect(result.content[0]?.text).toContain('(expired)');
    expect(await toolCalls(proxy, 4)).toEqual([]);
  });

  it('refuses at once, without a form, a call from a host whose request does not declare elicitation', async () => {
    await pdp.admin.putAgent('demo', 'NoForm', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const proxy = askingProxy('NoForm');
    proxy.send(callOf(2, { text: 'x' }, {}, {} as { elicitation: object }));
    const result = (await proxy.answerTo(2)).result as Record<string, unknown>;
    expect(result).toMatchObject({
      resultType: 'complete',
      isError: true,
      _meta: { 'io.ideai/decision': { reason: 'approval_required' } },
    });
  });
});

describe('idea-mcp-proxy on 2026-07-28, list_changed', () => {
  it('acknowledges a subscription the server does not know, and sends list_changed on it after a policy change', async () => {
    const proxy = spawnProxyFor(suite, pdp, 'Subscriber');
    proxy.send({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { notifications: { toolsListChanged: true }, _meta: envelope() },
    });
    const acknowledged = () => proxy.messages().find((message) => message.method === 'notifications/subscriptions/acknowledged');
    await waitFor(() => acknowledged() !== undefined, 'the acknowledgement', 30_000);
    expect(acknowledged()?.params).toEqual({
      notifications: { toolsListChanged: true },
      _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
    });
    proxy.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope() } });
    await proxy.answerTo(2);
    await pdp.admin.putAgent('demo', 'Subscriber', ['idea_ticket_read', 'idea_memory_write']);
    const changed = () => proxy.messages().filter((message) => message.method === 'notifications/tools/list_changed');
    await waitFor(() => changed().length > 0, 'a tools/list_changed', 30_000);
    expect(changed()[0]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } },
    });
    // The error of the server that does not listen never reached the host.
    expect(proxy.messages().filter((message) => message.id === 'listen-1')).toEqual([]);
  });
});
