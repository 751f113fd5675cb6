/**
 * Clients trust only their own socket (docs/api.md#security): a `PdpClient` on a `socketPath` whose
 * socket or folder belongs to another user, or whose folder group or others may write, connects to
 * nothing, so a squatter listening there receives no byte (no token); every decision is
 * `pdp_unavailable`, and one log line names the path and the fix. The check is made again before
 * each new connection, so a socket that becomes untrusted after a reconnection is refused too.
 */
import { chmod, symlink } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PdpClient } from '../../client/index.js';
import { checkSocket } from '../../client/http/socket-trust.js';
import { AS_ROOT, giveAway, hostileSocket, NOBODY, type HostileSocket } from '../support/hostile-socket.js';
import { tempFolder } from '../support/temp-folder.js';

const TOKEN = 'socket-trust-decide-token-000001';
const QUERY = { project: 'demo', requester: 'QA', tool: 'idea_stop_agent' } as const;
const clients: PdpClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function clientOn(socketPath: string) {
  const lines: { fields: Record<string, unknown>; message: string }[] = [];
  const client = new PdpClient({
    socketPath,
    token: TOKEN,
    timeoutMs: 2000,
    logger: { warn: (fields, message) => lines.push({ fields, message }) },
  });
  clients.push(client);
  return { client, lines };
}

/** Three decisions, a batch and a check on `socketPath`: all refused, nothing reaches the listener, one log line. */
async function expectRefusedWithoutSending(listener: HostileSocket, socketPath: string, cause: RegExp, fix: string) {
  const { client, lines } = clientOn(socketPath);
  for (let call = 0; call < 3; call += 1) {
    const decision = await client.decide(QUERY);
    expect(decision).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
    expect(decision.message).toMatch(cause);
  }
  const batch = await client.decideBatch([QUERY, { ...QUERY, tool: 'idea_memory_write' }]);
  expect(batch.map((decision) => decision.reason)).toEqual(['pdp_unavailable', 'pdp_unavailable']);
  expect(await client.check({ project: 'demo' })).toMatchObject({ ok: false, reason: 'pdp_unavailable' });
  expect(listener.connections()).toBe(0);
  expect(listener.received()).toBe('');
  expect(lines).toHaveLength(1);
  expect(lines[0]?.message).toContain(socketPath);
  expect(lines[0]?.message).toContain(fix);
  expect(lines[0]?.message).not.toContain(TOKEN);
  expect(lines[0]?.fields.socketPath).toBe(socketPath);
  expect(lines[0]?.fields.fix).toContain(fix);
}

