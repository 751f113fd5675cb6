/**
 * `guardMcpServer` on MCP 2026-07-28, raw lines to a v2 SDK server guarding itself in process
 * (`serveStdio`, real service): a call on ask is answered `input_required` with the French form and
 * a sealed `requestState`; the retry runs once the user allowed it, without the guard's state; a
 * tampered state, a state replayed for other arguments or another tool, and an expired one are
 * refused (`invalid_request_state`, `resultType: "complete"`), and nothing runs nor is answered.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_DEFAULT } from '../../schemas/catalog.js';
import { suiteScope, type TestScope } from '../support/app.js';
import { REPO_ROOT } from '../support/service-process.js';
import { waitFor } from '../support/wait.js';
import { startRealPdp, type RealPdp } from '../support/real-pdp.js';

const suite = suiteScope();
let pdp: RealPdp;
beforeAll(async () => {
  pdp = await startRealPdp();
  suite.onTestFinished(pdp.close);
});

/** The guarded v2 fixture for `agent`, spoken to in raw lines; what ran is read from its stderr. */
function spawnGuarded(scope: TestScope, service: RealPdp, agent: string) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined && !key.startsWith('PDP_')) env[key] = value;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'test', 'proxy', 'fixtures', 'v2-server.ts')], {
    cwd: REPO_ROOT,
    env: {
      ...env,
      PDP_URL: service.url,
      PDP_DECIDE_TOKEN: service.decideToken,
      PDP_APPROVER_TOKEN: service.approverToken,
      IDEA_AGENT_ID: agent,
      FIXTURE_CALLS_ON_STDERR: '1',
    },
  });
  const lines: string[] = [];
  let pending = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    lines.push(...parts);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  scope.onTestFinished(() => {
    child.kill('SIGKILL');
    return Promise.resolve();
  });
  const messages = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    send: (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`),
    answerTo: async (id: number) => {
      const answer = () => messages().find((message) => message.id === id && !('method' in message));
      await waitFor(() => answer() !== undefined, `an answer to ${String(id)}`, 30_000);
      return answer() as { result?: Record<string, unknown>; error?: unknown };
    },
    ran: () => stderr.split('\n').filter((line) => line.startsWith('ran ')),
  };
}

const envelope = (capabilities: Record<string, unknown>) => ({
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw-2026-host', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': capabilities,
});

const callOf = (
  id: number,
  name: string,
  args: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  capabilities = { elicitation: {} },
) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, _meta: envelope(capabilities), ...extra },
});

interface InputRequired {
  resultType: 'input_required';
  inputRequests: Record<string, { method: string; params: { mode: string; message: string; requestedSchema: unknown } }>;
  requestState: string;
}

type Guarded = ReturnType<typeof spawnGuarded>;

async function askedFor(server: Guarded, id: number, args: Record<string, unknown>, name = 'idea_memory_write'): Promise<InputRequired> {
  server.send(callOf(id, name, args));
  const answer = await server.answerTo(id);
  expect(answer.error).toBeUndefined();
  return answer.result as unknown as InputRequired;
}

const allowOnce = { 'io.ideai/approval': { action: 'accept', content: { reponse: 'Autoriser une fois' } } };

interface Refusal {
  resultType: string;
  isError: boolean;
  content: { text: string }[];
  _meta: Record<string, { reason: string }>;
}

describe('guardMcpServer on 2026-07-28, approvals through input_required', () => {
  it('answers input_required with the French form, and runs the retry once the user allowed it', { timeout: 120_000 }, async () => {
    await pdp.admin.putAgent('demo', 'GuardModern', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const server = spawnGuarded(suite, pdp, 'GuardModern');
    const asked = await askedFor(server, 2, { text: 'kept', n: 1 });
    expect(asked.resultType).toBe('input_required');
    const form = asked.inputRequests['io.ideai/approval'];
    expect(form?.method).toBe('elicitation/create');
    expect(form?.params.mode).toBe('form');
    expect(form?.params.message).toContain('L\u2019agent GuardModern demande à utiliser l\u2019outil');
    expect(form?.params.message).not.toContain('kept');
    expect(asked.requestState).toMatch(/^ideai\.1\./u);
    expect(server.ran()).toEqual([]);
    // The host writes the same arguments in another key order: the same call.
    server.send(callOf(3, 'idea_memory_write', { n: 1, text: 'kept' }, { inputResponses: allowOnce, requestState: asked.requestState }));
    const done = (await server.answerTo(3)).result as { resultType: string; content: { text: string }[] };
    expect(done.resultType).toBe('complete');
    expect(done.content[0]?.text).toBe('idea_memory_write ran with {"n":1,"text":"kept"}');
    // The tool ran once, and without the guard's state.
    expect(server.ran()).toEqual(['ran idea_memory_write {"n":1,"text":"kept"}']);
    const answered = (await pdp.admin.listApprovals('demo')).filter((approval) => approval.requester === 'GuardModern');
    expect(answered.map((approval) => [approval.answer, approval.via])).toEqual([['once', 'elicitation']]);
  });

  it(
    'refuses a tampered state and a state replayed for other arguments or another tool, and runs nothing',
    { timeout: 120_000 },
    async () => {
      await pdp.admin.putAgent('demo', 'GuardTamper', [...READ_ONLY_DEFAULT], {
        askTools: ['idea_memory_write', 'idea_ticket_update_carnet'],
      });
      const server = spawnGuarded(suite, pdp, 'GuardTamper');
      const asked = await askedFor(server, 2, { text: 'one' });
      const state = asked.requestState;
      const flipped = `${state.slice(0, -2)}${state.endsWith('AA') ? 'AB' : 'AA'}`;
      const [body] = state.slice('ideai.1.'.length).split('.');
      const claims = JSON.parse(Buffer.from(body ?? '', 'base64url').toString('utf8')) as Record<string, unknown>;
      const mac = state.split('.').pop() ?? '';
      const forged = `ideai.1.${Buffer.from(JSON.stringify({ ...claims, tool: 'idea_ticket_update_carnet' })).toString('base64url')}.${mac}`;
      const retries = [
        callOf(3, 'idea_memory_write', { text: 'one' }, { inputResponses: allowOnce, requestState: flipped }),
        callOf(4, 'idea_memory_write', { text: 'two' }, { inputResponses: allowOnce, requestState: state }),
        callOf(5, 'idea_ticket_update_carnet', { text: 'one' }, { inputResponses: allowOnce, requestState: state }),
        callOf(6, 'idea_ticket_update_carnet', { text: 'one' }, { inputResponses: allowOnce, requestState: forged }),
      ];
      const causes: string[] = [];
      for (const retry of retries) {
        server.send(retry);
        const result = (await server.answerTo(retry.id)).result as unknown as Refusal;
        expect(result.resultType).toBe('complete');
        expect(result.isError).toBe(true);
        expect(result._meta['io.ideai/decision']?.reason).toBe('invalid_request_state');
        causes.push(result.content[0]?.text ?? '');
      }
      expect(causes.map((text) => /\(([^()]*)\)$/u.exec(text)?.[1])).toEqual([
        'bad seal',
        'sealed for other arguments',
        'sealed for another tool',
        'bad seal',
      ]);
      expect(server.ran()).toEqual([]);
      // Nothing was answered: the request is still pending for the panel.
      const pending = (await pdp.admin.listApprovals('demo', 'pending')).filter((approval) => approval.requester === 'GuardTamper');
      expect(pending).toHaveLength(1);
    },
  );

  it('refuses a state past its expiry (the approval request lived 2 s)', { timeout: 120_000 }, async () => {
    const shortLived = await startRealPdp({ approvalTtlSeconds: 2 });
    suite.onTestFinished(shortLived.close);
    await shortLived.admin.putAgent('demo', 'GuardLate', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const server = spawnGuarded(suite, shortLived, 'GuardLate');
    const asked = await askedFor(server, 2, { text: 'late' });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    server.send(callOf(3, 'idea_memory_write', { text: 'late' }, { inputResponses: allowOnce, requestState: asked.requestState }));
    const result = (await server.answerTo(3)).result as unknown as Refusal;
    expect(result.resultType).toBe('complete');
    expect(result._meta['io.ideai/decision']?.reason).toBe('invalid_request_state');
    expect(result.content[0]?.text).toContain('(expired)');
    expect(server.ran()).toEqual([]);
  });

  it('refuses at once, without a form, a call from a host whose request does not declare elicitation', { timeout: 120_000 }, async () => {
    await pdp.admin.putAgent('demo', 'GuardNoForm', [...READ_ONLY_DEFAULT], { askTools: ['idea_memory_write'] });
    const server = spawnGuarded(suite, pdp, 'GuardNoForm');
    server.send(callOf(2, 'idea_memory_write', { text: 'x' }, {}, {} as { elicitation: object }));
    const result = (await server.answerTo(2)).result;
    expect(result).toMatchObject({
      resultType: 'complete',
      isError: true,
      _meta: { 'io.ideai/decision': { reason: 'approval_required' } },
    });
    expect(server.ran()).toEqual([]);
  });
});
