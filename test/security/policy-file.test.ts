/**
 * A hostile or broken policy file. Whoever can write `.ideai/` can point the policy file at any
 * file the service may read (a symlink); the service must fail closed and must not turn its
 * error messages (sent to agents in every denial, and shown by the view) into a way to read the
 * first bytes of that file. Half-written and absurd files fail closed without crashing.
 */
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { Decision } from '../../schemas/index.js';
import { buildTestApp, makeTestProjects, type TestApp, type TestScope } from '../support/app.js';
import { makeFifo, policyText } from '../support/files.js';
import { waitFor } from '../support/wait.js';

const ADMIN = 'policy-file-admin-token-0123456789';
const SECRET = 'TOPSECRET-abcdefghij0123456789';
async function start(t: TestScope): Promise<{ app: FastifyInstance; made: TestApp }> {
  const made = await buildTestApp(t, { demo: policyText(undefined, { QA: ['idea_memory_write'] }) }, { adminToken: ADMIN, rescanMs: 50 });
  return { app: made.app, made };
}

async function decide(app: FastifyInstance, requester: string, tool: string): Promise<Decision> {
  return (await app.inject({ method: 'POST', url: '/decide', payload: { project: 'demo', requester, tool } })).json<Decision>();
}

/** Everything the service says about the project, as text. */
async function everythingSaid(app: FastifyInstance): Promise<string> {
  const parts = [
    JSON.stringify(await decide(app, 'QA', 'idea_memory_write')),
    JSON.stringify(await decide(app, 'Main', 'idea_memory_read')),
    (await app.inject({ method: 'GET', url: '/projects/demo/mcp-tool-permissions' })).body,
    (await app.inject({ method: 'GET', url: '/projects' })).body,
    (await app.inject({ method: 'GET', url: '/projects/demo/requesters/QA/effective' })).body,
    (
      await app.inject({
        method: 'PUT',
        url: '/projects/demo/mcp-tool-permissions/agents/QA',
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: { allowedTools: [] },
      })
    ).body,
  ];
  return parts.join('\n');
}

describe('the policy file points at a secret', () => {
  const secrets: [string, string][] = [
    ['a plain text file', `${SECRET}\nline two\n`],
    ['a .env file', `API_KEY=${SECRET}\n`],
    ['JSON with the secret after a valid prefix', `{"version": 1, "token": ${SECRET}}`],
    ['valid JSON whose version is the secret', JSON.stringify({ version: SECRET })],
    // Not covered on purpose: shape errors name the JSON pointer of the offending value (the key
    // names of a JSON file), which is what makes them useful to the person fixing the file.
  ];
  for (const [what, content] of secrets) {
    it(`fails closed and never echoes the bytes of ${what}`, async (t) => {
      const { app, made } = await start(t);
      expect((await decide(app, 'QA', 'idea_memory_write')).allow).toBe(true);
      const secretFile = path.join(made.outer, 'secret.txt');
      await writeFile(secretFile, content, { mode: 0o600 });
      const link = path.join(made.root, 'demo', '.ideai', 'next');
      await symlink(secretFile, link);
      await rename(link, made.policyPath('demo'));
      await waitFor(async () => (await decide(app, 'Main', 'idea_memory_read')).reason === 'policy_invalid', 'the swap to be seen');
      expect(await decide(app, 'QA', 'idea_memory_write')).toMatchObject({ allow: false, reason: 'policy_invalid' });
      const said = await everythingSaid(app);
      for (const fragment of [SECRET, SECRET.slice(0, 8), SECRET.slice(-8), 'abcdefgh']) expect(said).not.toContain(fragment);
      // Still useful to a human: where the file is wrong.
      expect(said).toMatch(/line \d+, column \d+|at \/|version/);
    });
  }
});

