import { chmod, chown, lstat, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseProjectsList } from '../../server/config.js';
import { makeFifo } from '../support/files.js';

describe('configuration from the environment', () => {
  it('refuses a decide token equal to the admin token', async () => {
    await expect(loadConfig({ PDP_ADMIN_TOKEN: 'same-secret', PDP_DECIDE_TOKEN: 'same-secret' })).rejects.toBeInstanceOf(ConfigError);
  });

  it('reads the approver token from PDP_APPROVER_TOKEN or its _FILE, and refuses one equal to another token', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'pdp-approver-'));
    try {
      const file = path.join(folder, 'approver');
      await writeFile(file, '  approver-from-file  \n', { mode: 0o600 });
      const base = { PDP_ADMIN_TOKEN: 'admin-secret', PDP_DECIDE_TOKEN: 'decide-secret' };
      expect((await loadConfig({ ...base, PDP_APPROVER_TOKEN_FILE: file })).approverToken).toBe('approver-from-file');
      expect((await loadConfig({ ...base, PDP_APPROVER_TOKEN: 'direct', PDP_APPROVER_TOKEN_FILE: file })).approverToken).toBe('direct');
      expect((await loadConfig({ ...base, PDP_APPROVER_TOKEN: '' })).approverToken).toBeUndefined();
      await expect(loadConfig({ ...base, PDP_APPROVER_TOKEN: 'admin-secret' })).rejects.toThrow(
        /PDP_APPROVER_TOKEN must differ from PDP_ADMIN_TOKEN/,
      );
      await expect(loadConfig({ ...base, PDP_APPROVER_TOKEN: 'decide-secret' })).rejects.toThrow(
        /PDP_APPROVER_TOKEN must differ from PDP_DECIDE_TOKEN/,
      );
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('refuses a non-loopback host without a decide token, and accepts it with one', async () => {
    await expect(loadConfig({ PDP_HOST: '0.0.0.0', PDP_ADMIN_TOKEN: 'admin' })).rejects.toThrow(/PDP_DECIDE_TOKEN/);
    await expect(loadConfig({ PDP_HOST: '0.0.0.0', PDP_ADMIN_TOKEN: 'admin', PDP_DECIDE_TOKEN: 'decide' })).resolves.toMatchObject({
      host: '0.0.0.0',
    });
  });

  it('parses PDP_PROJECTS and refuses bad ids, relative paths and duplicates', () => {
    expect(parseProjectsList('a=/x, b.c=/y/z')).toEqual({ a: '/x', 'b.c': '/y/z' });
    expect(() => parseProjectsList('../a=/x')).toThrow(ConfigError);
    expect(() => parseProjectsList('a=relative')).toThrow(ConfigError);
    expect(() => parseProjectsList('a=/x,a=/y')).toThrow(ConfigError);
    // Two ids for one folder: two write queues on one policy file.
    expect(() => parseProjectsList('a=/x,b=/x/')).toThrow(/projects a and b name the same folder/);
    expect(() => parseProjectsList('__proto__=/x')).toThrow(ConfigError);
  });
});

