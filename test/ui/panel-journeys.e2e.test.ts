/**
 * The permissions panel in a real browser against the real service: the two main journeys (grant
 * and withdraw a write tool, checked with the next /decide), the dirty-draft protection and
 * keyboard-only use.
 */
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, type RunningService } from './demo-service.js';
import { POLL, browserTestsEnabled, text, useBrowserHarness } from './panel-page.js';

const harness = useBrowserHarness();

/** Counts the user's clicks on the page from now on (the ticket's journeys are counted in clicks). */
async function countClicks(page: Page): Promise<() => Promise<number>> {
  await page.evaluate(() => {
    const counter = window as unknown as { clicks: number };
    counter.clicks = 0;
    // Presses, not click events: a click on a label also clicks its checkbox.
    document.addEventListener('pointerdown', () => (counter.clicks += 1), true);
  });
  return () => page.evaluate(() => (window as unknown as { clicks: number }).clicks);
}

describe.skipIf(!browserTestsEnabled)('permissions panel journeys (chromium, real service)', { timeout: 20_000 }, () => {
  const { openPanel, target, toolBox } = harness;
  const page = (): Page => harness.page;
  const service = (): RunningService => harness.service;

  it('grants a write tool to one agent in five clicks: tab, agent, Créer un override, cocher, Enregistrer; /decide allows it', async () => {
    expect((await service().decide('demo', 'QA', 'idea_ticket_update_carnet')).allow).toBe(false);
    await openPanel();
    const clicks = await countClicks(page());
    await page().getByRole('tab', { name: 'Tools MCP IdeA' }).click();
    await target('QA').click();
    await expect.poll(() => text(page().locator('.mode'))).toContain('Hérite du défaut projet');
    expect(await page().getByRole('checkbox').count()).toBe(3); // Accord rapide only, disabled: read-only until "Créer un override"
    expect(await page().getByRole('checkbox', { disabled: false }).count()).toBe(0);
    // Inherited rows: a greyed check and "Hérité" for the read tools, "Refusé" for the write tools.
    expect(await text(page().locator('#state-idea_ticket_read'))).toBe('Hérité');
    expect(await text(page().locator('#state-idea_ticket_update_carnet'))).toBe('Refusé');
    expect(await text(target('QA'))).toContain('Hérité');

    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    const carnet = toolBox("Modifier le carnet d'un ticket", 'idea_ticket_update_carnet');
    // The whole row is the checkbox's label (at least 32 px high), and it names the tool.
    const row = page().locator('label.tool-check-row', { has: carnet });
    expect((await row.boundingBox())?.height ?? 0).toBeGreaterThanOrEqual(32);
    expect(await carnet.getAttribute('aria-describedby')).toBe('state-idea_ticket_update_carnet');
    await row.locator('.tool-label').click(); // "cocher": a click anywhere on the row
    expect(await carnet.isChecked()).toBe(true);
    expect(await text(page().locator('#summary'))).toBe('9 lecture autorisés · 1 écriture autorisé');
    expect(await page().getByRole('button', { name: 'Tickets, 1 sur 7 autorisé' }).getAttribute('aria-expanded')).toBe('true');
    expect(await text(page().locator('.actions'))).toContain('Modifications non enregistrées');
    expect((await service().decide('demo', 'QA', 'idea_ticket_update_carnet')).allow).toBe(false); // not saved yet

    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => text(page().getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(await text(target('QA'))).toContain('Override');
    expect(await text(page().locator('#state-idea_ticket_update_carnet'))).toBe('Ajouté');
    expect(await clicks()).toBe(5);
    const decision = await service().decide('demo', 'QA', 'idea_ticket_update_carnet');
    expect(decision).toMatchObject({ allow: true, source: 'agent-override' });
    expect((await service().decide('demo', 'QA', 'idea_memory_write')).allow).toBe(false);
    // The feedback goes away after about 2 s.
    await expect.poll(() => text(page().getByRole('status')), POLL).toBe('');
  });

  it('withdraws a write tool symmetrically: agent, décocher, Enregistrer; /decide denies it, then offers to delete the useless override', async () => {
    expect((await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).allow).toBe(true);
    await openPanel();
    const clicks = await countClicks(page());
    await target('DevFrontend').click();
    expect(await text(page().locator('.mode'))).toContain('Override personnalisé');
    const carnet = toolBox("Modifier le carnet d'un ticket", 'idea_ticket_update_carnet');
    expect(await carnet.isChecked()).toBe(true);
    expect(await text(page().locator('#state-idea_ticket_update_carnet'))).toBe('Ajouté'); // one state text per row
    await carnet.uncheck();
    // The demo's DevFrontend may also delegate (to QA only): withdrawn too, its condition goes with it.
    await toolBox('Déléguer une demande à un agent', 'idea_ask_agent').uncheck();
    expect(await page().getByRole('button', { name: 'Tickets, 0 sur 7 autorisé' }).count()).toBe(1);
    expect(await text(page().locator('#summary'))).toBe('9 lecture autorisés · 0 écriture autorisé');
    await page().getByRole('button', { name: 'Enregistrer' }).click();
    await expect.poll(() => text(page().getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(await clicks()).toBe(4);
    expect(await service().decide('demo', 'DevFrontend', 'idea_ticket_update_carnet')).toMatchObject({
      allow: false,
      reason: 'not_in_allowlist',
    });

    // The override now equals the default: never deleted silently, offered instead.
    const cleanup = page().getByRole('button', { name: 'Supprimer l\u2019override inutile' });
    await cleanup.click();
    // Written at once, with a few seconds to take it back.
    await expect.poll(() => page().locator('.undo-notice').count(), POLL).toBe(1);
    expect(await text(page().locator('.undo-notice'))).toContain('Override de « DevFrontend » supprimé');
    await expect
      .poll(async () => (await service().permissions('demo')).view.agents.find((agent) => agent.agentId === 'DevFrontend')?.mode, POLL)
      .toBe('inherit');
    await expect.poll(() => text(target('DevFrontend'))).toContain('Hérité');
  });

  it('protects a dirty draft when the user switches target, and keeps it on "Continuer l\u2019édition"', async () => {
    await openPanel();
    await target('QA').click();
    await page().getByRole('button', { name: 'Créer un override', exact: true }).click();
    await toolBox('Écrire la mémoire projet', 'idea_memory_write').check();
    await target('Main').click();
    const dialog = page().getByRole('alertdialog');
    expect(await text(dialog)).toContain('Modifications non enregistrées pour « QA »');
    await page().getByRole('button', { name: 'Continuer l\u2019édition' }).click();
    expect(await dialog.count()).toBe(0);
    expect(await text(page().locator('#editor-title'))).toContain('QA');
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true);

    // Actualiser re-reads the policy and keeps the draft (nothing changed underneath).
    await page().getByRole('button', { name: 'Actualiser' }).click();
    await expect.poll(() => text(page().locator('.actions')), POLL).toContain('Modifications non enregistrées');
    expect(await toolBox('Écrire la mémoire projet', 'idea_memory_write').isChecked()).toBe(true);
    expect(await page().getByRole('alertdialog').count()).toBe(0);

    await target('Main').click();
    await page().getByRole('button', { name: 'Abandonner les modifications' }).click();
    expect(await text(page().locator('#editor-title'))).toContain('Main');
    expect(await page().getByRole('alertdialog').count()).toBe(0);
    expect((await service().permissions('demo')).view.agents.find((agent) => agent.agentId === 'QA')?.mode).toBe('inherit');
  });

  it('works with the keyboard only: tabs with arrows, targets, override, a tool\u2019s choice and save', async () => {
    await page().goto(`${service().baseUrl}/ui/`);
    await page().locator('#token-input').waitFor();
    const focusedId = (): Promise<string> => page().evaluate(() => document.activeElement?.id ?? '');
    const tabTo = async (id: string): Promise<void> => {
      for (let step = 0; step < 80; step += 1) {
        if ((await focusedId()) === id) return;
        await page().keyboard.press('Tab');
      }
      throw new Error(`never reached #${id} with Tab (focus on #${await focusedId()})`);
    };
    await tabTo('token-input');
    await page().keyboard.type(ADMIN_TOKEN);
    await page().keyboard.press('Enter');
    await page().locator('#target-default').waitFor();

    await tabTo('tab-mcp');
    await page().keyboard.press('ArrowLeft');
    expect(await focusedId()).toBe('tab-system');
    expect(await page().getByRole('tab', { name: 'Système' }).getAttribute('aria-selected')).toBe('true');
    expect(await page().locator('#panel-mcp').isHidden()).toBe(true);
    await page().keyboard.press('ArrowRight');
    expect(await page().getByRole('tab', { name: 'Tools MCP IdeA' }).getAttribute('aria-selected')).toBe('true');
    // Visible focus on the tab (and below: target rows, group buttons, checkboxes and their rows, toggles, actions).
    const focusVisible = (): Promise<boolean> =>
      page().evaluate(() => {
        const focused = document.activeElement as Element;
        const row = focused.closest('label');
        return [focused, row].some((element) => element !== null && getComputedStyle(element).outlineStyle !== 'none');
      });
    expect(await focusVisible()).toBe(true);
    await tabTo('requests-open');
    expect(await focusVisible()).toBe(true);

    await tabTo('target-agent-QA');
    expect(await focusVisible()).toBe(true);
    await page().keyboard.press('Enter');
    await tabTo('create-override');
    await page().keyboard.press('Enter');
    // The row's Tab stop is its checkbox: Space ticks it; the next stop is its "Sur demande" toggle.
    await tabTo('group-toggle-delegation');
    expect(await focusVisible()).toBe(true);
    await tabTo('tool-idea_ask_agent');
    expect(await focusVisible()).toBe(true);
    // The whole row is outlined, not only the small box.
    expect(
      await page()
        .locator('label.tool-check-row', { has: page().locator('#tool-idea_ask_agent') })
        .evaluate((row) => getComputedStyle(row).outlineStyle),
    ).not.toBe('none');
    await page().keyboard.press('Tab');
    expect(await focusedId()).toBe('ask-idea_ask_agent');
    expect(await focusVisible()).toBe(true);
    await page().keyboard.press('Space');
    expect(await toolBox('Déléguer une demande à un agent', 'idea_ask_agent').isChecked()).toBe(false);
    expect(await page().locator('#ask-idea_ask_agent').getAttribute('aria-pressed')).toBe('true');
    expect(await text(page().locator('#state-idea_ask_agent'))).toBe('Sur demande');
    await page().keyboard.press('Shift+Tab');
    await page().keyboard.press('Space');
    expect(await toolBox('Déléguer une demande à un agent', 'idea_ask_agent').isChecked()).toBe(true);
    expect(await page().locator('#ask-idea_ask_agent').count()).toBe(0); // checking clears the ask
    await tabTo('save');
    expect(await focusVisible()).toBe(true);
    await page().keyboard.press('Enter');
    await expect.poll(() => text(page().getByRole('status')), POLL).toBe('Permissions enregistrées');
    expect(await service().decide('demo', 'QA', 'idea_ask_agent')).toMatchObject({ allow: true, source: 'agent-override' });
  });
});