describe('PdpClient trusts only its own socket', () => {
  it('sends the token to its own socket in its own 0700 folder (the listener hears it: the checks below can fail)', async () => {
    const listener = await hostileSocket(await tempFolder(), 0o700);
    const { client, lines } = clientOn(listener.socketPath);
    expect(await client.decide(QUERY)).toMatchObject({ allow: true, decisionId: 'squatted' });
    expect(listener.received()).toContain(`authorization: Bearer ${TOKEN}`);
    expect(lines).toEqual([]);
  });

  it('refuses a folder others may write (0777) or the group may write (0770), naming the chmod that fixes it', async () => {
    const parent = await tempFolder();
    for (const [mode, name] of [
      [0o777, 'open'],
      [0o770, 'group'],
      [0o1777, 'sticky'],
    ] as const) {
      const listener = await hostileSocket(parent, mode, name);
      const cause = new RegExp(
        `socket ${listener.socketPath} not trusted: its folder .* is writable by group or others \\(mode 0${(mode & 0o777).toString(8)}\\)`,
      );
      await expectRefusedWithoutSending(listener, listener.socketPath, cause, `Run: chmod 700 ${listener.folder}`);
    }
  });

  it.skipIf(!AS_ROOT)('refuses a 0755 folder of another user, as in /tmp/shared/pdp.sock of user nobody', async () => {
    const listener = await hostileSocket(await tempFolder(), 0o755);
    await giveAway(listener.socketPath);
    await giveAway(listener.folder);
    await expectRefusedWithoutSending(
      listener,
      listener.socketPath,
      new RegExp(`its folder ${listener.folder} belongs to uid ${String(NOBODY)}, not to this user \\(uid 0\\)`),
      'Use the socket of a service run by this user, in a folder of its own',
    );
  });

  it.skipIf(!AS_ROOT)('refuses a socket of another user in a folder of its own', async () => {
    const listener = await hostileSocket(await tempFolder(), 0o700);
    await giveAway(listener.socketPath);
    await expectRefusedWithoutSending(
      listener,
      listener.socketPath,
      new RegExp(`not trusted: it belongs to uid ${String(NOBODY)}`),
      'Use the socket of a service run by this user.',
    );
  });

  it('refuses a link to a socket; a folder reached through a link is checked, and connected to, where the link leads', async () => {
    const parent = await tempFolder();
    const safe = await hostileSocket(parent, 0o700, 'safe');
    const link = path.join(parent, 'link.sock');
    await symlink(safe.socketPath, link);
    await expectRefusedWithoutSending(safe, link, /link\.sock not trusted: it is a symbolic link/, 'not at a link to it');

    const linkedFolder = path.join(parent, 'f');
    await symlink(safe.folder, linkedFolder);
    expect(checkSocket(path.join(linkedFolder, 'pdp.sock'))).toEqual({ ok: true, connectPath: safe.socketPath });
    await chmod(safe.folder, 0o777);
    const opened = checkSocket(path.join(linkedFolder, 'pdp.sock'));
    expect(opened.ok).toBe(false);
    expect(opened.ok ? '' : opened.cause).toContain(
      `its folder ${linkedFolder} (${safe.folder}) is writable by group or others (mode 0777)`,
    );
    expect(safe.received()).toBe('');
  });

  it('checks again before each reconnection: a folder opened to others after the first answer gets nothing more', async () => {
    const listener = await hostileSocket(await tempFolder(), 0o700);
    listener.closeAfterEachAnswer();
    const { client, lines } = clientOn(listener.socketPath);
    expect(await client.decide(QUERY)).toMatchObject({ allow: true });
    expect(await client.decide(QUERY)).toMatchObject({ allow: true });
    expect(listener.connections()).toBe(2);
    const heard = listener.received();
    await chmod(listener.folder, 0o777);
    expect(await client.decide(QUERY)).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
    expect(await client.decide(QUERY)).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
    expect(listener.connections()).toBe(2);
    expect(listener.received()).toBe(heard);
    expect(lines).toHaveLength(1);
    // Fixed, it is used again: the log line is for a problem, not for the client's lifetime.
    await chmod(listener.folder, 0o700);
    expect(await client.decide(QUERY)).toMatchObject({ allow: true });
  });

  it('opens no event stream on an untrusted socket', async () => {
    const listener = await hostileSocket(await tempFolder(), 0o777);
    const { client, lines } = clientOn(listener.socketPath);
    const causes: string[] = [];
    const events = client.watchEvents({ onDisconnect: (cause) => causes.push(cause) });
    await expect.poll(() => causes.length).toBeGreaterThan(0);
    events.close();
    expect(causes[0]).toMatch(/not trusted: its folder .* is writable by group or others/);
    expect(listener.received()).toBe('');
    expect(lines).toHaveLength(1);
  });

  it('denies without a log line when there is no socket or no folder (the service is not running)', async () => {
    const parent = await tempFolder();
    for (const socketPath of [path.join(parent, 'pdp.sock'), path.join(parent, 'absent', 'pdp.sock')]) {
      const { client, lines } = clientOn(socketPath);
      const decision = await client.decide(QUERY);
      expect(decision).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
      expect(decision.message).toContain(`no socket at ${socketPath}`);
      expect(lines).toEqual([]);
    }
  });

  it('writes the line as a process warning when given no logger', async () => {
    const listener = await hostileSocket(await tempFolder(), 0o777);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const client = new PdpClient({ socketPath: listener.socketPath, token: TOKEN });
      clients.push(client);
      await client.decide(QUERY);
      await client.decide(QUERY);
      await expect.poll(() => warnings.length).toBe(1);
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings[0]).toMatchObject({ name: 'IdeaPdpClientWarning' });
    expect(warnings[0]?.message).toContain(`Run: chmod 700 ${listener.folder}`);
    expect(listener.received()).toBe('');
  });

  it("refuses all the same when the host's logger throws", async () => {
    const listener = await hostileSocket(await tempFolder(), 0o777);
    const client = new PdpClient({
      socketPath: listener.socketPath,
      token: TOKEN,
      logger: {
        warn: () => {
          throw new Error('logger down');
        },
      },
    });
    clients.push(client);
    for (let call = 0; call < 2; call += 1) {
      const decision = await client.decide(QUERY);
      expect(decision).toMatchObject({ allow: false, reason: 'pdp_unavailable' });
      expect(decision.message).toMatch(/not trusted: its folder .* is writable/);
    }
    expect(listener.received()).toBe('');
  });

  it('refuses a logger without warn', () => {
    expect(() => new PdpClient({ socketPath: '/x/pdp.sock', logger: {} as never })).toThrow(/logger must have a warn/);
  });
});
