/**
 * Concurrent changes and invalid files: a draft is re-applied when the
 * outside change does not touch it, both sides are shown when it does, a file that breaks says
 * "policy invalide", and an invalid file claims no state and offers a confirmed repair. The save
 * paths are tested with the live events cut off: a change can always land between two events.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';
import { READ_TOOLS } from '../support/tools.js';

const harness = useBrowserHarness();

const DEV_FRONTEND = { agentId: 'DevFrontend', policy: { allowedTools: [...READ_TOOLS, 'idea_ticket_update_carnet'] } };

describe.skipIf(!browserTestsEnabled)('panel conflicts and repair (chromium, real service)', { timeout: 30_000 }, () => {
  const { openPanel, target, toolBox } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  const memory = () => toolBox('Écrire la mémoire projet', 'idea_memory_write');
  const puts = (): { ifMatch: string }[] => {
    const seen: { ifMatch: string }[] = [];
    page().on('request', (request) => {
      if (request.method() === 'PUT') seen.push({ ifMatch: request.headers()['if-match'] ?? '' });
    });
    return seen;
  };

  it('re-applies the draft on the new revision when the file changed on disk elsewhere (an override added for Git)', async () => {
    await openPanel(undefined, { live: false });
    await target('QA').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    await memory().check();
    const before = (await service().permissions('demo')).etag;
    await harness.editPolicyFile({
      version: 1,
      agents: [DEV_FRONTEND, { agentId: 'Git', policy: { allowedTools: ['idea_ticket_list'] } }],
    });
    const afterEdit = (await service().permissions('demo')).etag;
    const sent = puts();
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toContain('réappliquées sur la version actuelle');
    // The first PUT carried the revision the page had loaded; the second, the one it re-read.
    expect(sent.map((put) => put.ifMatch)).toEqual([before, afterEdit]);
    expect(await service().decide('demo', 'QA', 'idea_memory_write')).toMatchObject({ allow: true, source: 'agent-override' });
    expect(await service().decide('demo', 'Git', 'idea_ticket_list')).toMatchObject({ allow: true, source: 'agent-override' });
    expect((await service().decide('demo', 'Git', 'idea_memory_read')).allow).toBe(false); // Git's outside override kept
    expect(await text(target('Git'))).toContain('Override');
  });

  it('shows both sides when the edited override changed elsewhere, keeps the draft, and saves "mine" on request', async () => {
    await openPanel(undefined, { live: false });
    await target('DevFrontend').click();
    await memory().check();
    const other = await service().admin('PUT', '/projects/demo/mcp-tool-permissions/agents/DevFrontend', { allowedTools: READ_TOOLS });
    expect(other.status).toBe(200);
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    const conflict = page().locator('#conflict');
    await expect.poll(() => conflict.count(), POLL).toBe(1);
    expect(await text(conflict)).toContain('« DevFrontend » a été modifié ailleurs');
    expect(await text(conflict.locator('.conflict-side').nth(0))).toContain('+ idea_memory_write');
    expect(await text(conflict.locator('.conflict-side').nth(1))).toContain('\u2212 idea_ticket_update_carnet');
    expect(await text(conflict)).not.toContain("Quelqu'un d'autre");
    expect(await memory().isChecked()).toBe(true); // the draft is intact
    expect(await harness.focusedId()).toBe('conflict-keep');
    expect((await service().decide('demo', 'DevFrontend', 'idea_memory_write')).allow).toBe(false); // nothing written yet

    await page().getByRole('button', { name: 'Garder mes modifications et enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect((await service().decide('demo', 'DevFrontend', 'idea_memory_write')).allow).toBe(true);
    expect((await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow).toBe(true);
  });

  it('takes the other version on request, and shows a conflict found by Actualiser without saving', async () => {
    await openPanel(undefined, { live: false });
    await target('DevFrontend').click();
    await memory().check();
    await harness.editPolicyFile({ version: 1, agents: [] }); // DevFrontend's override deleted in an editor
    await page().getByRole('button', { name: 'Actualiser' }).click();
    const conflict = page().locator('#conflict');
    await expect.poll(() => text(conflict), POLL).toContain('override supprimé');
    expect(await memory().isChecked()).toBe(true);
    await page().getByRole('button', { name: 'Prendre l\u2019autre version' }).click();
    await expect.poll(() => text(page().locator('.mode')), POLL).toContain('Hérite du défaut projet');
    expect(await page().locator('.dirty-note').count()).toBe(0);
    expect((await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow).toBe(false);
  });

  it('says "policy invalide" when the file broke while the page was open, and keeps the draft', async () => {
    await openPanel(undefined, { live: false });
    await target('QA').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    await memory().check();
    await harness.editPolicyFile('{ "version": 1, "agents": [');
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    const error = page().locator('#save-error');
    await expect.poll(() => error.count(), POLL).toBe(1);
    expect(await text(error)).toContain('policy invalide');
    expect(await text(error)).not.toMatch(/Quelqu.un d.autre|modifiée ailleurs/);
    expect(await text(page().locator('#repair-draft'))).toContain('« QA » sont conservées');
    expect((await service().decide('demo', 'QA', 'idea_memory_write')).allow).toBe(false);
  });

  it('claims no state while the file is invalid, and resets it to read-only after a confirmation that says what is written', async () => {
    await harness.editPolicyFile('{ "version": 2 }');
    await openPanel();
    const layout = page().locator('.layout');
    const shown = await text(layout);
    for (const claim of ['Hérité', 'Override', 'Lecture seule', 'lecture autorisé', 'Hérite du défaut projet'])
      expect(shown).not.toContain(claim);
    expect(shown).toContain('DevFrontend');
    expect(await text(page().getByRole('alert'))).toContain('version 2 non prise en charge (attendue : 1)');
    // "Restaurer" is offered exactly when the service keeps the last valid document for this file.
    const view = (await service().permissions('demo')).view as { lastValid?: unknown };
    expect(await page().locator('#repair-last-valid').count()).toBe(view.lastValid === undefined || view.lastValid === null ? 0 : 1);

    const sent = puts();
    await page()
      .getByRole('button', { name: /^Réinitialiser en lecture seule/ })
      .click();
    const confirmation = page().getByRole('alertdialog');
    expect(await text(confirmation)).toContain('Aucun override : tous les agents passent en lecture seule');
    await confirmation.getByText('Document qui sera écrit').click();
    expect(JSON.parse(await text(page().locator('#repair-document')))).toEqual({ version: 1, agents: [] });
    expect(sent).toHaveLength(0); // nothing written before the confirmation
    await page().getByRole('button', { name: 'Écrire ce document' }).click();
    await expect.poll(() => harness.status(), POLL).toContain('Policy réparée');
    expect(sent[0]?.ifMatch).toMatch(/^"[^"]+"$/);
    const file = path.join(service().projectsRoot, 'demo', '.ideai', 'mcp-tool-permissions.json');
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ version: 1 });
    expect((await service().permissions('demo')).view.status).toBe('ok');
    expect((await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow).toBe(false);
    expect((await service().decide('demo', 'DevFrontend', 'idea_ticket_read')).allow).toBe(true);
    expect(await text(target('DevFrontend'))).toContain('Hérité');
  });

  it('offers to restore the last valid document only when the view carries it, and writes exactly that', async () => {
    await harness.editPolicyFile('{ "version": 1, "agents": [');
    const lastValid = { revision: 'abc123', document: { version: 1, agents: [DEV_FRONTEND] } };
    await page().route('**/projects/demo/mcp-tool-permissions', async (route) => {
      if (route.request().method() !== 'GET') return route.continue();
      const response = await route.fetch();
      const body = (await response.json()) as Record<string, unknown>;
      await route.fulfill({ response, json: body.status === 'invalid' ? { ...body, lastValid } : body });
    });
    await openPanel();
    await page()
      .getByRole('button', { name: /^Restaurer le dernier document valide/ })
      .click();
    const confirmation = page().getByRole('alertdialog');
    expect(await text(confirmation)).toContain('révision abc123');
    expect(await text(confirmation)).toContain('Override de DevFrontend : 9 lecture autorisés · 1 écriture autorisé.');
    await page().getByRole('button', { name: 'Écrire ce document' }).click();
    await expect.poll(() => harness.status(), POLL).toContain('dernier document valide restauré');
    expect((await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow).toBe(true);
  });
});
