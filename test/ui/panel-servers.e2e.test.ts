/**
 * Other MCP servers in the panel (docs/ui.md#other-mcp-servers), in chromium against the real
 * service: a group per declared server after IdeA's with the same rows, « Tools inconnus » for what
 * a server listed undeclared (badge Inconnu, no checkbox, its hint in words), and « Déclarer », which
 * writes `.ideai/mcp-servers.json` with the class the user chose, re-applied on a newer file when the
 * tool is still undeclared there, and never over a declaration made elsewhere.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import type { CatalogResponse } from '../../schemas/index.js';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import { startService, type RunningService } from './demo-service.js';

const harness = useBrowserHarness();

/** The periodic read of the servers (5 s) plus room for a loaded machine. */
const LIVE = { timeout: 12_000, interval: 100 };

interface ServersDocument {
  version: number;
  servers: Record<string, { label?: string; tools: Record<string, unknown> }>;
}

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

const REPORTED = {
  fs: [
    { name: 'read_text_file' },
    { name: 'list_directory', title: 'List directory', annotations: { readOnlyHint: true } },
    { name: 'move_file', description: 'Move or rename files', annotations: { readOnlyHint: false, destructiveHint: true } },
    { name: 'zip_folder', description: 'Zip a folder' },
  ],
  web: [{ name: 'navigate', annotations: { readOnlyHint: false } }],
};

