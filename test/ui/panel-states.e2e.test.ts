/**
 * The states of the permissions panel in a real browser against the real service: the inline
 * confirmation on the project default, the read-only view, unknown tools, the load error, the
 * project selector and empty state, and the token form when GETs need a token.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startService, type RunningService } from './demo-service.js';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';

const harness = useBrowserHarness();

describe.skipIf(!browserTestsEnabled)('permissions panel states (chromium, real service)', { timeout: 20_000 }, () => {
  const { openPanel, target, toolBox } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;

  it('asks for an inline confirmation before a write tool is granted on the project default', async () => {
    await openPanel();
    await target('Défaut projet').click();
    expect(
      await page()
        .getByRole('button', { name: /^Lecture projet, 5 sur 5/ })
        .getAttribute('aria-expanded'),
    ).toBe('true');
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').click();
    const confirm = page().locator('.inline-confirm');
    expect(await text(confirm)).toContain('Ce tool sera autorisé pour tous les agents sans override. Confirmer cette modification ?');
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(false);
    await confirm.getByRole('button', { name: 'Confirmer' }).click();
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true);
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => text(page().getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(await service().decide('demo', 'Main', 'idea_memory_write')).toMatchObject({ allow: true, source: 'project-default' });
    // DevFrontend has an override without it.
    expect((await service().decide('demo', 'DevFrontend', 'idea_memory_write')).allow).toBe(false);
  });

  it('has 32 px rows, 40 px main actions, visible badges text, and stacks the columns when narrow', async () => {
    await openPanel();
    await target('DevFrontend').click();
    await toolBox('Lancer un agent', 'idea_launch_agent').check();
    // The click target of a row is its whole label; the "Sur demande" toggles are as tall.
    const heights = async (selector: string): Promise<number[]> =>
      page()
        .locator(selector)
        .evaluateAll((rows) => rows.map((row) => row.getBoundingClientRect().height));
    const rows = await heights('.group-body:not([hidden]) label.tool-check-row');
    expect(rows.length).toBeGreaterThanOrEqual(16);
    expect(Math.min(...rows)).toBeGreaterThanOrEqual(32);
    const toggles = await heights('.group-body:not([hidden]) .ask-toggle');
    expect(toggles.length).toBeGreaterThanOrEqual(10);
    expect(Math.min(...toggles)).toBeGreaterThanOrEqual(32);
    expect(Math.min(...(await heights('label.quick-check-row')))).toBeGreaterThanOrEqual(32);
    for (const name of ['Enregistrer', 'Annuler', 'Actualiser', 'Réinitialiser l\u2019override']) {
      const box = await page().getByRole('button', { name, exact: true }).boundingBox();
      expect(box?.height, name).toBeGreaterThanOrEqual(40);
    }
    // Badges carry text, never only a colour.
    const badges = await page().locator('.badge').allInnerTexts();
    expect(badges.every((badge) => badge.trim() !== '')).toBe(true);
    expect(badges).toEqual(expect.arrayContaining(['Lecture', 'Écriture', 'Hérité', 'Override']));

    const side = async (): Promise<{ targets: DOMRect; editor: DOMRect }> => ({
      targets: await page()
        .locator('nav.targets')
        .evaluate((element) => element.getBoundingClientRect().toJSON() as DOMRect),
      editor: await page()
        .locator('section.editor')
        .evaluate((element) => element.getBoundingClientRect().toJSON() as DOMRect),
    });
    const wide = await side();
    expect(wide.editor.left).toBeGreaterThanOrEqual(wide.targets.right); // two columns
    await page().setViewportSize({ width: 420, height: 900 });
    const narrow = await side();
    expect(narrow.editor.top).toBeGreaterThanOrEqual(narrow.targets.bottom); // stacked, target list first
    expect(await page().evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420); // no sideways scroll
    expect(Math.min(...(await heights('.group-body:not([hidden]) label.tool-check-row')))).toBeGreaterThanOrEqual(32);
    expect(Math.min(...(await heights('.group-body:not([hidden]) .ask-toggle')))).toBeGreaterThanOrEqual(32);
  });

  it('is read-only without a token: no checkbox, no save', async () => {
    await openPanel(null);
    await target('DevFrontend').click();
    expect(await text(page().locator('#summary'))).toBe('9 lecture autorisés · 2 écriture autorisés');
    expect(await page().getByRole('checkbox', { disabled: false }).count()).toBe(0);
    expect(await page().getByRole('button', { name: 'Enregistrer' }).count()).toBe(0);
    expect(await page().getByRole('button', { name: 'Réinitialiser l\u2019override' }).count()).toBe(0);
    expect(await text(page().locator('#state-idea_ticket_update_carnet'))).toBe('Ajouté');
  });

  it('shows unknown tools in their own group and never saves them back', async () => {
    // A hand edit of the file (the API refuses unknown names): the watcher picks it up.
    const document = { version: 1, agents: [{ agentId: 'QA', policy: { allowedTools: ['idea_list_agents', 'idea_retired_tool'] } }] };
    await writeFile(path.join(service().projectsRoot, 'demo', '.ideai', 'mcp-tool-permissions.json'), JSON.stringify(document));
    await expect
      .poll(async () => (await service().permissions('demo')).view.agents.find((agent) => agent.agentId === 'QA')?.unknownTools, POLL)
      .toEqual(['idea_retired_tool']);
    await openPanel();
    await target('QA').click();
    const unknown = page().getByRole('region', { name: 'Tools inconnus' });
    expect(await text(unknown)).toContain('idea_retired_tool');
    expect(await text(unknown)).toContain('Inconnu');
    expect(await text(unknown)).toContain('ne seront pas ré-enregistrés');
    const bodies: string[] = [];
    page().on('request', (request) => {
      if (request.method() === 'PUT') bodies.push(request.postData() ?? '');
    });
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').check();
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => text(page().getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(JSON.parse(bodies[0] ?? '{}')).toEqual({ allowedTools: ['idea_list_agents', 'idea_memory_write'], conditions: {} });
    expect(await page().getByRole('region', { name: 'Tools inconnus' }).count()).toBe(0);
  });

  it('shows an invalid policy file in French (line, column, raw text behind "Détails"), and recovers when the file is fixed', async () => {
    await harness.editPolicyFile('{\n  "version": 1,\n  "agents": [\n');
    await openPanel();
    const banner = page().getByRole('alert');
    expect(await text(banner)).toContain('La policy de ce projet est invalide');
    expect(await text(banner)).toMatch(/JSON mal formé \(ligne \d+, colonne \d+\)/);
    expect(await text(banner)).not.toContain('Unexpected'); // the engine's English stays folded
    await banner.getByText('Détails').click();
    expect(await text(banner)).toMatch(/mcp-tool-permissions\.json:\d+:\d+ — invalid JSON/);
    expect(await page().getByRole('checkbox', { disabled: false }).count()).toBe(0); // partial writes would be refused (409)
    await harness.editPolicyFile({ version: 1 });
    await page().getByRole('button', { name: 'Actualiser' }).click();
    await expect.poll(() => page().getByRole('alert').count(), POLL).toBe(0);
    expect(await page().getByRole('checkbox', { disabled: false }).count()).toBeGreaterThan(0);
  });

  it('shows a load error with "Réessayer", a project selector, and the empty state of a project without agents', async () => {
    // A project folder added while the service runs appears without a restart.
    await mkdir(path.join(service().projectsRoot, 'empty'), { recursive: true });
    await expect
      .poll(async () => (await (await service().admin('GET', '/projects')).json()) as unknown, POLL)
      .toMatchObject({
        projects: [{ id: 'demo' }, { id: 'empty' }, { id: 'sandbox' }],
      });
    let failures = 1;
    // Without live events: their first burst would reload by itself, before "Réessayer" is tested.
    await page().route('**/events', (route) => route.abort());
    await page().route('**/catalog', async (route) => {
      if (failures-- > 0) await route.abort('connectionrefused');
      else await route.continue();
    });
    await page().goto(`${service().baseUrl}/ui/`);
    await page().getByRole('button', { name: 'Continuer sans jeton' }).click();
    const alert = page().getByRole('alert');
    await expect.poll(() => text(alert), POLL).toContain('Impossible de charger les permissions');
    await page().getByRole('button', { name: 'Réessayer' }).click();
    await target('Défaut projet').waitFor();

    const selector = page().getByLabel('Projet', { exact: true });
    expect(await selector.locator('option').allInnerTexts()).toEqual(['demo', 'empty', 'sandbox']);
    await selector.selectOption('empty');
    await expect.poll(() => text(page().getByRole('navigation', { name: 'Cibles' })), POLL).toContain('Aucun agent dans ce projet.');
  });
});

describe.skipIf(!browserTestsEnabled)('permissions panel with PDP_DECIDE_TOKEN', { timeout: 20_000 }, () => {
  const { target } = harness;
  const page = (): Page => harness.page;

  it('asks for a token when a GET answers 401, then loads with it', async () => {
    const guarded = await startService({ decideToken: 'ui-test-decide-token' });
    try {
      await page().goto(`${guarded.baseUrl}/ui/`);
      const form = page().locator('form.token-form');
      await expect.poll(() => text(form), POLL).toContain('Un jeton est nécessaire pour lire les permissions');
      await page().getByLabel('Jeton', { exact: true }).fill('ui-test-decide-token');
      await page().getByRole('button', { name: 'Utiliser ce jeton' }).click();
      await target('DevFrontend').waitFor();
      expect(await text(target('DevFrontend'))).toContain('Override');
    } finally {
      await guarded.close();
    }
  });
});
