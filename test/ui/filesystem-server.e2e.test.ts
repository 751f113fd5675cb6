/**
 * docs/api.md#other-mcp-servers-tools, end to end: a third-party server from the npm registry,
 * `@modelcontextprotocol/server-filesystem` (an exact-pinned devDependency: nothing is installed at
 * test time), guarded by the real `idea-mcp-proxy --server fs` and the real service over a temp
 * project. A declared read tool runs by default, a declared write tool is refused until an override
 * grants it, an undeclared tool the server lists is reported, shown in the panel in chromium and
 * declared there, and is then decided by the class the user chose.
 */
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DECISION_META_KEY } from '../../client/mcp.js';
import type { ServersResponse } from '../../schemas/index.js';
import { REPO_ROOT } from '../support/service-process.js';
import { connectThroughProxy } from '../support/proxy-process.js';
import { POLL, browserTestsEnabled, useBrowserHarness } from './panel-page.js';

const harness = useBrowserHarness();

const FILESYSTEM_SERVER = path.join(REPO_ROOT, 'node_modules', '@modelcontextprotocol', 'server-filesystem', 'dist', 'index.js');
const SERVERS = {
  version: 1,
  servers: {
    fs: {
      label: 'Fichiers',
      tools: {
        read_text_file: { access: 'read', label: 'Lire un fichier' },
        write_file: { access: 'write', label: 'Écrire un fichier' },
      },
    },
  },
};

type Host = Awaited<ReturnType<typeof connectThroughProxy>>;
const reasonOf = (result: { _meta?: Record<string, unknown> | undefined }): string | undefined =>
  (result._meta?.[DECISION_META_KEY] as { reason?: string } | undefined)?.reason;
const textOf = (result: object): string => ((result as { content?: { text?: string }[] }).content ?? [])[0]?.text ?? '';

describe.skipIf(!browserTestsEnabled)(
  '@modelcontextprotocol/server-filesystem behind idea-mcp-proxy --server fs',
  { timeout: 120_000 },
  () => {
    let files = '';
    const hosts: Host[] = [];

    beforeAll(async () => {
      files = await realpath(await mkdtemp(path.join(tmpdir(), 'idea-fs-server-')));
      await writeFile(path.join(files, 'hello.txt'), 'Bonjour\n');
    });
    afterAll(async () => {
      for (const host of hosts) await host.close();
      await rm(files, { recursive: true, force: true });
    });

    /** An agent's MCP host: the SDK's client, the proxy, the filesystem server on the temp folder. */
    async function host(agent: string): Promise<Host> {
      const connected = await connectThroughProxy(
        // A decision deadline of 10 s, not the default 500 ms: browser suites share two cores, and a late answer is a refusal.
        ['--pdp', harness.service.baseUrl, '--project', 'demo', '--agent', agent, '--server', 'fs', '--timeout-ms', '10000'],
        {},
        [process.execPath, FILESYSTEM_SERVER, files],
      );
      hosts.push(connected);
      return connected;
    }

    it('allows the declared read tool, refuses the write tool until granted, and has an undeclared tool declared from the panel', async () => {
      const service = harness.service;
      await writeFile(path.join(service.projectsRoot, 'demo', '.ideai', 'mcp-servers.json'), JSON.stringify(SERVERS, null, 2));
      await expect
        .poll(async () => ((await (await service.admin('GET', '/projects/demo/catalog')).json()) as { version: string }).version, POLL)
        .not.toBe('builtin');

      // QA has no override: the read-only default, which holds the declared read tools.
      const qa = await host('QA');
      const listed = await qa.client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toEqual(['read_text_file']);
      const read = await qa.client.callTool({ name: 'read_text_file', arguments: { path: path.join(files, 'hello.txt') } });
      expect(read.isError).not.toBe(true);
      expect(textOf(read)).toContain('Bonjour');

      // DevFrontend's override does not name fs/write_file: refused by the proxy, the file never written.
      const dev = await host('DevFrontend');
      const target = path.join(files, 'written.txt');
      const refused = await dev.client.callTool({ name: 'write_file', arguments: { path: target, content: 'non' } });
      expect(refused.isError).toBe(true);
      expect(reasonOf(refused)).toBe('not_in_allowlist');
      await expect(readFile(target, 'utf8')).rejects.toThrow();
      const { view } = await service.permissions('demo');
      const devFrontend = view.agents.find((agent) => agent.agentId === 'DevFrontend');
      const granted = await service.admin('PUT', '/projects/demo/mcp-tool-permissions/agents/DevFrontend', {
        allowedTools: [...(devFrontend?.allowedTools ?? []), 'fs/write_file'],
      });
      expect(granted.status).toBe(200);
      const written = await dev.client.callTool({ name: 'write_file', arguments: { path: target, content: 'oui' } });
      expect(written.isError, textOf(written)).not.toBe(true);
      expect(await readFile(target, 'utf8')).toBe('oui');

      // The proxy reported what the server lists beyond the catalog; calling it is never allowed.
      await expect
        .poll(async () => {
          const body = (await (await service.admin('GET', '/projects/demo/servers')).json()) as ServersResponse;
          return body.servers.find((server) => server.id === 'fs')?.discovered.map((tool) => tool.name) ?? [];
        }, POLL)
        .toContain('list_directory');
      const unknown = await qa.client.callTool({ name: 'list_directory', arguments: { path: files } });
      expect(unknown.isError).toBe(true);
      expect(reasonOf(unknown)).toBe('unknown_tool');

      // In the panel: « Tools inconnus », the server's hint, and « Déclarer » with Lecture prefilled from it.
      await harness.openPanel();
      const page = harness.page;
      const unknownSection = page.getByRole('region', { name: /^Tools inconnus/ });
      const row = unknownSection.getByRole('listitem').filter({ has: page.locator('code', { hasText: /^fs\/list_directory$/ }) });
      await row.waitFor();
      expect(await row.innerText()).toContain('Inconnu');
      expect(await row.innerText()).toContain('indiqué lecture seule par le serveur');
      expect(await row.getByRole('checkbox').count()).toBe(0);
      await row.getByRole('button', { name: 'Déclarer fs/list_directory' }).click();
      const form = page.getByRole('group', { name: 'Déclarer fs/list_directory' });
      expect(await form.getByRole('radio', { name: /^Lecture/ }).isChecked()).toBe(true);
      await form.getByLabel('Libellé en français (facultatif)').fill('Lister un dossier');
      await form.getByRole('button', { name: 'Déclarer', exact: true }).click();
      await expect.poll(() => harness.status(), POLL).toMatch(/^fs\/list_directory déclaré en lecture/);

      // Decided by its new class: a read tool, so QA (on the default) may call it through the proxy now.
      await expect
        .poll(async () => {
          const result = await qa.client.callTool({ name: 'list_directory', arguments: { path: files } });
          return result.isError === true ? reasonOf(result) : textOf(result);
        }, POLL)
        .toContain('hello.txt');
      const declared = JSON.parse(
        await readFile(path.join(service.projectsRoot, 'demo', '.ideai', 'mcp-servers.json'), 'utf8'),
      ) as typeof SERVERS;
      expect(declared.servers.fs.tools).toMatchObject({ list_directory: { access: 'read', label: 'Lister un dossier' } });
      // DevFrontend's override lists tools by name: a tool declared since is not in it.
      const devCall = await dev.client.callTool({ name: 'list_directory', arguments: { path: files } });
      expect(reasonOf(devCall)).toBe('not_in_allowlist');
    });
  },
);