describe('the admin token kept in PDP_STATE_DIR (no PDP_ADMIN_TOKEN)', () => {
  let outer: string;
  beforeEach(async () => {
    outer = await mkdtemp(path.join(tmpdir(), 'pdp-config-'));
  });
  afterEach(async () => {
    await rm(outer, { recursive: true, force: true });
  });
  const load = (stateDir: string) => loadConfig({ PDP_STATE_DIR: stateDir, PDP_PROJECTS: 'p=/nonexistent' });
  const mode = async (file: string) => (await lstat(file)).mode & 0o777;

  it('generates a token in a 0600 file in a 0700 folder, then reuses it at the next start', async () => {
    const stateDir = path.join(outer, 'nested', 'state');
    const first = await load(stateDir);
    const file = path.join(stateDir, 'admin-token');
    expect(first).toMatchObject({ generatedTokenFile: file, adminTokenReused: false });
    expect(first.adminToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await readFile(file, 'utf8')).trim()).toBe(first.adminToken);
    expect(await mode(file)).toBe(0o600);
    expect(await mode(stateDir)).toBe(0o700);
    const second = await load(stateDir);
    expect(second).toMatchObject({ adminToken: first.adminToken, generatedTokenFile: file, adminTokenReused: true });
    expect(await readdir(stateDir)).toEqual(['admin-token']);
  });

  it('reuses a token the user wrote, in a file only its owner can read', async () => {
    const stateDir = path.join(outer, 'state');
    await mkdir(stateDir, { mode: 0o700 });
    await writeFile(path.join(stateDir, 'admin-token'), '  my-own-admin-token-0123456789\n', { mode: 0o400 });
    expect(await load(stateDir)).toMatchObject({ adminToken: 'my-own-admin-token-0123456789', adminTokenReused: true });
  });

  it.each([
    [
      'mode 0644',
      async (file: string) => writeFile(file, 'a'.repeat(43), { mode: 0o644 }),
      /readable or writable by group or others \(mode 0644/,
    ],
    [
      'mode 0660',
      async (file: string) => {
        await writeFile(file, 'a'.repeat(43));
        await chmod(file, 0o660);
      },
      /mode 0660/,
    ],
    ['empty', async (file: string) => writeFile(file, '', { mode: 0o600 }), /does not hold a token/],
    ['two words', async (file: string) => writeFile(file, 'token with spaces in it\n', { mode: 0o600 }), /does not hold a token/],
    ['a folder', async (file: string) => mkdir(file, { mode: 0o700 }), /is not a regular file/],
    ['a FIFO', (file: string) => makeFifo(file), /is not a regular file/],
    [
      'a link to a safe token file',
      async (file: string) => {
        await writeFile(`${file}.real`, 'b'.repeat(43), { mode: 0o600 });
        await symlink(`${file}.real`, file);
      },
      /is a symbolic link/,
    ],
    [
      'owned by another user',
      async (file: string) => {
        await writeFile(file, 'c'.repeat(43), { mode: 0o600 });
        await chown(file, 54321, 54321);
      },
      /belongs to uid 54321/,
    ],
  ])('refuses to start when the token file is %s, and leaves it as it was', async (_label, plant, message) => {
    const stateDir = path.join(outer, 'state');
    await mkdir(stateDir, { mode: 0o700 });
    const file = path.join(stateDir, 'admin-token');
    await plant(file);
    const before = await lstat(file);
    await expect(load(stateDir)).rejects.toThrow(message);
    await expect(load(stateDir)).rejects.toBeInstanceOf(ConfigError);
    const after = await lstat(file);
    expect([after.ino, after.mode, after.size, after.uid]).toEqual([before.ino, before.mode, before.size, before.uid]);
  });

  it('never writes the token through a link planted at the token file or at a temp name', async () => {
    const stateDir = path.join(outer, 'state');
    await mkdir(stateDir, { mode: 0o700 });
    const stolen = path.join(outer, 'stolen');
    await mkdir(stolen);
    // Dangling links: a write that followed them would create the targets.
    await symlink(path.join(stolen, 'final'), path.join(stateDir, 'admin-token'));
    for (let pid = process.pid - 5; pid <= process.pid + 5; pid++) {
      await symlink(path.join(stolen, `temp-${pid}`), path.join(stateDir, `admin-token.${pid}.tmp`));
    }
    await expect(load(stateDir)).rejects.toThrow(/admin-token is a symbolic link/);
    expect(await readdir(stolen)).toEqual([]);
    // With the final name free, the token goes to a fresh file; the planted temp links stay untouched.
    await rm(path.join(stateDir, 'admin-token'));
    const config = await load(stateDir);
    expect(await readdir(stolen)).toEqual([]);
    expect((await lstat(path.join(stateDir, 'admin-token'))).isFile()).toBe(true);
    expect((await readFile(path.join(stateDir, 'admin-token'), 'utf8')).trim()).toBe(config.adminToken);
  });

  it.each([
    ['writable by its group', 0o770, /writable by group or others \(mode 0770\)/],
    ['writable by others', 0o757, /writable by group or others \(mode 0757\)/],
    ['world-writable and sticky like /tmp', 0o1777, /writable by group or others \(mode 0777\)/],
  ])('refuses a state folder %s before writing anything in it', async (_label, folderMode, message) => {
    const stateDir = path.join(outer, 'state');
    await mkdir(stateDir);
    await chmod(stateDir, folderMode);
    await expect(load(stateDir)).rejects.toThrow(message);
    expect(await readdir(stateDir)).toEqual([]);
  });

  it('refuses a state folder that is a link, even to a safe folder, or that belongs to another user', async () => {
    const real = path.join(outer, 'real');
    await mkdir(real, { mode: 0o700 });
    await symlink(real, path.join(outer, 'state'));
    await expect(load(path.join(outer, 'state'))).rejects.toThrow(/PDP_STATE_DIR .*state is a symbolic link/);
    await symlink(path.join(outer, 'nowhere'), path.join(outer, 'dangling'));
    await expect(load(path.join(outer, 'dangling'))).rejects.toThrow(/is a symbolic link/);
    expect(await readdir(real)).toEqual([]);
    await chown(real, 54321, 54321);
    await expect(load(real)).rejects.toThrow(/belongs to uid 54321/);
  });

  it('touches no state folder when PDP_ADMIN_TOKEN is given', async () => {
    const stateDir = path.join(outer, 'state');
    await expect(loadConfig({ PDP_STATE_DIR: stateDir, PDP_ADMIN_TOKEN: 'given', PDP_PROJECTS: 'p=/x' })).resolves.toMatchObject({
      adminToken: 'given',
      generatedTokenFile: undefined,
    });
    await expect(lstat(stateDir)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('the default state folder (no PDP_STATE_DIR)', () => {
  let outer: string;
  beforeEach(async () => {
    outer = await mkdtemp(path.join(tmpdir(), 'pdp-state-default-'));
  });
  afterEach(async () => {
    await rm(outer, { recursive: true, force: true });
  });
  const mode = async (file: string) => (await lstat(file)).mode & 0o777;

  it('is ~/.local/state/idea-pdp without XDG_STATE_HOME, made 0700 with its parents, whatever the umask', async () => {
    const home = path.join(outer, 'home');
    await mkdir(home);
    const previous = process.umask(0o022);
    try {
      const config = await loadConfig({ HOME: home, PDP_PROJECTS: 'p=/nonexistent' });
      const stateDir = path.join(home, '.local', 'state', 'idea-pdp');
      expect(config.stateDir).toBe(stateDir);
      expect(config.generatedTokenFile).toBe(path.join(stateDir, 'admin-token'));
      expect(config.socketPath).toBe(path.join(stateDir, 'pdp.sock'));
      expect(await mode(stateDir)).toBe(0o700);
      expect(await mode(path.join(home, '.local', 'state'))).toBe(0o700);
      expect(await mode(path.join(home, '.local'))).toBe(0o700);
      expect(await mode(config.generatedTokenFile ?? '')).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  it('is $XDG_STATE_HOME/idea-pdp when it is absolute, and ignores a relative one', async () => {
    const xdg = path.join(outer, 'xdg');
    const home = path.join(outer, 'home');
    const absolute = await loadConfig({ HOME: home, XDG_STATE_HOME: xdg, PDP_PROJECTS: 'p=/nonexistent' });
    expect(absolute.stateDir).toBe(path.join(xdg, 'idea-pdp'));
    expect(await readdir(path.join(xdg, 'idea-pdp'))).toEqual(['admin-token']);
    await expect(lstat(home)).rejects.toMatchObject({ code: 'ENOENT' });
    const relative = await loadConfig({ HOME: home, XDG_STATE_HOME: 'state', PDP_PROJECTS: 'p=/nonexistent' });
    expect(relative.stateDir).toBe(path.join(home, '.local', 'state', 'idea-pdp'));
  });

  it('is never a folder of the current one, and PDP_STATE_DIR still wins', async () => {
    const config = await loadConfig({ HOME: path.join(outer, 'home'), PDP_ADMIN_TOKEN: 'given', PDP_PROJECTS: 'p=/x' });
    expect(path.relative(process.cwd(), config.stateDir).startsWith('..')).toBe(true);
    const given = await loadConfig({ PDP_STATE_DIR: path.join(outer, 'mine'), PDP_ADMIN_TOKEN: 'given', PDP_PROJECTS: 'p=/x' });
    expect(given.stateDir).toBe(path.join(outer, 'mine'));
  });

  it('keeps refusing a default folder that is a link or writable by others', async () => {
    const xdg = path.join(outer, 'xdg');
    await mkdir(xdg);
    await mkdir(path.join(outer, 'elsewhere'), { mode: 0o700 });
    await symlink(path.join(outer, 'elsewhere'), path.join(xdg, 'idea-pdp'));
    await expect(loadConfig({ XDG_STATE_HOME: xdg, PDP_PROJECTS: 'p=/x' })).rejects.toThrow(/idea-pdp is a symbolic link/);
    await rm(path.join(xdg, 'idea-pdp'));
    await mkdir(path.join(xdg, 'idea-pdp'));
    await chmod(path.join(xdg, 'idea-pdp'), 0o777);
    await expect(loadConfig({ XDG_STATE_HOME: xdg, PDP_PROJECTS: 'p=/x' })).rejects.toThrow(/writable by group or others/);
  });
});
