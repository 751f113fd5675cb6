/**
 * hard-links.ts on its own (docs/design.md#links), with real files read as the service reads them:
 * a policy or servers file with a second name is refused, and the content refused stays refused,
 * even once the other name is gone, until the file is rewritten or replaced. linked-policy.test.ts
 * checks the same through the registry and its watcher.
 */
import { link, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { revisionOf } from '../../server/domain/compile.js';
import { SERVERS_FILE } from '../../server/domain/servers-file.js';
import { policyOf, serversOf } from '../../server/projects/compiled-files.js';
import { readProjectFiles } from '../../server/projects/file-read.js';
import {
  HARD_LINKED,
  HardLinkMemory,
  SERVERS_HARD_LINKED,
  ServersHardLinkMemory,
  hardLinkedPolicy,
  hardLinkedServers,
} from '../../server/projects/hard-links.js';
import { POLICY_FILE, policyText, writeProject } from '../support/files.js';
import { tempFolder } from '../support/temp-folder.js';

const SERVERS_NAME = 'mcp-servers.json';
const POLICY = policyText(['idea_memory_read']);
const SERVERS_DOC = { version: 1, servers: { fs: { label: 'Fichiers', tools: { read_text_file: { access: 'read' } } } } };
const SERVERS = `${JSON.stringify(SERVERS_DOC)}\n`;

/** A project folder with a policy file and a servers file, and the paths of both. */
async function project() {
  const root = await writeProject(await tempFolder(), 'demo', { policy: POLICY, servers: SERVERS });
  const ideai = path.join(root, '.ideai');
  return { root, ideai, policyPath: path.join(ideai, POLICY_FILE), serversPath: path.join(ideai, SERVERS_NAME) };
}

/** The policy file as the service reads it now, judged by `memory`. */
async function servedPolicy(root: string, memory: HardLinkMemory) {
  const { policy } = await readProjectFiles(root);
  return memory.judge(policy, await policyOf(policy));
}

async function servedServers(root: string, memory: ServersHardLinkMemory) {
  const { servers } = await readProjectFiles(root);
  return memory.judge(servers, serversOf(servers));
}

describe('hardLinkedPolicy and hardLinkedServers', () => {
  it('refuse the file, say how many names it has and how to fix it, with a revision that follows its content', () => {
    const policy = hardLinkedPolicy(Buffer.from(POLICY), 3);
    expect(policy).toMatchObject({ status: 'invalid', error: { file: `.ideai/${POLICY_FILE}` } });
    if (policy.status !== 'invalid') return;
    expect(policy.error.message).toMatch(new RegExp(`^${HARD_LINKED.replace(/[()]/g, '\\$&')}: it has 3 names`));
    expect(policy.error.message).toContain('cp .ideai/mcp-tool-permissions.json new.json');
    expect(policy.revision).toBe(hardLinkedPolicy(Buffer.from(POLICY), 2).revision);
    expect(policy.revision).not.toBe(hardLinkedPolicy(Buffer.from(`${POLICY} `), 3).revision);
    expect(policy.revision).not.toBe(revisionOf(POLICY));

    const servers = hardLinkedServers(Buffer.from(SERVERS), 2);
    expect(servers).toMatchObject({ status: 'invalid', error: { file: SERVERS_FILE } });
    if (servers.status !== 'invalid') return;
    expect(servers.error.message.startsWith(`${SERVERS_HARD_LINKED}: it has 2 names`)).toBe(true);
    expect(servers.revision).not.toBe(hardLinkedServers(Buffer.from(`${SERVERS} `), 2).revision);
  });
});

describe('HardLinkMemory, on a policy file read from disk', () => {
  it('serves a file with one name as compiled, and remembers nothing', async () => {
    const { root } = await project();
    const memory = new HardLinkMemory();
    expect(await servedPolicy(root, memory)).toMatchObject({ status: 'ok', revision: revisionOf(POLICY) });
    expect(memory.refusing).toBe(false);
  });

  it('refuses it while it has a second name, and still once that name is gone: the same refusal, the same revision', async () => {
    const { root, ideai, policyPath } = await project();
    const memory = new HardLinkMemory();
    await link(policyPath, path.join(ideai, 'backup.json'));
    const linked = await servedPolicy(root, memory);
    expect(linked).toMatchObject({ status: 'invalid', error: { message: expect.stringContaining('it has 2 names') as string } });
    expect(memory.refusing).toBe(true);

    await rm(path.join(ideai, 'backup.json'));
    const after = await servedPolicy(root, memory);
    expect(after).toMatchObject({
      status: 'invalid',
      revision: linked.revision,
      error: { message: expect.stringMatching(/when it was read, and it has not been rewritten or replaced since/) as string },
    });
    expect(memory.refusing).toBe(true);
  });

  it('keeps refusing after an editor saves through the other name (that name gets a new file, ours drops to one name)', async () => {
    const { root, ideai, policyPath } = await project();
    const other = path.join(ideai, 'other.json');
    const memory = new HardLinkMemory();
    await link(policyPath, other);
    await servedPolicy(root, memory);
    await writeFile(`${other}.tmp`, policyText(['idea_memory_read', 'idea_memory_write']));
    await rename(`${other}.tmp`, other);
    expect((await servedPolicy(root, memory)).status).toBe('invalid');
  });

  it('keeps refusing the file renamed away and back: absent meanwhile, it is served as absent and not forgotten', async () => {
    const { root, policyPath } = await project();
    const memory = new HardLinkMemory();
    await link(policyPath, `${policyPath}.bak`);
    await servedPolicy(root, memory);
    await rm(`${policyPath}.bak`);
    await rename(policyPath, `${policyPath}.away`);
    expect(await servedPolicy(root, memory)).toMatchObject({ status: 'ok', fileExists: false });
    expect(memory.refusing).toBe(true);
    await rename(`${policyPath}.away`, policyPath);
    expect((await servedPolicy(root, memory)).status).toBe('invalid');
  });

  it('serves the file again once rewritten in place, and forgets the refusal', async () => {
    const { root, ideai, policyPath } = await project();
    const memory = new HardLinkMemory();
    await link(policyPath, path.join(ideai, 'backup.json'));
    await servedPolicy(root, memory);
    await rm(path.join(ideai, 'backup.json'));
    const rewritten = policyText(['idea_memory_read', 'idea_context_read']);
    await writeFile(policyPath, rewritten);
    expect(await servedPolicy(root, memory)).toMatchObject({ status: 'ok', revision: revisionOf(rewritten) });
    expect(memory.refusing).toBe(false);
  });

  it('serves the same content again once another file replaces it (a new inode)', async () => {
    const { root, ideai, policyPath } = await project();
    const memory = new HardLinkMemory();
    await link(policyPath, path.join(ideai, 'backup.json'));
    await servedPolicy(root, memory);
    await rm(path.join(ideai, 'backup.json'));
    await writeFile(`${policyPath}.new`, POLICY);
    await rename(`${policyPath}.new`, policyPath);
    expect(await servedPolicy(root, memory)).toMatchObject({ status: 'ok', revision: revisionOf(POLICY) });
    expect(memory.refusing).toBe(false);
  });
});

describe('ServersHardLinkMemory, on a servers file read from disk', () => {
  it('refuses a servers file with a second name, still once it is gone, and serves it again once rewritten', async () => {
    const { root, ideai, serversPath } = await project();
    const memory = new ServersHardLinkMemory();
    expect((await servedServers(root, memory)).status).toBe('ok');
    expect(memory.refusing).toBe(false);

    await link(serversPath, path.join(ideai, 'servers-backup.json'));
    expect(await servedServers(root, memory)).toMatchObject({
      status: 'invalid',
      error: { file: SERVERS_FILE, message: expect.stringContaining(`${SERVERS_HARD_LINKED}: it has 2 names`) as string },
    });
    expect(memory.refusing).toBe(true);

    await rm(path.join(ideai, 'servers-backup.json'));
    expect(await servedServers(root, memory)).toMatchObject({
      status: 'invalid',
      error: { file: SERVERS_FILE, message: expect.stringContaining(`${SERVERS_HARD_LINKED} when it was read`) as string },
    });

    await writeFile(serversPath, SERVERS.replace('Fichiers', 'Disque'));
    expect((await servedServers(root, memory)).status).toBe('ok');
    expect(memory.refusing).toBe(false);
  });

  it('remembers the servers file apart from the policy file', async () => {
    const { root, ideai, policyPath } = await project();
    const policies = new HardLinkMemory();
    const servers = new ServersHardLinkMemory();
    await link(policyPath, path.join(ideai, 'backup.json'));
    await servedPolicy(root, policies);
    await servedServers(root, servers);
    expect([policies.refusing, servers.refusing]).toEqual([true, false]);
  });
});