describe.skipIf(!browserTestsEnabled)('other MCP servers (chromium, real service)', { timeout: 60_000 }, () => {
  const { openPanel, target, toolBox } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  const serversFile = (): string => path.join(service().projectsRoot, 'demo', '.ideai', 'mcp-servers.json');
  const byId = (id: string): Locator => page().locator(`[id="${id}"]`);
  const discovered = (): Locator => page().getByRole('region', { name: /^Tools inconnus/ });
  const unknownRow = (name: string): Locator =>
    discovered()
      .getByRole('listitem')
      .filter({ has: page().locator('code', { hasText: name }) });
  const declaredTools = async (): Promise<Record<string, Record<string, { access: string; label?: string }>>> => {
    const document = JSON.parse(await readFile(serversFile(), 'utf8')) as {
      servers: Record<string, { tools: Record<string, { access: string; label?: string }> }>;
    };
    return Object.fromEntries(Object.entries(document.servers).map(([id, server]) => [id, server.tools]));
  };
  const catalog = async (): Promise<CatalogResponse> =>
    (await (await service().admin('GET', '/projects/demo/catalog')).json()) as CatalogResponse;

  /** Writes the servers file as an editor would and waits until the service has read it. */
  async function writeServers(document: unknown): Promise<void> {
    const before = (await catalog()).version;
    await writeFile(serversFile(), JSON.stringify(document, null, 2));
    await expect.poll(async () => (await catalog()).version, POLL).not.toBe(before);
  }

  let reported = false;
  beforeEach(async () => {
    if (!browserTestsEnabled) return;
    const text = JSON.stringify(SERVERS, null, 2);
    if ((await readFile(serversFile(), 'utf8').catch(() => '')) !== text) await writeServers(SERVERS);
    // What the proxies reported stays in the service's memory across the tests (10 reports a minute a server).
    if (!reported) {
      for (const [server, tools] of Object.entries(REPORTED)) {
        expect((await service().admin('POST', `/projects/demo/servers/${server}/discovered`, { tools })).status).toBe(202);
      }
      reported = true;
    }
  });

  it('shows a group per declared server after IdeA’s, with the same rows, and edits it like IdeA’s', async () => {
    await openPanel();
    await target('DevFrontend').click();
    const section = page().getByRole('region', { name: /^Autres serveurs MCP/ });
    await section.waitFor();
    // After IdeA's two sections, in the editor's order.
    const order = await page().locator('.access-section > h4').allInnerTexts();
    expect(order.slice(0, 3)).toEqual([
      expect.stringMatching(/^Lecture, autorisés par défaut/),
      expect.stringMatching(/^Écriture et actions/),
      'Autres serveurs MCP (4)',
    ]);
    const group = byId('group-toggle-server:fs');
    expect(await group.getAttribute('aria-label')).toBe('Fichiers, 0 sur 4 autorisé');
    expect(await text(section)).toContain('fs/read_text_file');
    const write = toolBox('Écrire un fichier', 'fs/write_file');
    expect(await write.isChecked()).toBe(false);
    expect(await text(section.getByRole('listitem').filter({ hasText: 'fs/write_file' }))).toContain('Écriture');
    expect(await text(section.getByRole('listitem').filter({ hasText: 'fs/read_text_file' }))).toContain('Lecture');

    // Ticked and saved like an IdeA tool: the policy names it fs/write_file, and /decide follows.
    await write.check();
    expect(await group.getAttribute('aria-label')).toBe('Fichiers, 1 sur 4 autorisé');
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(await service().decide('demo', 'DevFrontend', 'fs/write_file')).toMatchObject({ allow: true });
    // A save of IdeA's tools alone keeps the server's tool (the panel knows the project's catalog).
    await toolBox('Créer un skill', 'idea_create_skill').check();
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(await service().decide('demo', 'DevFrontend', 'fs/write_file')).toMatchObject({ allow: true });
  });

  it('lists the undeclared tools with badge Inconnu, no checkbox and the server’s hint, without a way to declare for the decide token', async () => {
    await openPanel();
    await discovered().waitFor();
    expect(await text(discovered().locator('h4'))).toBe('Tools inconnus (4)');
    const rows = {
      'fs/list_directory': 'indiqué lecture seule par le serveur',
      'fs/move_file': 'indiqué destructif par le serveur',
      'fs/zip_folder': 'aucune indication du serveur',
      'web/navigate': 'indiqué écriture par le serveur',
    };
    for (const [name, hint] of Object.entries(rows)) {
      const row = unknownRow(name);
      expect(await text(row)).toContain('Inconnu');
      expect(await text(row)).toContain(hint);
      expect(await row.getByRole('checkbox').count()).toBe(0);
      expect(await row.getByRole('button', { name: `Déclarer ${name}` }).count()).toBe(1);
    }
    // A tool the file declares is never listed as unknown.
    expect(await unknownRow('fs/read_text_file').count()).toBe(0);
    expect(await text(discovered())).toContain('Fichiers (fs) · 3 inconnus');

    const reader = await startService({ decideToken: 'ui-test-decide-token' });
    try {
      await page().goto(`${reader.baseUrl}/ui/`);
      await page().getByLabel('Jeton', { exact: true }).fill('ui-test-decide-token');
      await page().getByRole('button', { name: 'Utiliser ce jeton' }).click();
      await page().locator('#editor-title').waitFor();
      await writeFile(path.join(reader.projectsRoot, 'demo', '.ideai', 'mcp-servers.json'), JSON.stringify(SERVERS));
      await reader.admin('POST', '/projects/demo/servers/fs/discovered', { tools: REPORTED.fs });
      await discovered().waitFor(LIVE);
      expect(await text(discovered())).toContain('Déclarer un tool demande le jeton administrateur.');
      expect(await discovered().getByRole('button').count()).toBe(0);
    } finally {
      await reader.close();
    }
  });

  it('declares a tool with the class prefilled from the hint, and /decide follows the class at once', async () => {
    await openPanel();
    await unknownRow('fs/list_directory').waitFor();
    expect((await service().decide('demo', 'QA', 'fs/list_directory')).reason).toBe('unknown_tool');
    const declare = page().getByRole('button', { name: 'Déclarer fs/list_directory' });
    await declare.click();
    expect(await declare.getAttribute('aria-expanded')).toBe('true');
    const form = page().getByRole('group', { name: 'Déclarer fs/list_directory' });
    expect(await form.getByRole('radio', { name: /^Lecture/ }).isChecked()).toBe(true);
    expect(await text(form)).toContain('Prérempli d’après l’indication du serveur (indiqué lecture seule par le serveur)');
    expect(await harness.focusedId()).toBe('declare-read');
    await form.getByLabel('Libellé en français (facultatif)').fill('Lister un dossier');
    await form.getByRole('button', { name: 'Déclarer', exact: true }).click();

    await expect
      .poll(() => harness.status(), POLL)
      .toBe('fs/list_directory déclaré en lecture : autorisé par défaut aux agents en lecture seule.');
    expect((await declaredTools()).fs?.list_directory).toEqual({ access: 'read', label: 'Lister un dossier' });
    // In Fichiers' group now, out of « Tools inconnus », the focus on the group.
    await expect.poll(() => unknownRow('fs/list_directory').count(), POLL).toBe(0);
    expect(await text(page().getByRole('region', { name: /^Autres serveurs MCP/ }))).toContain('Lister un dossier');
    expect(await harness.focusedId()).toBe('group-toggle-server:fs');
    expect(await service().decide('demo', 'QA', 'fs/list_directory')).toMatchObject({ allow: true });
  });

  it('never declares a tool without a hint until the user chooses, and Escape closes the form', async () => {
    await openPanel();
    await page().getByRole('button', { name: 'Déclarer fs/zip_folder' }).click();
    const form = page().getByRole('group', { name: 'Déclarer fs/zip_folder' });
    expect(await form.getByRole('radio', { name: /^Lecture/ }).isChecked()).toBe(false);
    expect(await form.getByRole('radio', { name: /^Écriture/ }).isChecked()).toBe(false);
    const confirm = form.getByRole('button', { name: 'Déclarer', exact: true });
    expect(await confirm.getAttribute('aria-disabled')).toBe('true');
    const before = await readFile(serversFile(), 'utf8');
    // aria-disabled, not disabled (it keeps the focus): a click reaches it and must write nothing.
    await confirm.click({ force: true });
    await page().waitForTimeout(300);
    expect(await readFile(serversFile(), 'utf8')).toBe(before);

    await page().keyboard.press('Escape');
    expect(await form.count()).toBe(0);
    expect(await harness.focusedId()).toBe('declare-fs/zip_folder');

    await page().getByRole('button', { name: 'Déclarer fs/zip_folder' }).click();
    await form.getByRole('radio', { name: /^Écriture/ }).check();
    await form.getByRole('button', { name: 'Déclarer', exact: true }).click();
    await expect.poll(async () => (await declaredTools()).fs?.zip_folder, POLL).toEqual({ access: 'write' });
    expect(await service().decide('demo', 'QA', 'fs/zip_folder')).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
  });

  it('adds a server only discovered, with the name the user gives it', async () => {
    await openPanel();
    await page().getByRole('button', { name: 'Déclarer web/navigate' }).click();
    const form = page().getByRole('group', { name: 'Déclarer web/navigate' });
    expect(await form.getByRole('radio', { name: /^Écriture/ }).isChecked()).toBe(true);
    await form.getByLabel(/^Nom du serveur web/).fill('Navigateur');
    await form.getByRole('button', { name: 'Déclarer', exact: true }).click();
    await expect.poll(async () => (await declaredTools()).web?.navigate, POLL).toEqual({ access: 'write' });
    const document = JSON.parse(await readFile(serversFile(), 'utf8')) as { servers: Record<string, { label?: string }> };
    expect(document.servers.web?.label).toBe('Navigateur');
    await expect.poll(() => byId('group-toggle-server:web').count(), LIVE).toBe(1);
    expect(await byId('group-toggle-server:web').getAttribute('aria-label')).toMatch(/^Navigateur, /);
  });

  it('re-applies a declaration on a file changed elsewhere, and writes nothing over a declaration made elsewhere', async () => {
    // Without the live events the page keeps the catalog's version it read: the writes meet 412 first.
    await openPanel(undefined, { live: false });
    await page().getByRole('button', { name: 'Déclarer fs/move_file' }).click();
    // Someone declares another tool meanwhile: the page's version is stale, the tool still undeclared.
    const other: ServersDocument = structuredClone(SERVERS);
    const otherFs = other.servers.fs;
    if (otherFs === undefined) throw new Error('fs is declared');
    otherFs.tools.zip_folder = { access: 'read' };
    await writeServers(other);
    const form = page().getByRole('group', { name: 'Déclarer fs/move_file' });
    await form.getByRole('button', { name: 'Déclarer', exact: true }).click();
    await expect.poll(() => harness.status(), POLL).toContain('(Enregistré sur la version actuelle du fichier.)');
    const tools = await declaredTools();
    expect(tools.fs?.move_file).toEqual({ access: 'write' });
    expect(tools.fs?.zip_folder).toEqual({ access: 'read' });

    // Someone declares the very tool the form is open for, in another class: nothing is written over it.
    await page().reload();
    await page().locator('#editor-title').waitFor();
    await page().getByRole('button', { name: 'Déclarer fs/list_directory' }).click();
    const again = structuredClone(other);
    const againFs = again.servers.fs;
    if (againFs === undefined) throw new Error('fs is declared');
    againFs.tools.move_file = { access: 'write' };
    againFs.tools.list_directory = { access: 'write', label: 'Choisi ailleurs' };
    await writeServers(again);
    await page().getByRole('group', { name: 'Déclarer fs/list_directory' }).getByRole('button', { name: 'Déclarer', exact: true }).click();
    await expect
      .poll(() => harness.status(), POLL)
      .toBe('fs/list_directory a été déclaré ailleurs entre-temps, en écriture : rien n’a été écrit.');
    expect((await declaredTools()).fs?.list_directory).toEqual({ access: 'write', label: 'Choisi ailleurs' });
  });
});
