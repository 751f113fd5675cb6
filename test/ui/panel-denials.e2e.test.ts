/**
 * "Refus récents" in chromium against the real service: the denials /decide made show up in the
 * agent's editor, grouped by tool with their count and French reason, follow new denials live,
 * and turn into a change of the draft that only Enregistrer writes. The service keeps its ring of
 * decisions across the tests of this file: each test uses its own agent.
 */
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';
import type { RunningService } from './demo-service.js';

const harness = useBrowserHarness();

/** The periodic read (5 s) plus room for a loaded machine. */
const LIVE = { timeout: 12_000, interval: 100 };

describe.skipIf(!browserTestsEnabled)('Refus récents (chromium, real service)', { timeout: 40_000 }, () => {
  const { openPanel, target, toolBox, askToggle } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;
  const section = (): Locator => page().getByRole('region', { name: 'Refus récents' });
  const denial = (tool: string): Locator =>
    section()
      .getByRole('listitem')
      .filter({ has: page().locator('code', { hasText: tool }) });

  it('lists 4 denials of QA on idea_memory_write, and « Créer un override et autoriser » then Enregistrer makes /decide allow', async () => {
    for (let call = 0; call < 4; call += 1) {
      expect(await service().decide('demo', 'QA', 'idea_memory_write')).toMatchObject({ allow: false, reason: 'not_in_allowlist' });
    }
    await openPanel();
    await target('QA').click();
    await expect.poll(() => denial('idea_memory_write').count(), POLL).toBe(1);
    const memory = denial('idea_memory_write');
    expect(await text(memory)).toContain('Écrire la mémoire projet');
    expect(await text(memory.locator('.denial-count'))).toBe('4 refus');
    expect(await text(memory.locator('.denial-meta'))).toMatch(/dernier (à l’instant|il y a \d+ s)/);
    expect(await text(memory.locator('.denial-reason'))).toBe('pas dans la liste autorisée');

    // QA inherits: the one button creates the override and ticks the tool, nothing is written yet.
    const posts: string[] = [];
    page().on('request', (sent) => {
      // The draft's preview posts the proposed document and writes nothing.
      if (sent.method() !== 'GET' && !sent.url().endsWith('/mcp-tool-permissions/preview')) posts.push(`${sent.method()} ${sent.url()}`);
    });
    await memory.getByRole('button', { name: /^Créer un override et autoriser/ }).click();
    expect(await text(page().locator('.mode'))).toContain('Override personnalisé');
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true);
    expect(await text(page().locator('.actions'))).toContain('Modifications non enregistrées');
    expect(await text(denial('idea_memory_write'))).toContain('Autorisé dans la policy affichée.');
    expect(posts).toEqual([]);
    expect((await service().decide('demo', 'QA', 'idea_memory_write')).allow).toBe(false);

    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(await service().decide('demo', 'QA', 'idea_memory_write')).toMatchObject({ allow: true, source: 'agent-override' });
  });

  it('follows new denials live, keeps refusals a grant cannot fix without a button, and says when there are none', async () => {
    await openPanel();
    await target('Git').click();
    await expect.poll(() => text(section()), POLL).toContain('Aucun refus récent.');

    // While the page is open: a denial a grant fixes, and one it cannot (a tool outside the catalog).
    await service().decide('demo', 'Git', 'idea_ticket_create');
    await service().decide('demo', 'Git', 'idea_not_a_tool');
    await expect.poll(() => denial('idea_not_a_tool').count(), LIVE).toBe(1);
    expect(await text(denial('idea_not_a_tool'))).toContain('tool inconnu du catalogue');
    expect(await denial('idea_not_a_tool').getByRole('button').count()).toBe(0);
    expect(await text(section().getByRole('listitem').first())).toContain('idea_not_a_tool'); // newest first

    const create = denial('idea_ticket_create');
    expect(await text(create.locator('.denial-count'))).toBe('1 refus');
    await service().decide('demo', 'Git', 'idea_ticket_create');
    await expect.poll(() => text(create.locator('.denial-count')), LIVE).toBe('2 refus');

    // "Sur demande" changes the draft as the row's toggle would.
    await create.getByRole('button', { name: /^Créer un override, sur demande/ }).click();
    expect(await askToggle('Créer un ticket', 'idea_ticket_create').getAttribute('aria-pressed')).toBe('true');
    expect(await text(page().locator('#state-idea_ticket_create'))).toBe('Sur demande');
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => harness.status(), POLL).toBe('Permissions enregistrées');
    expect(await service().decide('demo', 'Git', 'idea_ticket_create')).toMatchObject({ allow: false, reason: 'approval_required' });
    // The ask is a denial too: it joins the group, with its reason.
    await expect.poll(() => text(create), LIVE).toContain('en attente d\u2019approbation');
  });

  it('shows the refusals of agents without an override on the project default, and offers no button without the admin token', async () => {
    await service().decide('demo', 'Main', 'idea_workstate_set');
    await openPanel();
    await expect.poll(() => denial('idea_workstate_set').count(), POLL).toBe(1);
    expect(await text(denial('idea_workstate_set'))).toContain('Main');
    expect(await denial('idea_workstate_set').getByRole('button', { name: 'Autoriser : idea_workstate_set' }).count()).toBe(1);
    // DevFrontend has an override: its refusals are its own, not the default's.
    await service().decide('demo', 'DevFrontend', 'idea_run_in_background');
    await page().getByRole('button', { name: 'Actualiser' }).click();
    await expect.poll(() => text(section()), POLL).toContain('idea_workstate_set');
    expect(await denial('idea_run_in_background').count()).toBe(0);

    await page().getByRole('button', { name: 'Oublier le jeton' }).click();
    await expect.poll(() => page().locator('#token-open').count(), POLL).toBe(1);
    expect(await text(denial('idea_workstate_set'))).toContain('pas dans la liste autorisée');
    expect(await section().getByRole('button').count()).toBe(0);
  });
});