describe('the agents file points at a secret', () => {
  it('lists no agents and never echoes the bytes of the file', async (t) => {
    const { app, made } = await start(t);
    const secretFile = path.join(made.outer, 'secret.txt');
    await writeFile(secretFile, `${SECRET}\n`, { mode: 0o600 });
    await symlink(secretFile, path.join(made.root, 'demo', '.ideai', 'agents.json'));
    await waitFor(
      async () =>
        (await app.inject({ method: 'GET', url: '/projects/demo/mcp-tool-permissions' })).json<{ agentsFile?: { error: unknown } }>()
          .agentsFile?.error != null,
      'the agents file to be read',
    );
    const said = await everythingSaid(app);
    for (const fragment of [SECRET, SECRET.slice(0, 8), 'abcdefgh']) expect(said).not.toContain(fragment);
    expect(said).toMatch(/agents\.json: invalid JSON/);
  });
});

describe('broken and absurd policy files', () => {
  it('fails closed on half-written, empty, binary and deeply nested files, and recovers when fixed', async (t) => {
    const { app, made } = await start(t);
    const file = made.policyPath('demo');
    const good = policyText(undefined, { QA: ['idea_memory_write'] });
    const bad = [
      good.slice(0, Math.floor(good.length / 2)),
      '',
      '\u0000\u0001\u0002',
      Buffer.from([0xff, 0xfe, 0x00, 0x7b]).toString('latin1'),
      `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
      `{"version":1,"agents":${'['.repeat(50_000)}}`,
      JSON.stringify({
        version: 1,
        agents: [
          { agentId: 'QA', policy: { allowedTools: ['idea_memory_write'] } },
          { agentId: 'QA', policy: { allowedTools: [] } },
        ],
      }),
    ];
    for (const content of bad) {
      await writeFile(file, content);
      await waitFor(
        async () => (await decide(app, 'Main', 'idea_memory_read')).reason === 'policy_invalid',
        `invalid: ${content.slice(0, 30)}`,
      );
      expect(await decide(app, 'QA', 'idea_memory_write')).toMatchObject({ allow: false, reason: 'policy_invalid' });
      const view = await app.inject({ method: 'GET', url: '/projects/demo/mcp-tool-permissions' });
      expect(view.statusCode).toBe(200);
      expect(view.json()).toMatchObject({ status: 'invalid' });
      await writeFile(file, good);
      await waitFor(async () => (await decide(app, 'QA', 'idea_memory_write')).allow, 'the fixed file');
    }
  });

  it('fails closed, without hanging its writes, when the file is a FIFO, a device or huge', async (t) => {
    const { app, made } = await start(t);
    const file = made.policyPath('demo');
    const agents = path.join(made.root, 'demo', '.ideai', 'agents.json');
    const fifoOutside = path.join(made.outer, 'outside.fifo');
    execFileSync('mkfifo', [fifoOutside]);
    const repair = () =>
      app.inject({
        method: 'PUT',
        url: '/projects/demo/mcp-tool-permissions',
        headers: { authorization: `Bearer ${ADMIN}` },
        payload: { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_memory_read'] } }] },
      });
    // `repairs`: whether to repair with the replacement in place. The /dev/zero link is removed
    // first: were the service to write through it, the test would clobber the real device.
    const replacements: [string, () => Promise<void>, boolean][] = [
      ['a FIFO', () => makeFifo(file), true],
      ['a symlink to a FIFO', () => symlink(fifoOutside, file), true],
      ['a symlink to /dev/zero', () => symlink('/dev/zero', file), false],
      ['a 17 MiB file', () => writeFile(file, `{"version":1,"x":"${'x'.repeat(17 * 1024 * 1024)}"}`), true],
    ];
    for (const [what, replace, repairs] of replacements) {
      await writeFile(file, policyText(undefined, { QA: ['idea_memory_write'] }));
      await waitFor(async () => (await decide(app, 'QA', 'idea_memory_write')).allow, `granted before ${what}`);
      await rm(file);
      await replace();
      // Fail closed: the last good state is not kept, whatever the file turned into.
      await waitFor(async () => (await decide(app, 'QA', 'idea_memory_write')).reason === 'policy_invalid', `invalid as ${what}`);
      if (!repairs) await rm(file);
      // And the user can still repair it: the write is not stuck behind a read that never ends.
      const repaired = await repair();
      expect(repaired.statusCode, `${what}: ${repaired.body.slice(0, 200)}`).toBe(200);
      expect(await decide(app, 'QA', 'idea_memory_write')).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
      const written = await lstat(file);
      expect(written.isFile(), `${what}: the repair wrote a regular file in place`).toBe(true);
      expect(written.mode & 0o777, what).toBe(0o644);
      await rm(file, { force: true });
    }
    // The FIFO the link pointed at was left alone (the link was replaced, not its target).
    expect((await lstat(fifoOutside)).isFIFO()).toBe(true);
    // An agents.json that is a FIFO does not block the project either.
    execFileSync('mkfifo', [agents]);
    await waitFor(
      async () =>
        (await app.inject({ method: 'GET', url: '/projects/demo/mcp-tool-permissions' })).json<{ agentsFile?: { error: unknown } }>()
          .agentsFile?.error != null,
      'agents.json as a FIFO reported',
    );
    expect((await repair()).statusCode).toBe(200);
  });

  it('starts, and fails closed, when the files are already a FIFO, a device, a folder or huge at start', async (t) => {
    const grant = policyText(undefined, { QA: ['idea_memory_write'] });
    const made = await makeTestProjects(t, { fifo: null, zero: null, folder: null, huge: null, fifoAgents: grant, good: grant });
    const fifoOutside = path.join(made.outer, 'outside.fifo');
    execFileSync('mkfifo', [fifoOutside]);
    execFileSync('mkfifo', [made.policyPath('fifo')]);
    await symlink('/dev/zero', made.policyPath('zero'));
    await mkdir(made.policyPath('folder'));
    await writeFile(made.policyPath('huge'), `{"version":1,"x":"${'x'.repeat(17 * 1024 * 1024)}"}`);
    await symlink(fifoOutside, path.join(made.root, 'fifoAgents', '.ideai', 'agents.json'));
    const { app } = await buildTestApp(t, {}, { projects: made, adminToken: ADMIN, rescanMs: 0 });
    const ask = async (project: string, tool: string): Promise<Decision> =>
      (await app.inject({ method: 'POST', url: '/decide', payload: { project, requester: 'QA', tool } })).json<Decision>();
    for (const project of ['fifo', 'zero', 'folder', 'huge']) {
      expect(await ask(project, 'idea_memory_read'), project).toMatchObject({ allow: false, reason: 'policy_invalid' });
      const view = (await app.inject({ method: 'GET', url: `/projects/${project}/mcp-tool-permissions` })).json<{ status: string }>();
      expect(view.status, project).toBe('invalid');
    }
    // An agents.json that cannot be read is reported; the policy itself still applies.
    expect(await ask('fifoAgents', 'idea_memory_write')).toMatchObject({ allow: true });
    const agentsView = (await app.inject({ method: 'GET', url: '/projects/fifoAgents/mcp-tool-permissions' })).json<{
      agentsFile?: { error: unknown };
    }>();
    expect(agentsView.agentsFile?.error).toEqual(expect.stringContaining('cannot read the file'));
    expect(await ask('good', 'idea_memory_write')).toMatchObject({ allow: true });
    // And the broken one is repaired by a write, which is not stuck behind a read that never ends.
    await rm(made.policyPath('fifo'));
    const repaired = await app.inject({
      method: 'PUT',
      url: '/projects/fifo/mcp-tool-permissions',
      headers: { authorization: `Bearer ${ADMIN}` },
      payload: JSON.parse(grant) as Record<string, unknown>,
    });
    expect(repaired.statusCode).toBe(200);
    expect(await ask('fifo', 'idea_memory_write')).toMatchObject({ allow: true });
  });

  it('fails closed when .ideai/mcp-tool-permissions.json is a folder or a dangling symlink', async (t) => {
    const { app, made } = await start(t);
    const file = made.policyPath('demo');
    await rm(file);
    await mkdir(file);
    await waitFor(async () => (await decide(app, 'Main', 'idea_memory_read')).reason === 'policy_invalid', 'a folder as the policy file');
    await rm(file, { recursive: true });
    await symlink(path.join(made.outer, 'nowhere.json'), file);
    // A dangling link reads as "no file" or "invalid": either way QA's grant is gone.
    await waitFor(async () => !(await decide(app, 'QA', 'idea_memory_write')).allow, 'a dangling symlink');
    expect((await decide(app, 'QA', 'idea_memory_write')).allow).toBe(false);
  });
});
